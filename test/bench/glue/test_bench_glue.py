"""
`triton-perception bench --glue`: constant graphs, the floor node, and a short run end to end.

The graphs must keep the served contracts (or the nodes would fail, not be measured) and give
the nodes real work (detections to publish, lanes to decode). The end-to-end run is the
command as users run it, its own process with its own tritonserver on the constant graphs, with
one camera and a 2 s window in every layout: the report's shape, and every frame accounted for,
from the nodes' /diagnostics and from the bench's side alike.
"""
from __future__ import annotations

import json
from pathlib import Path
import subprocess
import sys

import numpy as np
import onnxruntime as ort
import pytest

from support.checkout import REPO
from triton_perception.bench.glue.constant_graphs import (constant_repository,
                                                          detection_graph, FIXED_DETECTIONS,
                                                          lane_graph)
from triton_perception.bench.glue.glue_cases import glue_cases, node_accounting
from triton_perception.bench.glue.glue_report import glue_table, targets
from triton_perception.bench.session.cases import start_processes
from triton_perception.frames.diagnostics import NodeStatus
from triton_perception.lanes.lane_geometry import postprocess

CLI = str(Path(sys.executable).parent / 'triton-perception')
CASE_KEYS = ('layout', 'models', 'cameras', 'processes', 'frames_published', 'frames_sent',
             'cpu_ms_per_frame', 'server_cpu_ms_per_frame', 'rss_mib', 'rss_per_camera_mib',
             'triton_request_ms', 'e2e_latency_ms', 'added_latency_ms', 'results_timed',
             'accounting', 'frames_lost', 'frames_without_result', 'accounted',
             'results_missing_at_bench', 'load_average_1min', 'input_hz_per_camera',
             'served_share', 'bench_cpu_ms_per_frame')


def session(model: object) -> ort.InferenceSession:
    """Return an onnxruntime CPU session of the in-memory `model`."""
    return ort.InferenceSession(model.SerializeToString(),  # type: ignore[attr-defined]
                                providers=['CPUExecutionProvider'])


def test_constant_graphs_keep_the_served_contracts_and_give_real_results() -> None:
    """The constant graphs take the served inputs and give fixed boxes and two decodable lanes."""
    frame = np.zeros((540, 960, 3), np.uint8)
    detections = session(detection_graph())
    assert [tensor.name for tensor in detections.get_inputs()] == [
        'image', 'score_threshold', 'iou_threshold', 'max_detections']
    rows, count = detections.run(['detections', 'num_detections'], {
        'image': frame, 'score_threshold': np.array([0.25], np.float32),
        'iou_threshold': np.array([0.45], np.float32),
        'max_detections': np.array([100], np.int32)})
    assert rows.shape == (300, 6) and rows.dtype == np.float32
    assert count.dtype == np.int32 and count[0] == len(FIXED_DETECTIONS)
    np.testing.assert_array_equal(rows[:count[0]], FIXED_DETECTIONS)
    capped = detections.run(['num_detections'], {
        'image': frame[:10, :10], 'score_threshold': np.array([0.25], np.float32),
        'iou_threshold': np.array([0.45], np.float32), 'max_detections': np.array([3], np.int32)})
    assert capped[0][0] == 3

    lanes = session(lane_graph())
    probability, margin = lanes.run(['lane_probability', 'drivable_margin'], {'image': frame})
    assert probability.shape == margin.shape == (360, 640) and probability.dtype == np.uint8
    result = postprocess(probability, margin, (540, 960), 20, 0.1)
    assert len(result.lanes) == 2 and sorted(result.sides.tolist()) == [-1, 1]
    assert result.drivable_area is not None and result.drivable_area.any()


def test_constant_repository_replaces_only_the_model_steps(tmp_path: Path) -> None:
    """The copy swaps each step's model.onnx for a small constant one; configs stay as served."""
    copy = constant_repository(REPO / 'model_repository', tmp_path / 'repository')
    for step in ('yolov5_model', 'lane_model'):
        assert (copy / step / '1' / 'model.onnx').stat().st_size < 2_000_000
        assert (copy / step / 'configs' / 'cpu.pbtxt').read_text() == (
            REPO / 'model_repository' / step / 'configs' / 'cpu.pbtxt').read_text()
        assert (copy / step / '1' / 'model.py').resolve().is_file()
    assert not list(copy.rglob('*.onnx.json'))


def test_cases_put_the_floor_first_and_run_detections_alone_only_with_one_camera() -> None:
    """The floor comes first for each camera count; detections alone run only for one camera."""
    names = [case.name for case in glue_cases((1, 4))]
    assert names == ['floor_det_1cam', 'floor_serialized_det_1cam', 'per_node_det_1cam',
                     'single_det_1cam', 'per_node_both_1cam', 'single_both_1cam',
                     'single_events_both_1cam', 'floor_det_4cam', 'per_node_both_4cam',
                     'single_both_4cam', 'groups_of_2_both_4cam', 'per_camera_both_4cam']


def test_grouped_layouts_run_a_perception_process_per_group_of_cameras(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """
    With 4 cameras: 1 process, 2 (groups of 2) and 4 (per camera); every camera taken once.

    The plan's processes are collected, not started.
    """
    started: list[tuple[str, tuple[str, ...]]] = []

    class Recorded:
        """A NodeProcess that records its command instead of starting it."""

        def __init__(self, executable: str, arguments: list[str], *_: object,
                     **__: object) -> None:
            started.append((executable, tuple(arguments)))

    monkeypatch.setattr('triton_perception.bench.session.cases.NodeProcess', Recorded)
    counts = {}
    for case in glue_cases((4,)):
        if case.floor:
            continue
        started.clear()
        start_processes(case, '127.0.0.1:1', '/glue', tmp_path, [])
        counts[case.layout] = len(started)
        if case.layout != 'per_node':
            assert {executable for executable, _ in started} == {'perception_process'}
            # A camera is `--camera=NAMESPACE=IMAGE=INFO`, or with one per process `image:=`.
            images = [argument.split('=')[2] if argument.startswith('--camera=')
                      else argument.split(':=')[1] for _, arguments in started
                      for argument in arguments
                      if argument.startswith(('--camera=', 'image:='))]
            assert sorted(images) == [f'/glue/cam{index}/image' for index in range(4)], images
    assert counts == {'per_node': 12, 'single': 1, 'groups_of_2': 2, 'per_camera': 4}


def test_targets_judge_the_four_camera_layouts_at_1280x720_only() -> None:
    """The served target needs 99 %, nothing lost, 1 GB, and frames of 1280x720 or more."""
    def figures(layout: str, cameras: int, frame: str, **values: object) -> dict[str, object]:
        return {'layout': layout, 'models': 'detections+lanes', 'cameras': cameras,
                'frame': frame, 'processes': 1, 'cpu_ms_per_frame': 6.0, 'rss_mib': 500.0,
                'rss_per_camera_mib': 500.0 / cameras,
                'added_latency_ms': {'p50': 1.0, 'p99': 2.0}, 'triton_request_ms': {},
                'input_hz_per_camera': 30.0, 'served_share': 0.995, 'frames_sent': 10,
                'frames_lost': 0, 'frames_without_result': 0, 'accounted': True, **values}

    cases = {'floor_det_1cam': figures('floor', 1, '960x540', cpu_ms_per_frame=5.0),
             'floor_serialized_det_1cam': figures('floor_serialized', 1, '960x540',
                                                  cpu_ms_per_frame=3.0),
             'single_both_1cam': figures('single', 1, '960x540'),
             'single_both_4cam': figures('single', 4, '1280x720', served_share=0.75),
             'per_camera_both_4cam': figures('per_camera', 4, '1280x720', rss_mib=960.0),
             'groups_of_2_both_4cam': figures('groups_of_2', 4, '1280x720')}
    result = targets(cases)
    assert result['cpu_both_1cam_single'] == {
        'frame': '960x540', 'ratio_to_floor': 1.2, 'ratio_to_floor_serialized': 2.0,
        'limit': 1.5, 'goal': 1.2, 'met': False}  # judged against the serialized floor
    assert not result['served_4cam_single']['met']
    assert not result['served_4cam_per_camera']['met']  # 1007 MB
    assert result['served_4cam_groups_of_2']['met']
    cases['groups_of_2_both_4cam']['frame'] = '960x540'
    assert not targets(cases)['served_4cam_groups_of_2']['met']
    table = glue_table({'cases': cases, 'targets': result,
                        'settings': {'frame': [1280, 720, 'bgr8']}})
    assert '| groups_of_2 (a perception_process per 2 cameras) |' in table
    assert '- served_4cam_groups_of_2: frame 1280x720, served 0.995' in table


def test_node_accounting_counts_lost_and_unseen_frames() -> None:
    """Frames a node never counted are lost, as are those lost before it; the sums balance."""
    status = NodeStatus({'received': '95', 'published': '90', 'dropped': '4', 'rejected': '0',
                         'failed': '0', 'pending': '1', 'lost_before_node': '3'})
    entry = node_accounting(status, 100)
    assert entry['unseen'] == 2 and entry['lost'] == 5 and entry['without_result'] == 5
    assert entry['balanced']
    assert node_accounting(None, 100)['lost'] is None


def test_glue_refuses_a_server_of_someone_elses() -> None:
    """The glue bench needs a server of its own (constant graphs), so --triton-url is refused."""
    completed = subprocess.run([CLI, 'bench', '--glue', '--triton-url', '127.0.0.1:1'],
                               capture_output=True, text=True, timeout=60,
                               stdin=subprocess.DEVNULL)
    assert completed.returncode == 2 and '--triton-url does not apply' in completed.stderr


@pytest.mark.server
@pytest.mark.ros
@pytest.mark.slow
def test_glue_bench_end_to_end(tmp_path: Path) -> None:
    """A short run in every layout reports each figure, and every frame is accounted for."""
    output = tmp_path / 'glue.json'
    completed = subprocess.run(
        [CLI, 'bench', '--glue', '--cameras', '1', '--duration', '2', '--warmup', '1', '--json',
         str(output)],
        capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
    assert completed.returncode == 0, completed.stderr[-4000:]

    report = json.loads(output.read_text(encoding='utf-8'))
    assert report['machine']['cores'] and report['machine']['profile'] == 'cpu'
    assert report['settings']['frame'] == [960, 540, 'bgr8']
    cases = report['cases']
    assert list(cases) == ['floor_det_1cam', 'floor_serialized_det_1cam', 'per_node_det_1cam',
                           'single_det_1cam', 'per_node_both_1cam', 'single_both_1cam',
                           'single_events_both_1cam']
    for name, figures in cases.items():
        assert set(CASE_KEYS) <= set(figures), (name, sorted(figures))
        assert figures['frames_published'] == 60, (name, figures['frames_published'])
        assert figures['frames_sent'] == 90, (name, figures['frames_sent'])
        assert figures['cpu_ms_per_frame'] > 0 and figures['rss_mib'] > 50, (name, figures)
        assert 0 < figures['added_latency_ms']['p50'] <= figures['added_latency_ms']['p99']
        # Triton's own time is taken out of the end-to-end latency, not added to it.
        assert figures['added_latency_ms']['p50'] < figures['e2e_latency_ms']['p50']
        assert figures['triton_request_ms']['yolov5'] > 0, (name, figures['triton_request_ms'])
        assert 0 < figures['served_share'] <= 1 and figures['input_hz_per_camera'] > 0, figures
    assert cases['floor_det_1cam']['accounting'] is None
    # The camera health check reports its own CPU where it runs (the floors have none).
    for name, figures in cases.items():
        if name.startswith('floor'):
            assert figures['health_check_cpu_ms_per_frame'] is None, name
        else:
            assert 0 < figures['health_check_cpu_ms_per_frame'] < figures['cpu_ms_per_frame']
            assert 0 < figures['health_check_cpu_share'] < 1, (name, figures)
    assert cases['floor_serialized_det_1cam']['accounting'] is None
    assert cases['per_node_both_1cam']['processes'] == 3  # the overlay node too
    assert cases['single_both_1cam']['processes'] == 1
    for name in ('per_node_det_1cam', 'single_det_1cam', 'per_node_both_1cam',
                 'single_both_1cam', 'single_events_both_1cam'):
        figures = cases[name]
        assert figures['accounted'], figures['accounting']
        nodes = figures['accounting']['cam0']
        assert set(nodes) == ({'detection_node'} if '_det_' in name
                              else {'detection_node', 'lane_node'})
        assert 'lane_detection' in figures['triton_request_ms'] or '_det_' in name
        for entry in nodes.values():
            assert entry['sent'] == 90
            assert entry['received'] + entry['lost_before_node'] + entry['unseen'] == 90, entry
            assert entry['received'] == (entry['published'] + entry['dropped'] + entry['rejected']
                                         + entry['failed'] + entry['pending']), entry
        # What the nodes' accounting says is missing is what the bench did not receive.
        assert figures['results_missing_at_bench'] == (
            figures['frames_lost'] + figures['frames_without_result']), figures
    assert cases['single_events_both_1cam']['processes'] == 1
    for layout in ('single', 'single_events', 'per_node'):
        assert report['targets'][f'cpu_both_1cam_{layout}']['ratio_to_floor'] > 0
        assert report['targets'][f'cpu_both_1cam_{layout}']['ratio_to_floor_serialized'] > 0
    assert '| layout | models | cameras |' in completed.stdout, completed.stdout
    assert 'cpu_both_1cam_single: frame 960x540, ratio_to_floor' in completed.stdout, \
        completed.stdout
