"""
The latest-frame slot between a node's frame callback and its request threads.

One frame waits at most: a newer frame replaces a waiting one (the old one is counted as
dropped), so nothing queues without bound and results stay fresh. The slot is closed while
Triton is not ready, and a frame handed over then is dropped at once.
"""
from __future__ import annotations

import threading

from triton_perception.frames import Fate, Frame, FrameAccounting


class GatedSlot:
    """
    What every frame slot shares: open while Triton is ready, and stopped once.

    A subclass holds its frames, drops them in `_drop` (counted with the reason) and may hear of
    every change in `_changed` (called outside the lock).
    """

    def __init__(self) -> None:
        """Refuse frames until `accept_frames`."""
        self._condition = threading.Condition()
        self._open = False
        self._stopping = False

    @property
    def accepting(self) -> bool:
        """Whether frames are taken (Triton was ready at the last check)."""
        return self._open

    def accept_frames(self) -> None:
        """Take frames from now on."""
        with self._condition:
            self._open = True
            self._condition.notify_all()
        self._changed()

    def refuse_frames(self) -> bool:
        """Drop the waiting frames and refuse frames until `accept_frames`; say if it took them."""
        with self._condition:
            was_open, self._open = self._open, False
            self._drop('triton not ready')
            self._condition.notify_all()
            return was_open

    def stop(self, reason: str) -> None:
        """Take no frame again; waiting frames are dropped for `reason`, `take` returns None."""
        with self._condition:
            self._stopping = True
            self._drop(reason)
            self._condition.notify_all()
        self._changed()

    def _changed(self) -> None:
        """Hear that frames may have become takeable (or the slot stopped); nothing here."""

    def _drop(self, reason: str) -> None:
        raise NotImplementedError


class LatestFrameSlot(GatedSlot):
    """At most one frame waiting for a request thread; frames are taken while Triton is ready."""

    def __init__(self, accounting: FrameAccounting) -> None:
        """Count the frames the slot drops into `accounting`; frames are refused at first."""
        super().__init__()
        self._accounting = accounting
        self._frame: Frame | None = None

    def put(self, frame: Frame) -> None:
        """Never blocks on Triton: fills the slot, replacing (dropping) a waiting frame."""
        with self._condition:
            if not self._open or self._stopping:
                self._accounting.settle(Fate.DROPPED, frame.received_at, 'triton not ready')
                return
            self._drop('replaced by a newer frame')
            self._frame = frame
            self._condition.notify_all()

    def take(self) -> Frame | None:
        """Wait for a frame while the slot takes frames; None once stopping."""
        with self._condition:
            while not self._stopping and (self._frame is None or not self._open):
                self._condition.wait()
            if self._stopping:
                return None
            frame, self._frame = self._frame, None
            return frame

    def _drop(self, reason: str) -> None:
        if self._frame is not None:
            self._accounting.settle(Fate.DROPPED, self._frame.received_at, reason)
            self._frame = None
