"""
The camera health check on its labelled set: detection, delay, false alarms and CPU per frame.

`triton-perception bench --camera-health [--shared ../shared]` runs every fault of
`health/degradation.py` on 10 cameras (the highway clip from 4 starts, and a still camera on
each of the 6 road frames), the clean cameras, and times the check on the clip's 960x540 frames:
the node's share with the per-pixel statistics in the node and with them read from the health
graph (graphs/health_graph.py, timed on its own in onnxruntime). With `--graph` it judges
the labelled set from the graph's statistics. It needs no ROS and no Triton;
docs/performance.md ("Camera health") holds its output.
"""
from __future__ import annotations

from pathlib import Path
import statistics
import tempfile
import time
from typing import Callable, Iterator, Sequence, TypeVar

import cv2
import numpy as np
from numpy.typing import NDArray

from triton_perception.bench.session import BenchError
from triton_perception.graphs import build_health_graph, FRAME_INPUT
from triton_perception.health import (CameraHealth, degradations, figures_from_statistics,
                                      frame_figures, FRAME_RATE_HZ, FrameFigures, GRAPH_OPTIONS,
                                      noisy, run_trial, Trial, video_frames)
from triton_perception.parameters import HEALTH, HealthSettings
from triton_perception.system import shared_directory

Measured = TypeVar('Measured')

CLIP_STARTS = (0, 50, 100, 150)
DETECTED_WITHIN_S = 1.0


def cameras(shared: Path) -> list[tuple[str, Callable[[int], NDArray[np.uint8]], int]]:
    """Return (name, frame source, first frame) of each camera of the set."""
    clip = video_frames(str(shared / 'data' / 'videos' / 'solidWhiteRight.mp4'))
    found: list[tuple[str, Callable[[int], NDArray[np.uint8]], int]] = [
        (f'clip from {start}', lambda index: clip[index % len(clip)], start)
        for start in CLIP_STARTS]
    for path in sorted((shared / 'data' / 'road' / 'bdd').glob('*.jpg')):
        rgb = cv2.cvtColor(cv2.imread(str(path)), cv2.COLOR_BGR2RGB)
        found.append((f'road {path.stem}', noisy(
            [cv2.resize(rgb, (960, 540), interpolation=cv2.INTER_AREA)]), 0))
    return found


def fault_row(name: str, trials: list[Trial]) -> str:
    """Return a markdown row: detected within 1 s, delay median and max, cleared."""
    delays = [trial.delay_s for trial in trials
              if trial.delay_s is not None and trial.delay_s <= DETECTED_WITHIN_S]
    cleared = [trial.cleared_s for trial in trials if trial.cleared_s is not None]
    delay = (f'{statistics.median(delays) * 1000:.0f} / {max(delays) * 1000:.0f}'
             if delays else '-')
    clear = f'{max(cleared):.1f}' if cleared else '-'
    return (f'| {name} | {len(delays)}/{len(trials)} | {delay} | {clear} | '
            f'{", ".join(sorted(set().union(*(trial.raised for trial in trials))))} |')


def cpu_per_frame_ms(inputs: Sequence[Measured], settings: HealthSettings,
                     figures: Callable[[Measured], FrameFigures]) -> float:
    """Return the process CPU (ms) per frame of the node's check: `figures` of each, the update."""
    health = CameraHealth(settings)
    period = 1.0 / FRAME_RATE_HZ
    started = time.process_time()
    for index, item in enumerate(inputs):
        health.frame(index * period, index * period)
        if health.image_due():
            health.image(figures(item), index * period, index * period)
        health.report(index * period)
    return (time.process_time() - started) / len(inputs) * 1000.0


def graph_statistics() -> Callable[[NDArray[np.uint8]], NDArray[np.float32]]:
    """Return the health graph's output for a frame, in onnxruntime on one thread."""
    import onnxruntime  # noqa: PLC0415 (only the bench's graph figures need it)
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / 'health.onnx'
        build_health_graph(path, **GRAPH_OPTIONS)
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = 1
        session = onnxruntime.InferenceSession(str(path), options,
                                               providers=['CPUExecutionProvider'])

    def run(frame: NDArray[np.uint8]) -> NDArray[np.float32]:
        output: NDArray[np.float32] = session.run(None, {FRAME_INPUT: frame})[0]
        return output
    return run


def graph_figures(run_graph: Callable[[NDArray[np.uint8]], NDArray[np.float32]]) -> Callable[
        [NDArray[np.uint8]], FrameFigures]:
    """Return a frame's figures as the node makes them from the graph's output (`run_graph`)."""
    def figures(frame: NDArray[np.uint8]) -> FrameFigures:
        return figures_from_statistics(run_graph(frame))
    return figures


def cpu_table(clip: list[NDArray[np.uint8]], settings: HealthSettings) -> str:
    """Return the CPU per frame, median and max of 5 runs, of each way of measuring the frame."""
    run_graph = graph_statistics()
    outputs = [run_graph(frame) for frame in clip]
    cases: list[tuple[str, Callable[[], float]]] = [
        ('node: statistics in the node (frame_figures)',
         lambda: cpu_per_frame_ms(clip, settings, frame_figures)),
        ("node: from the health graph's statistics",
         lambda: cpu_per_frame_ms(outputs, settings, figures_from_statistics)),
        ('health graph alone, onnxruntime, 1 thread', lambda: _graph_ms(run_graph, clip))]
    rows = []
    for name, measure in cases:
        measure()  # warm caches and first calls
        runs = [measure() for _ in range(5)]
        rows.append(f'| {name} | {statistics.median(runs):.3f} | {max(runs):.3f} |')
    return '\n'.join(['| CPU per frame | median (ms) | max (ms) |', '| --- | --- | --- |', *rows])


def _graph_ms(run_graph: Callable[[NDArray[np.uint8]], NDArray[np.float32]],
              clip: list[NDArray[np.uint8]]) -> float:
    started = time.process_time()
    for frame in clip:
        run_graph(frame)
    return (time.process_time() - started) / len(clip) * 1000.0


def camera_health_report(shared: Path | None, graph: bool) -> Iterator[str]:
    """
    Yield the labelled set's results and the check's CPU per frame as Markdown, line by line.

    Each row as soon as its trials ran, so that a long run shows where it is. `shared`: the
    shared folder (None: the package's one resolver of it). `graph`: judge the set from the
    health graph's statistics instead of the node's own. BenchError names a missing input.
    """
    folder = shared_directory() if shared is None else shared
    for needed in (folder / 'data' / 'videos' / 'solidWhiteRight.mp4',
                   folder / 'data' / 'road' / 'bdd'):
        if not needed.exists():
            raise BenchError(f'{needed} is missing: --camera-health reads the shared folder '
                             '(--shared DIR, else $TRITON_PERCEPTION_SHARED, else ../shared '
                             'beside the checkout)')
    settings = HealthSettings.from_values(HEALTH, {})
    set_of_cameras = cameras(folder)
    figures = graph_figures(graph_statistics()) if graph else frame_figures
    yield (f'{len(set_of_cameras)} cameras at {FRAME_RATE_HZ:g} Hz: 3 s clean, 3 s faulty, '
           '4 s recovered; default parameters; figures from '
           f'{"the health graph" if graph else "the node"}\n')
    yield ('| fault | detected within 1 s | delay median / max (ms) | cleared after (s, max) | '
           'conditions raised |')
    yield '| --- | --- | --- | --- | --- |'
    for fault in degradations():
        trials = [run_trial(settings, source, fault, start, figures)
                  for _name, source, start in set_of_cameras]
        yield fault_row(f'{fault.name} ({fault.condition})', trials)
    yield '\n| clean camera | time not OK (s of 10 s) |\n| --- | --- |'
    for name, source, start in set_of_cameras:
        yield f'| {name} | {run_trial(settings, source, None, start, figures).false_alarm_s:.2f} |'
    clip = video_frames(str(folder / 'data' / 'videos' / 'solidWhiteRight.mp4'))
    yield (f'\n{clip[0].shape[1]}x{clip[0].shape[0]} frames, {len(clip)} of the clip, 5 runs '
           f'(OpenCV threads: {cv2.getNumThreads()}):\n')
    yield cpu_table(clip, settings)
