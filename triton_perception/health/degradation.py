"""
A labelled set of camera faults made from clean frames at run time, and the check run on it.

Each Degradation turns a clean camera (a sequence of frames at 30 Hz) into a faulty one for a
while: a covered fraction of the lens, Gaussian blur, brightness scaled down or up, one frame
repeated, stamps running backwards, every other frame lost. `run_trial` feeds the clean,
faulty and recovered phases through a CameraHealth as a node would (stamps and arrival times of
every frame, the figures of every checked one) and says when the fault was reported and when
the report cleared. The tests and the bench (`bench --camera-health`,
bench/offline/camera_health.py) both use it, so the figures in docs/performance.md are what the
tests hold.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Callable, cast, Sequence

import cv2
import numpy as np
from numpy.typing import NDArray

from triton_perception.health.camera_checks import CameraHealth
from triton_perception.health.hold import OK
from triton_perception.health.image_figures import frame_figures, FrameFigures
from triton_perception.parameters import HealthSettings

FRAME_RATE_HZ = 30.0
CLEAN_S, FAULT_S, RECOVERY_S = 3.0, 3.0, 4.0
COVER_LEVEL = 60  # grey of the cover (mud, a hand): its sensor noise is added separately
NOISE_SIGMA = 2.0  # sensor noise of a still scene, so that a still camera is not frozen


def cover(image: NDArray[np.uint8], fraction: float) -> NDArray[np.uint8]:
    """Return `image` with its left `fraction` of columns covered (flat grey)."""
    covered = image.copy()
    covered[:, :round(image.shape[1] * fraction)] = COVER_LEVEL
    return covered


def blur(image: NDArray[np.uint8], sigma: float) -> NDArray[np.uint8]:
    """Return `image` blurred by a Gaussian of `sigma` pixels."""
    # OpenCV's stubs return any integer or float array; a blurred uint8 image stays uint8.
    return cast(NDArray[np.uint8], cv2.GaussianBlur(image, (0, 0), sigma))


def brightness(image: NDArray[np.uint8], factor: float) -> NDArray[np.uint8]:
    """Return `image` with its values scaled by `factor`, saturating at 255."""
    # convertScaleAbs always returns uint8, which OpenCV's stubs do not say.
    return cast(NDArray[np.uint8], cv2.convertScaleAbs(image, alpha=factor))


@dataclass(frozen=True)
class Degradation:
    """
    One fault: its name, the condition it should raise, and what it does to frames and timing.

    `image(frame)` returns the faulty frame; `repeat` repeats the fault's first frame;
    `stamps` is 'advance', 'backwards' or 'halved' (every other frame lost).
    """

    name: str
    condition: str
    image: Callable[[NDArray[np.uint8]], NDArray[np.uint8]] | None = None
    stamps: str = 'advance'
    repeat: bool = False


def degradations() -> list[Degradation]:
    """Return the labelled set: each fault at several strengths, the strong end last."""
    faults = [Degradation(f'cover {fraction:.0%}', 'blocked', partial(cover, fraction=fraction))
              for fraction in (0.25, 0.5, 0.75, 1.0)]
    faults += [Degradation(f'blur sigma {sigma:g} px', 'blurred', partial(blur, sigma=sigma))
               for sigma in (1.0, 2.0, 4.0, 8.0)]
    faults += [Degradation(f'brightness x{factor:g}', condition,
                           partial(brightness, factor=factor))
               for condition, factors in (('dark', (0.5, 0.25, 0.1)), ('glare', (1.5, 2.0, 3.0)))
               for factor in factors]
    faults += [Degradation('frame repeated', 'frozen', repeat=True),
               Degradation('stamps backwards', 'stamps', stamps='backwards'),
               Degradation('rate halved', 'rate', stamps='halved')]
    return faults


@dataclass(frozen=True)
class Trial:
    """
    What one camera's run showed.

    `delay_s`: from the fault's start to the first report of its condition (None: never).
    `cleared_s`: from the recovery to the camera's status back at OK (None: not by the end).
    `false_alarm_s`: time the status was not OK before the fault (all the run without one).
    `raised`: every condition reported during the fault.
    """

    delay_s: float | None
    cleared_s: float | None
    false_alarm_s: float
    raised: frozenset[str]


def video_frames(path: str) -> list[NDArray[np.uint8]]:
    """Return every frame of the video at `path` as RGB (the clean clip of the labelled set)."""
    capture = cv2.VideoCapture(path)
    frames: list[NDArray[np.uint8]] = []
    while True:
        ok, bgr = capture.read()
        if not ok:
            break
        # OpenCV's stubs return any integer or float array; decoded frames are uint8.
        frames.append(cast(NDArray[np.uint8], cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB)))
    capture.release()
    return frames


def noisy(frames: Sequence[NDArray[np.generic]],
          seed: int = 0) -> Callable[[int], NDArray[np.uint8]]:
    """
    Return frame `i` of `frames` (cycled) with sensor noise, different from one frame to the next.

    Three noise patterns are made once and cycled: a still frame (a road frame) then changes
    as a real sensor's output does. Each of the 3 x len(frames) noisy frames is made once and
    returned read-only, so that a trial over hundreds of frames does not add the noise again.
    """
    generator = np.random.default_rng(seed)
    shape = frames[0].shape
    patterns = [generator.normal(0.0, NOISE_SIGMA, shape).astype(np.int16) for _ in range(3)]
    made: dict[tuple[int, int], NDArray[np.uint8]] = {}

    def frame(index: int) -> NDArray[np.uint8]:
        key = (index % len(frames), index % 3)
        if key not in made:
            clean = frames[key[0]].astype(np.int16) + patterns[key[1]]
            made[key] = np.clip(clean, 0, 255).astype(np.uint8)
            made[key].setflags(write=False)
        return made[key]
    return frame


def run_trial(settings: HealthSettings, source: Callable[[int], NDArray[np.uint8]],
              fault: Degradation | None, start: int = 0,
              figures: Callable[[NDArray[np.uint8]], FrameFigures] = frame_figures) -> Trial:
    """
    Run a camera through CLEAN_S clean, FAULT_S faulty (`fault`; None: clean) and RECOVERY_S s.

    `source(i)` is the camera's clean frame i, from `start` on; frames come at FRAME_RATE_HZ.
    `figures` measures a checked frame: in the node (frame_figures) or through the health
    graph (frame_statistics), so that both are judged on the same trials.
    """
    return run_trials(settings, source, fault, start, [figures])[0]


def run_trials(settings: HealthSettings, source: Callable[[int], NDArray[np.uint8]],
               fault: Degradation | None, start: int,
               figures: Sequence[Callable[[NDArray[np.uint8]], FrameFigures]]) -> list[Trial]:
    """
    Run one camera's trial (as run_trial) once for each way of measuring a frame in `figures`.

    Each CameraHealth sees the same frames, made (and made faulty) once: comparing the node's
    figures with the graph's then costs the measuring, not a second blur of every frame.
    """
    healths = [CameraHealth(settings) for _ in figures]
    period = 1.0 / FRAME_RATE_HZ
    fault_at, recovery_at = CLEAN_S, CLEAN_S + FAULT_S
    delays: list[float | None] = [None for _ in figures]
    cleared: list[float | None] = [None for _ in figures]
    false_alarms = [0.0 for _ in figures]
    raised: list[set[str]] = [set() for _ in figures]
    repeated: NDArray[np.uint8] | None = None
    for index in range(round((CLEAN_S + FAULT_S + RECOVERY_S) * FRAME_RATE_HZ)):
        now = index * period
        faulty = fault is not None and fault_at <= now < recovery_at
        stamp = now
        if faulty and fault is not None:
            fault_index = index - round(fault_at * FRAME_RATE_HZ)
            if fault.stamps == 'halved' and fault_index % 2:
                continue
            if fault.stamps == 'backwards':
                stamp = fault_at - fault_index * period
        frame = source(start + index)
        if faulty and fault is not None:
            if fault.repeat:
                repeated = frame if repeated is None else repeated
                frame = repeated
            elif fault.image is not None:
                frame = fault.image(frame)
        for which, (health, measure) in enumerate(zip(healths, figures)):
            health.frame(stamp, now)
            if health.image_due():
                health.image(measure(frame), stamp, now)
            report = health.report(now)
            if faulty and fault is not None:
                raised[which].update(name for name, value in report.values.items()
                                     if value in ('WARN', 'ERROR'))
                if delays[which] is None and report.values[fault.condition] != 'OK':
                    delays[which] = now - fault_at
            elif report.level != OK and (fault is None or now < fault_at):
                false_alarms[which] += period
            if now >= recovery_at and cleared[which] is None and report.level == OK:
                cleared[which] = now - recovery_at
    return [Trial(delay, clear, false_alarm, frozenset(conditions)) for delay, clear, false_alarm,
            conditions in zip(delays, cleared, false_alarms, raised)]
