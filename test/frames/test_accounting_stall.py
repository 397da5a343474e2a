"""Frames in and nothing out: the accounting's stall judgement, from what was published."""
from __future__ import annotations

import time

from triton_perception.frames import Fate, FrameAccounting


def test_frames_in_and_nothing_published_is_a_stall_until_a_result() -> None:
    """Dropped or failed frames do not answer; the first published one does."""
    accounting = FrameAccounting()
    assert not accounting.stalled() and not accounting.snapshot().stalled()
    first = accounting.received()
    accounting.settle(Fate.DROPPED, first, 'replaced by a newer frame')
    second = accounting.received()
    accounting.settle(Fate.FAILED, second, 'request: RuntimeError')
    assert accounting.stalled(least_s=0.0) and accounting.snapshot().stalled(least_s=0.0)
    assert not accounting.stalled(least_s=60.0)
    accounting.settle(Fate.PUBLISHED, accounting.received())
    assert not accounting.stalled(least_s=0.0) and accounting.snapshot().unanswered_s == 0.0


def test_a_camera_slower_than_the_limit_is_judged_by_its_own_period() -> None:
    """Two frames 1 s apart: a wait shorter than that period is no stall, even past the limit."""
    accounting = FrameAccounting()
    accounting.settle(Fate.PUBLISHED, accounting.received())
    time.sleep(1.0)
    accounting.received()
    assert not accounting.stalled(least_s=0.0)  # waited ~0 s, period 1 s
    time.sleep(1.1)
    assert accounting.stalled(least_s=0.0)
