"""
The camera health check on its labelled set: detection, delay, false alarms and CPU per frame.

`python -m triton_perception.bench.camera_health_bench [--shared ../shared]` runs every fault of
`health/degradation.py` on 10 cameras (the highway clip from 4 starts, and a still camera on
each of the 6 road frames), the clean cameras, and times the check on the clip's 960x540 frames.
It needs no ROS and no Triton; docs/performance.md ("Camera health") holds its output.
"""
from __future__ import annotations

import argparse
from pathlib import Path
import statistics
import time
from typing import Callable

import cv2
import numpy as np
from numpy.typing import NDArray

from triton_perception.health import (CameraHealth, degradations, frame_figures, FRAME_RATE_HZ,
                                      noisy, run_trial, Trial, video_frames)
from triton_perception.parameters import HEALTH, HealthSettings

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


def cpu_per_frame_ms(frames: list[NDArray[np.uint8]], settings: HealthSettings) -> float:
    """Return the process CPU (ms) per frame of the whole check: figures and the update."""
    health = CameraHealth(settings)
    period = 1.0 / FRAME_RATE_HZ
    started = time.process_time()
    for index, frame in enumerate(frames):
        health.frame(index * period, index * period)
        if health.image_due():
            health.image(frame_figures(frame), index * period, index * period)
        health.report(index * period)
    return (time.process_time() - started) / len(frames) * 1000.0


def main(argv: list[str] | None = None) -> int:
    """Print the labelled set's results and the check's CPU per frame as markdown."""
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--shared', type=Path, default=Path('../shared'),
                        help='the shared folder holding data/ (default ../shared)')
    arguments = parser.parse_args(argv)
    settings = HealthSettings.from_values(HEALTH, {})
    set_of_cameras = cameras(arguments.shared)
    print(f'{len(set_of_cameras)} cameras at {FRAME_RATE_HZ:g} Hz: 3 s clean, 3 s faulty, '
          '4 s recovered; default parameters\n')
    print('| fault | detected within 1 s | delay median / max (ms) | cleared after (s, max) | '
          'conditions raised |')
    print('| --- | --- | --- | --- | --- |')
    for fault in degradations():
        trials = [run_trial(settings, source, fault, start)
                  for _name, source, start in set_of_cameras]
        print(fault_row(f'{fault.name} ({fault.condition})', trials))
    print('\n| clean camera | time not OK (s of 10 s) |\n| --- | --- |')
    for name, source, start in set_of_cameras:
        print(f'| {name} | {run_trial(settings, source, None, start).false_alarm_s:.2f} |')
    clip = video_frames(str(arguments.shared / 'data' / 'videos' / 'solidWhiteRight.mp4'))
    cpu_per_frame_ms(clip[:20], settings)  # warm caches and OpenCV's first calls
    runs = [cpu_per_frame_ms(clip, settings) for _ in range(5)]
    print(f'\nCPU per {clip[0].shape[1]}x{clip[0].shape[0]} frame (figures and update, '
          f'{len(clip)} frames, 5 runs): median {statistics.median(runs):.3f} ms, '
          f'max {max(runs):.3f} ms (OpenCV threads: {cv2.getNumThreads()})')
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
