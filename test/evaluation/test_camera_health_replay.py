"""
`bag evaluate` reports the time a replayed camera spent in each health state.

The pure summary on hand-written statuses, then real replays (lockstep, the session's
tritonserver, real nodes): the clean clip never leaves OK, and a clip whose lens goes dark
halfway spends part of the replay in ERROR, with the reason.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import cv2
import pytest

from support.checkout import shared_path
from triton_perception.bag.make import make_bag
from triton_perception.evaluation.evaluation import evaluate, EvaluationSettings
from triton_perception.evaluation.metrics.camera_health_summary import (health_markdown,
                                                                        health_summary)

FRAMES = 60
DARK_FROM = 20


def test_each_state_holds_until_the_next_status() -> None:
    """Seconds, shares, the worst state and the reasons of non-OK states."""
    summary = health_summary([(10.0, 2, ('blocked', 'dark')), (0.0, 0, ()),
                              (13.0, 1, ('blurred',)), (14.0, 0, ())], end=20.0)
    assert summary == {'seconds': {'OK': 16.0, 'WARN': 1.0, 'ERROR': 3.0, 'STALE': 0.0},
                       'share': {'OK': 0.8, 'WARN': 0.05, 'ERROR': 0.15, 'STALE': 0.0},
                       'worst': 'ERROR',
                       'reasons': {'blocked': 3.0, 'blurred': 1.0, 'dark': 3.0}}
    assert health_markdown(summary)[1] == ('Camera health (time in each state): OK 80%, '
                                           'WARN 5%, ERROR 15%; worst ERROR.')
    assert health_summary([], end=1.0) == {} and health_markdown({}) == []


def clip_with_dark_lens(directory: Path) -> Path:
    """Return a bag of the clip's first FRAMES frames, black from frame DARK_FROM on."""
    frames = directory / 'frames'
    frames.mkdir()
    video = cv2.VideoCapture(str(shared_path('data', 'videos', 'solidWhiteRight.mp4')))
    for index in range(FRAMES):
        ok, bgr = video.read()
        assert ok, index
        if index >= DARK_FROM:
            bgr[:] = 0
        cv2.imwrite(str(frames / f'{index:04d}.png'), bgr)
    video.release()
    bag = directory / 'dark_bag'
    make_bag(frames, bag, rate_hz=30.0)
    return bag


@pytest.mark.ros
@pytest.mark.server
@pytest.mark.slow
def test_a_replay_reports_the_cameras_time_in_each_state(triton_server: Any,
                                                         tmp_path: Path) -> None:
    """The lens goes dark after DARK_FROM frames: ERROR for part of the replay, with why."""
    report = evaluate(EvaluationSettings(
        bag=clip_with_dark_lens(tmp_path), output=tmp_path / 'evaluation', timing='lockstep',
        triton_url=triton_server.grpc_url), log=print)
    health = report['camera_health']
    print(health)
    assert health['worst'] == 'ERROR'
    assert 0 < health['share']['ERROR'] < 1 and health['share']['OK'] > 0
    assert {'blocked', 'dark'} <= set(health['reasons']), health['reasons']
    assert 'Camera health (time in each state)' in (
        tmp_path / 'evaluation' / 'report.md').read_text()
