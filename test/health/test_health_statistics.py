"""
The health graph's statistics (graphs/health_graph.py, run with onnxruntime) against the node's.

On the shipped clip and road frames the graph's statistics equal image_figures' within stated
tolerances and give the same judged figures; on the labelled degradation trials
(health/degradation.py) the camera's reports from the graph's statistics are today's, and the
clean clip raises nothing.
"""
from __future__ import annotations

from pathlib import Path
from typing import Callable

import cv2
import numpy as np
import onnxruntime
import pytest

from support.checkout import shared_path
from triton_perception.graphs import build_health_graph, FRAME_INPUT
from triton_perception.health import (figures_from_statistics, frame_figures, FrameFigures,
                                      GRAPH_OPTIONS)
from triton_perception.health.degradation import degradations, noisy, run_trials, video_frames
from triton_perception.health.frame_statistics import statistics_pieces, STATISTICS_SIZE
from triton_perception.health.image_figures import region_contrast, small_grey, TEXTURE_LEVEL
from triton_perception.parameters import HEALTH, HealthSettings

SETTINGS = HealthSettings.from_values(HEALTH, {})
# Tolerances, from the worst differences measured on the 227 frames (clip and road frames):
# a region's contrast moves by up to 0.041 level where an area average lies on a half level
# (float sums in another order round it the other way: 3 of 392,256 averages); the spreads
# differ by float rounding (worst 0.0007 and 0.00017 levels), the fractions not at all.
CONTRAST_TOLERANCE = 0.06
SPREAD_TOLERANCE = 0.002
SHARPNESS_RELATIVE = 1e-4


@pytest.fixture(scope='module')
def statistics(tmp_path_factory: pytest.TempPathFactory) -> Callable[[np.ndarray], np.ndarray]:
    """Return a function giving the health graph's output for a frame (onnxruntime, CPU)."""
    path = tmp_path_factory.mktemp('health_graph') / 'health.onnx'
    build_health_graph(path, **GRAPH_OPTIONS)
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 1
    session = onnxruntime.InferenceSession(str(path), options,
                                           providers=['CPUExecutionProvider'])

    def run(frame: np.ndarray) -> np.ndarray:
        output: np.ndarray = session.run(None, {FRAME_INPUT: np.ascontiguousarray(frame)})[0]
        return output
    return run


@pytest.fixture(scope='module')
def clip() -> list[np.ndarray]:
    """Return the highway clip's frames as RGB (960x540)."""
    return video_frames(str(shared_path('data', 'videos', 'solidWhiteRight.mp4')))


def road_frames() -> list[np.ndarray]:
    """Return the shared road frames as RGB at their own size (1280x720)."""
    return [cv2.cvtColor(cv2.imread(str(path)), cv2.COLOR_BGR2RGB)
            for path in sorted(shared_path('data', 'road', 'bdd').glob('*.jpg'))]


def graph_figures(statistics: Callable[[np.ndarray], np.ndarray]) -> Callable[
        [np.ndarray], FrameFigures]:
    """Return the figures of a frame as the node would make them from the graph's output."""
    return lambda frame: figures_from_statistics(statistics(frame))


def test_the_statistics_equal_the_nodes_on_the_clip_and_road_frames(
        statistics: Callable[[np.ndarray], np.ndarray], clip: list[np.ndarray]) -> None:
    """Each statistic within its tolerance; blocked, dark and glare exactly today's."""
    frames = [*clip, *road_frames()]
    assert len(frames) > 220
    for index, frame in enumerate(frames):
        output = statistics(frame)
        assert output.shape == (STATISTICS_SIZE,) and output.dtype == np.float32
        pieces = statistics_pieces(output)
        grey = small_grey(frame)
        contrast = region_contrast(grey).reshape(-1)
        np.testing.assert_allclose(pieces['contrast'], contrast, rtol=0,
                                   atol=CONTRAST_TOLERANCE, err_msg=f'frame {index}')
        assert np.array_equal(pieces['contrast'] < TEXTURE_LEVEL, contrast < TEXTURE_LEVEL)
        _, edges = cv2.meanStdDev(cv2.Laplacian(grey, cv2.CV_16S, ksize=1))
        _, spread = cv2.meanStdDev(grey)
        assert abs(pieces['edge_spread'][0] - edges[0, 0]) <= SPREAD_TOLERANCE, index
        assert abs(pieces['grey_spread'][0] - spread[0, 0]) <= SPREAD_TOLERANCE, index
        today, graph = frame_figures(frame), figures_from_statistics(output)
        assert graph.blocked_fraction == today.blocked_fraction, index
        assert graph.dark_fraction == pytest.approx(today.dark_fraction, abs=1e-6)
        assert graph.glare_fraction == pytest.approx(today.glare_fraction, abs=1e-6)
        assert graph.sharpness == pytest.approx(today.sharpness, rel=SHARPNESS_RELATIVE)


def test_the_digest_tells_frames_apart_as_the_crc_does(
        statistics: Callable[[np.ndarray], np.ndarray], clip: list[np.ndarray]) -> None:
    """Equal for a repeated frame, changed by one pixel of the small copy and by the next frame."""
    def digest(frame: np.ndarray) -> int:
        return figures_from_statistics(statistics(frame)).digest
    frame = clip[0]
    assert digest(frame) == digest(frame.copy())
    touched = frame.copy()
    touched[100, 100, 1] ^= 1  # (100, 100) is in the small copy: every 4th row and column
    assert digest(touched) != digest(frame)
    digests = [digest(item) for item in clip[:60]]
    crcs = [frame_figures(item).digest for item in clip[:60]]
    assert [a == b for a, b in zip(digests, digests[1:])] == [
        a == b for a, b in zip(crcs, crcs[1:])]


def test_bad_statistics_fail_with_one_line() -> None:
    """Another graph's output is refused, saying what was expected."""
    with pytest.raises(ValueError, match=f'expected {STATISTICS_SIZE}'):
        figures_from_statistics(np.zeros(7, np.float32))


@pytest.mark.parametrize('camera', ['clip', 'road'])
def test_the_trials_report_as_today_from_the_graphs_statistics(
        statistics: Callable[[np.ndarray], np.ndarray], clip: list[np.ndarray],
        camera: str) -> None:
    """Every fault and the clean camera: same delay, clearing, false alarms and conditions."""
    source = ((lambda index: clip[index % len(clip)]) if camera == 'clip' else noisy(
        [cv2.resize(road_frames()[-1], (960, 540), interpolation=cv2.INTER_AREA)]))
    faults = [None, *degradations()] if camera == 'clip' else [
        fault for fault in degradations() if fault.image is not None or fault.repeat]
    for fault in faults:
        # One camera, two checks fed the same frames: the node's figures and the graph's.
        today, graph = run_trials(SETTINGS, source, fault, 0,
                                  [frame_figures, graph_figures(statistics)])
        assert graph == today, (fault, graph, today)
        if fault is None:
            assert graph.false_alarm_s == 0.0 and graph.raised == frozenset(), graph


def test_the_statistics_order_is_the_graphs(tmp_path: Path) -> None:
    """A name the graph does not make is refused when the graph is built."""
    options = {**GRAPH_OPTIONS, 'order': (('contrast', 48), ('brightness', 1))}
    with pytest.raises(ValueError, match='no health statistic called brightness'):
        build_health_graph(tmp_path / 'health.onnx', **options)  # type: ignore[arg-type]


@pytest.mark.parametrize('size', [(1, 1), (2, 3), (1, 500), (2160, 3840)])
def test_frames_at_the_ends_of_the_frame_range_give_finite_statistics(
        statistics: Callable[[np.ndarray], np.ndarray], size: tuple[int, int]) -> None:
    """From 1x1 to 4K the graph runs and gives finite numbers (copies under 48x36 differ)."""
    frame = np.random.default_rng(0).integers(0, 256, (*size, 3), dtype=np.uint8)
    output = statistics(frame)
    assert output.shape == (STATISTICS_SIZE,) and np.isfinite(output).all()
    graph = figures_from_statistics(output)
    assert graph.dark_fraction == pytest.approx(frame_figures(frame).dark_fraction, abs=1e-6)
