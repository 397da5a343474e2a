"""
The lane graph's runs decode to the lanes the full maps gave, with no per-pixel work in the node.

Both decodings run on one served-graph run per frame (the shipped weights, onnxruntime, as the
CPU profile's step): lane_geometry.postprocess on the two uint8 maps, as lane_node did, and
run_decoding.postprocess_runs on the runs and the graph's frame-size drivable area, as it does now.
On the road frames and every frame of the highway clip: lane points within 2 px at the frame's
size, the same sides, drivable areas agreeing on at least 99.5 % of pixels.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest

from support.checkout import shared_path
from support.point_lanes import point_lanes
from support.served_graphs import served_lane_graph, session
from triton_perception.graphs import MAX_RUNS
from triton_perception.graphs.graph_editing import GraphBuilder, save_graph
from triton_perception.graphs.lane_runs import add_lane_runs
from triton_perception.graphs.onnx_target import make_model
from triton_perception.lanes import lane_geometry as geometry
from triton_perception.lanes.run_decoding import dropped_runs, postprocess_runs, run_pieces

NUM_POINTS = 20
POINT_TOLERANCE_PX = 2.0
DRIVABLE_AGREEMENT = 0.995
OUTPUTS = ['lane_probability', 'drivable_margin', 'lane_runs', 'lane_run_counts',
           'drivable_area']


def road_and_clip_frames() -> list[tuple[str, np.ndarray]]:
    """Return the shipped road frames and every frame of the highway clip, RGB."""
    frames = [(path.name, cv2.cvtColor(cv2.imread(str(path)), cv2.COLOR_BGR2RGB))
              for path in sorted(shared_path('data', 'road', 'bdd').glob('*.jpg'))]
    capture = cv2.VideoCapture(str(shared_path('data', 'videos', 'solidWhiteRight.mp4')))
    while True:
        ok, frame = capture.read()
        if not ok:
            break
        frames.append((f'clip {len(frames)}', cv2.cvtColor(frame, cv2.COLOR_BGR2RGB)))
    return frames


def runs_graph(directory: Path, height: int, width: int) -> Any:
    """Return a session of add_lane_runs alone: float levels [h, w] in, runs out."""
    import onnx
    from onnx import helper, TensorProto
    graph = helper.make_graph([], 'runs', [helper.make_tensor_value_info(
        'levels', TensorProto.FLOAT, [height, width])], [])
    builder = GraphBuilder(make_model(graph, 12), 'runs')
    names = add_lane_runs(builder, 'levels', height, width)
    builder.set_outputs([(names[0], TensorProto.INT32, [height, MAX_RUNS, 3]),
                         (names[1], TensorProto.INT32, [height])])
    path = directory / 'runs.onnx'
    save_graph(builder.model, path)
    onnx.checker.check_model(str(path))
    return session(path, 'lane_model')


def test_runs_give_the_pixels_pieces(tmp_path: Path) -> None:
    """Random blobs: the runs' pieces equal the connected components'; overflow is counted."""
    height, width = 48, 64
    runner = runs_graph(tmp_path, height, width)
    generator = np.random.default_rng(48)
    for _ in range(20):
        noise = cv2.GaussianBlur(generator.random((height, width)), (0, 0), 1.5)
        on = noise > np.quantile(noise, 0.7)
        levels = np.where(on, generator.integers(128, 256, noise.shape),
                          generator.integers(0, 128, noise.shape)).astype(np.uint8)
        runs, counts = runner.run({'levels': levels.astype(np.float32)},
                                  ['lane_runs', 'lane_run_counts'])
        expected = geometry.lane_pieces(levels)
        found = run_pieces(runs, counts)
        assert len(found) == len(expected)
        for mine, theirs in zip(sorted(found, key=lambda p: (p.y[0], p.x[0])),
                                sorted(expected, key=lambda p: (p.y[0], p.x[0]))):
            np.testing.assert_allclose(mine.y, theirs.y)
            np.testing.assert_allclose(mine.x, theirs.x)
            assert (mine.pixels, mine.probability_sum) == pytest.approx(
                (theirs.pixels, theirs.probability_sum))
    comb = np.zeros((height, width), np.float32)
    comb[3, ::2] = 200.0  # 32 one-pixel runs in one row
    runs, counts = runner.run({'levels': comb}, ['lane_runs', 'lane_run_counts'])
    assert counts[3] == width // 2 and dropped_runs(counts, MAX_RUNS) == width // 2 - MAX_RUNS
    assert list(runs[3, :, 0]) == list(range(0, 2 * MAX_RUNS, 2))


@pytest.fixture(scope='module')
def compared(tmp_path_factory: pytest.TempPathFactory
             ) -> dict[str, tuple[float, float, int, float]]:
    """
    Per frame: lane and drivable agreement with the maps' decoding, and with the points'.

    The worst lane point distance (px), the drivable agreement, the runs dropped, and the worst
    distance of the power sums' lanes from the point-by-point reference's (px).
    """
    runner = session(served_lane_graph(tmp_path_factory.mktemp('lanes')), 'lane_model')
    figures = {}
    for name, frame in road_and_clip_frames():
        probability, margin, runs, counts, area = runner.run({'image': frame}, OUTPUTS)
        before = geometry.postprocess(probability, margin, frame.shape[:2], NUM_POINTS, 0.1)
        after = postprocess_runs(runs, counts, area, probability.shape[1], frame.shape[:2],
                                 NUM_POINTS, 0.1)
        assert after.drivable_area is not None and before.drivable_area is not None
        assert after.drivable_area.shape == frame.shape[:2], name
        assert list(after.sides) == list(before.sides), name
        distance = float(np.abs(after.lanes - before.lanes).max()) if len(before.lanes) else 0.0
        agreement = float(np.mean(after.drivable_area == before.drivable_area))
        pieces = run_pieces(runs, counts)
        reference = point_lanes(pieces, (runs.shape[0], probability.shape[1]), frame.shape[:2],
                                NUM_POINTS, 0.1)
        assert list(after.sides) == list(reference.sides), name
        np.testing.assert_allclose(after.scores, reference.scores, rtol=1e-6, err_msg=name)
        from_points = (float(np.abs(after.lanes - reference.lanes).max())
                       if len(reference.lanes) else 0.0)
        figures[name] = (distance, agreement, dropped_runs(counts, MAX_RUNS), from_points)
    return figures


def test_runs_decode_to_todays_lanes(compared: dict[str, tuple[float, float, int, float]]
                                     ) -> None:
    """Lane points within 2 px, the same sides (checked per frame) and drivable area >= 99.5 %."""
    worst_distance = max(compared.items(), key=lambda item: item[1][0])
    worst_agreement = min(compared.items(), key=lambda item: item[1][1])
    print(f'\n{len(compared)} frames: worst lane point {worst_distance[1][0]:.4f} px '
          f'({worst_distance[0]}), worst drivable agreement {worst_agreement[1][1]:.6f} '
          f'({worst_agreement[0]}), runs dropped {sum(f[2] for f in compared.values())}')
    assert len(compared) == 6 + 221
    assert worst_distance[1][0] <= POINT_TOLERANCE_PX, worst_distance
    assert worst_agreement[1][1] >= DRIVABLE_AGREEMENT, worst_agreement


def test_power_sums_give_the_point_fits_lanes(
        compared: dict[str, tuple[float, float, int, float]]) -> None:
    """On every road and clip frame: the same lanes, sides and scores as fitting the points."""
    worst = max(compared.items(), key=lambda item: item[1][3])
    assert worst[1][3] <= 1e-6, worst
