"""
The camera health check on a labelled set made here from the shared clip and road frames.

Each fault at its strong end raises its condition within its hold time (and within 1 s of 30 Hz
frames) and the status clears after the camera recovers; the clean clip and the clean road
frames, day and night, never leave OK; no frame a node can hold makes the check raise.
"""
from __future__ import annotations

from pathlib import Path
from typing import Callable

import cv2
import numpy as np
import pytest
from sensor_msgs.msg import Image
from std_msgs.msg import Header

from support.checkout import shared_path
from triton_perception.frames.image_conversion import (encode_rgb, image_to_rgb,
                                                       SUPPORTED_ENCODINGS)
from triton_perception.health import CameraHealth, ERROR, frame_figures, HeldLevel, OK, WARN
from triton_perception.health.degradation import (Degradation, degradations, FRAME_RATE_HZ,
                                                  noisy, run_trial, video_frames)
from triton_perception.parameters import HEALTH, HealthSettings

SETTINGS = HealthSettings.from_values(HEALTH, {})
# The strong end of each fault, and how long after its start its condition may show: the raise
# hold plus what the condition needs to see (5 frames for frozen, 8 intervals for the rate).
STRONG = {'cover 75%': 0.0, 'cover 100%': 0.0, 'blur sigma 4 px': 0.0, 'blur sigma 8 px': 0.0,
          'brightness x0.1': 0.0, 'brightness x3': 0.0, 'frame repeated': 5 / FRAME_RATE_HZ,
          'stamps backwards': 0.0, 'rate halved': 8 * 2 / FRAME_RATE_HZ}
FRAME_S = 1.0 / FRAME_RATE_HZ


@pytest.fixture(scope='module')
def clip() -> list[np.ndarray]:
    """Return the highway clip's frames as RGB (960x540), decoded once per module."""
    frames = video_frames(str(shared_path('data', 'videos', 'solidWhiteRight.mp4')))
    assert len(frames) > 200
    return frames


def road_frames() -> list[Path]:
    """Return the shared BDD100K road frames (day and night)."""
    paths = sorted(shared_path('data', 'road', 'bdd').glob('*.jpg'))
    assert len(paths) == 6
    return paths


def road_camera(path: Path) -> Callable[[int], np.ndarray]:
    """Return a still camera on the road frame at `path` (960x540), with sensor noise."""
    rgb = cv2.cvtColor(cv2.imread(str(path)), cv2.COLOR_BGR2RGB)
    return noisy([cv2.resize(rgb, (960, 540), interpolation=cv2.INTER_AREA)])


def fault(name: str) -> Degradation:
    """Return the labelled set's fault called `name`."""
    return next(item for item in degradations() if item.name == name)


@pytest.mark.parametrize('name', sorted(STRONG))
def test_a_strong_fault_is_reported_within_its_hold_and_clears(
        clip: list[np.ndarray], name: str) -> None:
    """The fault's condition shows within its hold (and 1 s); the camera is OK again later."""
    degradation = fault(name)
    for camera, start in ((lambda index: clip[index % len(clip)], 0),
                          (road_camera(road_frames()[0]), 0)):
        trial = run_trial(SETTINGS, camera, degradation, start)
        assert trial.delay_s is not None, f'{name}: never reported ({trial})'
        assert trial.delay_s <= min(1.0, SETTINGS.health_raise_hold_s + STRONG[name]
                                    + 2 * FRAME_S), trial
        assert trial.false_alarm_s == 0.0, trial
        assert trial.cleared_s is not None, f'{name}: still raised after the recovery'
        assert trial.cleared_s <= SETTINGS.health_clear_hold_s + 0.5, trial


def test_the_clean_clip_never_leaves_ok(clip: list[np.ndarray]) -> None:
    """Every frame of the clip, from several starts, keeps the camera OK."""
    for start in (0, 60, 150):
        trial = run_trial(SETTINGS, lambda index: clip[index % len(clip)], None, start)
        assert trial.false_alarm_s == 0.0, (start, trial)


@pytest.mark.parametrize('path', road_frames(), ids=lambda path: path.stem)
def test_clean_road_frames_never_leave_ok(path: Path) -> None:
    """A camera on each road frame, day or night, stays OK."""
    assert run_trial(SETTINGS, road_camera(path), None).false_alarm_s == 0.0


def test_levels_are_held() -> None:
    """A level rises after the raise hold, falls after the clear hold, and ignores blips."""
    held = HeldLevel(raise_hold_s=0.3, clear_hold_s=2.0)
    assert held.update(ERROR, 0.0) == OK
    assert held.update(OK, 0.1) == OK          # a blip: the wait starts again
    assert held.update(ERROR, 0.2) == OK
    assert held.update(WARN, 0.4) == OK
    assert held.update(ERROR, 0.5) == WARN     # held 0.3 s at WARN or above: the lowest
    assert held.update(ERROR, 0.6) == WARN     # the wait for ERROR starts
    assert held.update(ERROR, 0.9) == ERROR
    assert held.update(OK, 1.0) == ERROR
    assert held.update(OK, 2.9) == ERROR
    assert held.update(OK, 3.0) == OK


def test_a_silent_camera_turns_error() -> None:
    """Frames that stop arriving raise `rate` to ERROR; before any frame the camera is WARN."""
    health = CameraHealth(SETTINGS)
    assert health.report(0.0).level == WARN
    for index in range(30):
        health.frame(index * FRAME_S, index * FRAME_S)
    assert health.report(1.0).level == OK
    health.report(1.6)
    report = health.report(2.0)
    assert report.level == ERROR and 'no frame for' in report.message, report


BAD_FRAMES: dict[str, np.ndarray] = {
    '1x1': np.zeros((1, 1, 3), np.uint8),
    '1x1 grey': np.full((1, 1), 255, np.uint8),
    'constant black': np.zeros((540, 960, 3), np.uint8),
    'constant white': np.full((540, 960, 3), 255, np.uint8),
    'one row': np.full((1, 960, 3), 7, np.uint8),
    'one column': np.full((540, 1), 7, np.uint8),
    'empty': np.zeros((0, 0, 3), np.uint8),
    'uint16': np.full((48, 64), 40000, np.uint16),
    'float with nan': np.full((48, 64, 3), np.nan, np.float32),
    'four channels': np.zeros((48, 64, 4), np.uint8),
    'two channels': np.zeros((48, 64, 2), np.uint8),
}


@pytest.mark.parametrize('name', sorted(BAD_FRAMES))
def test_bad_input_never_crashes_the_check(name: str) -> None:
    """Degenerate frames give figures and a report, never an exception."""
    health = CameraHealth(SETTINGS)
    for index in range(20):
        health.frame(index * FRAME_S, index * FRAME_S)
        figures = frame_figures(BAD_FRAMES[name])
        assert 0.0 <= figures.blocked_fraction <= 1.0 and np.isfinite(figures.sharpness)
        health.image(figures, index * FRAME_S, index * FRAME_S)
    assert health.report(20 * FRAME_S).level in (OK, WARN, ERROR)


@pytest.mark.parametrize('encoding', SUPPORTED_ENCODINGS)
def test_every_encoding_the_nodes_take_is_checked_alike(clip: list[np.ndarray],
                                                        encoding: str) -> None:
    """Each encoding, converted as the nodes convert it, gives a clean frame's figures."""
    rgb = clip[100]
    data, step = encode_rgb(rgb, encoding)
    message = Image(header=Header(), height=rgb.shape[0], width=rgb.shape[1],
                    encoding=encoding, is_bigendian=0, step=step, data=data)
    figures = frame_figures(image_to_rgb(message, rgb.shape[0] * rgb.shape[1]))
    assert figures.blocked_fraction < SETTINGS.health_blocked_warn, figures
    assert figures.dark_fraction < SETTINGS.health_dark_fraction, figures
    assert figures.glare_fraction < SETTINGS.health_glare_fraction, figures


def test_a_backlog_delivered_at_once_is_not_a_rate_change() -> None:
    """
    Frames of a 30 Hz camera that arrive in bursts, or paced slower, keep the camera's rate.

    A loaded machine (or a reliable subscription catching up) gets a backlog microseconds apart,
    a lockstep replay frames as fast as the nodes answer; their stamps keep their spacing, so
    the rate learnt and judged stays 30 Hz.
    """
    health = CameraHealth(SETTINGS)
    now, stamp = 0.0, 0.0
    for burst in range(20):  # 10 frames at once, then a pause as long as they took to capture
        for _frame in range(10):
            health.frame(stamp, now)
            stamp += 1 / FRAME_RATE_HZ
            now += 1e-5
        now += 10 / FRAME_RATE_HZ
    for _frame in range(90):
        health.frame(stamp, now)
        stamp += 1 / FRAME_RATE_HZ
        now += 1 / FRAME_RATE_HZ
    for _frame in range(30):  # then paced by slow nodes, as a lockstep replay is: 3 Hz
        health.frame(stamp, now)
        stamp += 1 / FRAME_RATE_HZ
        now += 10 / FRAME_RATE_HZ
    report = health.report(now)
    assert report.values['rate'] == 'OK', report.message
    assert abs(float(report.values['rate_hz']) - FRAME_RATE_HZ) < 1.0, report.values
