"""
perception_process: every camera's nodes in one process, each camera's frames taken once.

Real Fast DDS, real tritonserver, real weights. Two cameras share one process; one camera's
bad frames (another size, garbage encodings) and one node's deactivation must not touch the
other camera or the other node. The single process and the per-node layout publish the same
detections for the same bag.
"""
from __future__ import annotations

from pathlib import Path
import time
from typing import Any, Callable, Iterator

from diagnostic_msgs.msg import DiagnosticArray
import numpy as np
import pytest
from sensor_msgs.msg import Image, PointCloud2
from vision_msgs.msg import Detection2DArray

from support.highway_clip import clip_bag
from support.perception_nodes import image_message, latest_diagnostics
from support.ros_helpers import Probe, wait_until
from triton_perception.evaluation.evaluation import evaluate, EvaluationSettings
from triton_perception.evaluation.figures import detection_labels
from triton_perception.evaluation.metrics.replay_outputs import read_outputs
from triton_perception.outputs.result_messages import detections_from_message, lanes_from_cloud
from triton_perception.system.processes import NodeProcess, ros_arguments

pytestmark = [pytest.mark.ros, pytest.mark.server]
PUBLISH_PERIOD_S = 0.1  # until the first result: a frame may go before the reader matched
# The prioritised process's cameras (names of their own: the two-camera process runs beside).
CAMERAS = ('first', 'second', 'third')


@pytest.fixture(scope='module')
def two_cameras(triton_server: Any, tmp_path_factory: Any) -> Iterator[NodeProcess]:
    """Start a perception_process for a front and a rear camera; it must exit with 0."""
    process = NodeProcess(
        'perception_process',
        ['--camera=/front=/front/image_raw', '--camera=/rear=/rear/image_raw', '--no-overlay',
         *ros_arguments({'triton_url': triton_server.grpc_url, 'qos_reliability': 'reliable',
                         'diagnostics_period_s': 0.2})],
        tmp_path_factory.mktemp('perception_process'))
    yield process
    pid = process.pid
    assert process.stop() == 0, process.output()
    assert shared_memory_of(pid) == [], 'a clean stop unlinks every shared-memory region'


def shared_memory_of(pid: int) -> list[str]:
    """Return the names of the shared-memory regions process `pid` holds in /dev/shm."""
    return sorted(path.name for path in Path('/dev/shm').glob(f'triton_perception_*_{pid}_*'))


def publish_until(done: Callable[[], bool], publisher: Any, message: Image, what: str) -> None:
    """Publish `message` every PUBLISH_PERIOD_S until `done()`, failing after a minute."""
    deadline = time.monotonic() + 60.0
    while not done():
        assert time.monotonic() < deadline, f'timed out after 60 s waiting for {what}'
        publisher.publish(message)
        time.sleep(PUBLISH_PERIOD_S)


def frame(rgb: np.ndarray, stamp_s: int, encoding: str = 'rgb8') -> Image:
    """Return `rgb` as an Image in `encoding`, stamped `stamp_s` s."""
    return image_message(rgb, encoding, 'camera', stamp_s)


def test_each_camera_has_its_own_nodes_fed_by_one_subscription(
        probe: Probe, two_cameras: NodeProcess, road_rgb: np.ndarray) -> None:
    """Each camera has its own detection and lane nodes, fed by one subscription per camera."""
    front = probe.publisher(Image, '/front/image_raw')
    rear = probe.publisher(Image, '/rear/image_raw')
    probe.wait_for_subscribers(front, 1, timeout_s=120.0)
    probe.wait_for_subscribers(rear, 1, timeout_s=120.0)
    time.sleep(1.0)  # a second subscription would have matched by now
    assert front.get_subscription_count() == 1 and rear.get_subscription_count() == 1
    detections = probe.record(Detection2DArray, '/front/detections')
    publish_until(lambda: bool(detections), front, frame(road_rgb, 10), 'front detections')
    names = set(probe.node.get_node_names_and_namespaces())
    assert {('detection_node', '/front'), ('lane_node', '/front'), ('detection_node', '/rear'),
            ('lane_node', '/rear'), ('perception_process', '/')} <= names


def test_a_cameras_frame_is_written_once_for_both_models(
        probe: Probe, two_cameras: NodeProcess, road_rgb: np.ndarray) -> None:
    """
    Both models of a camera read its frames from the camera's regions, not their own.

    The lane runs come back through a region of each joined request thread (perception).
    """
    front = probe.publisher(Image, '/front/image_raw')
    detections = probe.record(Detection2DArray, '/front/detections')
    lanes = probe.record(PointCloud2, '/front/lanes')
    publish_until(lambda: bool(detections and lanes), front, frame(road_rgb, 50),
                  'front detections and lanes')
    regions = shared_memory_of(two_cameras.pid)
    frame_regions = [name for name in regions if name.startswith('triton_perception_frames_')]
    output_regions = [name for name in regions
                      if name.startswith('triton_perception_perception_outputs_')]
    assert frame_regions and output_regions, regions
    assert len(frame_regions) + len(output_regions) == len(regions), regions


def test_one_cameras_bad_frames_leave_the_other_untouched(
        probe: Probe, two_cameras: NodeProcess, road_rgb: np.ndarray) -> None:
    """
    One camera's frames of another size and garbage encodings leave the other camera untouched.

    The other camera rejects and fails nothing, and the smaller frames are served too, in the
    same requests as the other camera's whenever both have a frame waiting.
    """
    diagnostics = probe.received.get('/diagnostics') or probe.record(DiagnosticArray,
                                                                     '/diagnostics')
    front = probe.publisher(Image, '/front/image_raw')
    rear = probe.publisher(Image, '/rear/image_raw')
    front_results = probe.record(Detection2DArray, '/front/detections')
    rear_results = probe.record(Detection2DArray, '/rear/detections')
    small = np.ascontiguousarray(road_rgb[::3, ::3])
    for index in range(20):
        garbage = frame(road_rgb, 100 + index)
        garbage.encoding = 'no_such_encoding'
        rear.publish(garbage if index % 2 else frame(small, 100 + index))
        front.publish(frame(road_rgb, 200 + index))
        time.sleep(0.15)

    def settled() -> bool:
        status = latest_diagnostics(diagnostics, '/front/detection_node')
        rear_status = latest_diagnostics(diagnostics, '/rear/detection_node')
        return bool(status and rear_status and int(rear_status['rejected']) >= 10
                    and int(status['pending']) == 0 and front_results)
    wait_until(settled, 60.0, "both cameras' accounting")
    front_status = latest_diagnostics(diagnostics, '/front/detection_node')
    assert front_status is not None
    assert int(front_status['rejected']) == 0 and int(front_status['failed']) == 0
    assert any(message.header.stamp.sec >= 200 for message in front_results)
    assert any(message.header.stamp.sec >= 100 for message in rear_results), \
        'the smaller frames of the rear camera are served too'
    assert int(front_status['batched_requests']) >= 1, \
        "the two cameras' frames, of two sizes, went in one request while both were waiting"


def test_deactivating_a_lane_node_leaves_the_same_cameras_detections(
        probe: Probe, two_cameras: NodeProcess, road_rgb: np.ndarray) -> None:
    """Deactivating a camera's lane node leaves its detection node subscribed and answering."""
    front = probe.publisher(Image, '/front/image_raw')
    detections = probe.record(Detection2DArray, '/front/detections')
    assert probe.change_state('/front/lane_node', 'deactivate')
    try:
        publish_until(lambda: any(message.header.stamp.sec == 300 for message in detections),
                      front, frame(road_rgb, 300), 'front detections with its lane node inactive')
        assert front.get_subscription_count() == 1, 'the detection node still takes the camera'
    finally:
        assert probe.change_state('/front/lane_node', 'activate')


@pytest.mark.slow
def test_both_layouts_publish_the_same_detections(shared: Path, triton_server: Any,
                                                  tmp_path: Path) -> None:
    """The same bag through perception_process and through one process per node."""
    bag = clip_bag(shared, tmp_path, 24)
    outputs = {}
    for layout in ('single', 'per_node'):
        report = evaluate(EvaluationSettings(
            bag=bag, output=tmp_path / layout, triton_url=triton_server.grpc_url,
            timing='lockstep', process_layout=layout), log=print)
        outputs[layout] = read_outputs(Path(report['outputs_bag']), detection_labels(None))
    single, per_node = outputs['single'], outputs['per_node']
    common = sorted(set(single.detections) & set(per_node.detections))
    assert len(common) >= 12, (len(single.detections), len(per_node.detections))
    for stamp in common:
        assert np.array_equal(single.detections[stamp][:, :4], per_node.detections[stamp][:, :4])
        np.testing.assert_allclose(single.detections[stamp][:, 4:],
                                   per_node.detections[stamp][:, 4:], atol=1e-6)
    lanes = sorted(set(single.lanes) & set(per_node.lanes))
    assert len(lanes) >= 6, (len(single.lanes), len(per_node.lanes))
    for stamp in lanes:
        assert len(single.lanes[stamp]) == len(per_node.lanes[stamp])
        for ours, theirs in zip(single.lanes[stamp], per_node.lanes[stamp]):
            np.testing.assert_allclose(ours, theirs, atol=1e-3)


@pytest.mark.slow
def test_each_camera_gets_what_one_process_per_node_gives(
        probe: Probe, two_cameras: NodeProcess, road_rgb: np.ndarray, triton_server: Any,
        tmp_path: Path) -> None:
    """Per camera, the single process publishes what detection_node and lane_node publish alone."""
    cameras = ('front', 'rear')
    parameters = {'triton_url': triton_server.grpc_url, 'qos_reliability': 'reliable'}
    per_node = [NodeProcess(executable,
                            [*ros_arguments(parameters, f'/per_node/{camera}'),
                             '-r', f'image:=/{camera}/image_raw'], tmp_path)
                for camera in cameras for executable in ('detection_node', 'lane_node')]
    try:
        results = {(layout, camera, kind): probe.record(message_type, f'{prefix}/{kind}')
                   for camera in cameras
                   for layout, prefix in (('single', f'/{camera}'),
                                          ('per_node', f'/per_node/{camera}'))
                   for kind, message_type in (('detections', Detection2DArray),
                                              ('lanes', PointCloud2))}
        publishers = [probe.publisher(Image, f'/{camera}/image_raw') for camera in cameras]
        for publisher in publishers:
            probe.wait_for_subscribers(publisher, 3, timeout_s=120.0)
        for index in range(4):
            stamp = 400 + index
            image = np.ascontiguousarray(np.roll(road_rgb, 60 * index, axis=1))

            def answered(stamp: int = stamp) -> bool:
                return all(any(message.header.stamp.sec == stamp for message in messages)
                           for messages in results.values())
            deadline = time.monotonic() + 60.0
            while not answered():
                assert time.monotonic() < deadline, (
                    f'timed out waiting for frame {stamp} on ' + ', '.join(
                        '/'.join(key) for key, messages in results.items()
                        if not any(message.header.stamp.sec == stamp for message in messages)))
                for publisher in publishers:
                    publisher.publish(frame(image, stamp))
                time.sleep(0.3)
        labels = detection_labels(None)
        for camera in cameras:
            for stamp in range(400, 404):
                def first(layout: str, kind: str, stamp: int = stamp) -> Any:
                    return next(message for message in results[(layout, camera, kind)]
                                if message.header.stamp.sec == stamp)
                single = detections_from_message(first('single', 'detections'), labels)
                alone = detections_from_message(first('per_node', 'detections'), labels)
                np.testing.assert_array_equal(single, alone, err_msg=f'{camera} {stamp}')
                single_lanes, single_sides = lanes_from_cloud(first('single', 'lanes'))
                alone_lanes, alone_sides = lanes_from_cloud(first('per_node', 'lanes'))
                assert len(single_lanes) == len(alone_lanes) >= 1, (camera, stamp)
                np.testing.assert_array_equal(single_sides, alone_sides)
                for ours, theirs in zip(single_lanes, alone_lanes):
                    np.testing.assert_allclose(ours, theirs, atol=1e-3)
    finally:
        for process in per_node:
            assert process.stop() == 0, process.output()


@pytest.fixture(scope='module')
def prioritised(triton_server: Any, tmp_path_factory: Any) -> Iterator[NodeProcess]:
    """Three cameras, one request at a time for the process, the first camera always first."""
    process = NodeProcess(
        'perception_process',
        [*(f'--camera=/{name}=/{name}/image_raw' for name in CAMERAS),
         '--no-overlay', '--camera-priorities=/first=always', '--max-requests=1',
         *ros_arguments({'triton_url': triton_server.grpc_url, 'qos_reliability': 'reliable',
                         'diagnostics_period_s': 0.2})],
        tmp_path_factory.mktemp('prioritised'))
    yield process
    assert process.stop() == 0, process.output()


def test_under_overload_the_always_camera_is_served_first(
        probe: Probe, prioritised: NodeProcess, road_rgb: np.ndarray) -> None:
    """
    One request at a time for three cameras at 10 Hz overloads the process on purpose.

    The policy, not chance, picks what is served: the `always` camera gets the turns, and every
    camera's frames add up in /diagnostics (received = published + dropped + failed +
    rejected) with the drops' reasons.
    """
    diagnostics = probe.received.get('/diagnostics') or probe.record(DiagnosticArray,
                                                                     '/diagnostics')
    publishers = {name: probe.publisher(Image, f'/{name}/image_raw')
                  for name in CAMERAS}
    front_results = probe.record(Detection2DArray, '/first/detections')
    for publisher in publishers.values():
        probe.wait_for_subscribers(publisher, 1, timeout_s=120.0)
    publish_until(lambda: bool(front_results), publishers['first'], frame(road_rgb, 1),
                  'the first front detections')
    for index in range(60):
        for publisher in publishers.values():
            publisher.publish(frame(road_rgb, 1000 + index))
        time.sleep(0.1)

    def statuses() -> dict[str, dict[str, str]] | None:
        found = {name: latest_diagnostics(diagnostics, f'/{name}/detection_node')
                 for name in publishers}
        if any(values is None or int(values['pending']) for values in found.values()):
            return None
        return {name: values for name, values in found.items() if values is not None}
    found = wait_until(statuses, 60.0, 'every camera settled')
    assert all('gate_served' in values for values in found.values()), found
    served = {name: int(values['gate_served']) for name, values in found.items()}
    assert found['first']['gate_priority'] == 'always'
    assert found['second']['gate_priority'] == 'round-robin'
    assert served['first'] > served['second'] and served['first'] > served['third'], served
    for name, values in found.items():
        fates = ('published', 'dropped', 'failed', 'rejected')
        settled = sum(int(values[fate]) for fate in fates)
        assert int(values['received']) == settled, (name, values)
        reasons = [int(count) for key, count in values.items()
                   if key.startswith('count dropped: ')]
        assert int(values['dropped']) == sum(reasons), values
