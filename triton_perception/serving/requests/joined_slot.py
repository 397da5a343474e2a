"""
The latest frame of one camera as each of its nodes took it, waiting for one joined request.

In a perception process a camera's detection and lane nodes each take every frame (their own
checks and accounting) and hand it to their camera's joined worker. The slot keeps the newest
frame of every member together, so that one request serves them all: a frame of a newer
message replaces the waiting ones (each member counts its own as dropped), and while the
camera hands a message to its nodes (`offering`) no request thread takes the half-filled set.
"""
from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass
from typing import Callable, Iterator

from triton_perception.frames import Fate, Frame, FrameAccounting
from triton_perception.serving.requests.frame_slot import GatedSlot
from triton_perception.serving.requests.request_inputs import Tensors
from triton_perception.serving.requests.triton_client import ClientSettings
from triton_perception.serving.requests.worker_log import WorkerLog


@dataclass(frozen=True, eq=False)
class Member:
    """
    One node's part in its camera's joined requests.

    `settings` are the node's own (its model and outputs, used when it is served alone);
    `prepare` and `deliver` are the node's, as an InferenceWorker calls them. `wanted` returns
    which of its outputs the node publishes now (none of them unasked for: an output nobody
    consumes is left out of the request), all of them unless the node says otherwise.
    """

    name: str
    settings: ClientSettings
    accounting: FrameAccounting
    prepare: Callable[[Frame], Tensors]
    deliver: Callable[[Frame, Tensors, Tensors], None]
    log: WorkerLog
    wanted: Callable[[], tuple[str, ...]] | None = None

    def outputs(self) -> tuple[str, ...]:
        """Return the outputs to ask for this member's next frame."""
        return self.settings.outputs if self.wanted is None else self.wanted()


MemberFrames = dict[str, tuple[Member, Frame]]


class JoinedSlot(GatedSlot):
    """At most one message's frames waiting, one per member; taken while Triton is ready."""

    def __init__(self, on_change: Callable[[], None] | None = None) -> None:
        """
        Hold nothing; frames are refused until `accept_frames`.

        `on_change` is called, outside the slot's lock, when frames may have become takeable:
        the process's request gate looks again at which camera has a frame.
        """
        super().__init__()
        self._on_change = on_change
        self._frames: MemberFrames = {}
        self._message: object = None
        self._offering = 0
        self._left: set[str] = set()  # members gone: a frame they put late is not served

    @contextmanager
    def offering(self) -> Iterator[None]:
        """Hold requests back while one message is handed to every member."""
        with self._condition:
            self._offering += 1
        try:
            yield
        finally:
            with self._condition:
                self._offering -= 1
                self._condition.notify_all()
            self._changed()

    def put(self, member: Member, frame: Frame) -> None:
        """Never blocks on Triton: add `member`'s frame, replacing an older message's frames."""
        with self._condition:
            if member.name in self._left:
                member.accounting.settle(Fate.DROPPED, frame.received_at, 'node not active')
                return
            if not self._open or self._stopping:
                member.accounting.settle(Fate.DROPPED, frame.received_at, 'triton not ready')
                return
            if frame.message is not self._message:
                self._drop('replaced by a newer frame')
                self._message = frame.message
            held = self._frames.get(member.name)
            if held is not None:
                held[0].accounting.settle(Fate.DROPPED, held[1].received_at,
                                          'replaced by a newer frame')
            self._frames[member.name] = (member, frame)
            self._condition.notify_all()
        self._changed()

    @property
    def stopping(self) -> bool:
        """Whether the slot has stopped: `take` returns None from now on."""
        return self._stopping

    def takeable(self) -> bool:
        """
        Whether a message's frames may be taken now.

        They may once some wait, Triton is ready, no message is being offered and the slot has
        not stopped. Read without the lock by those deciding whose turn it is: a hint, which
        `take` checks again under the lock.
        """
        return bool(self._frames) and self._open and not self._offering and not self._stopping

    def take(self, wait: bool = True) -> MemberFrames | None:
        """
        Return the waiting frames once they are takeable; None once stopping.

        With `wait` False, return None at once when they are not takeable now.
        """
        with self._condition:
            if wait:
                self._condition.wait_for(lambda: self._stopping or self.takeable())
            if not self.takeable():
                return None
            frames, self._frames = self._frames, {}
            return frames

    def remove(self, name: str, reason: str) -> None:
        """Drop the frame member `name` has waiting, for `reason`; it puts none from now on."""
        with self._condition:
            self._left.add(name)
            held = self._frames.pop(name, None)
            if held is not None:
                held[0].accounting.settle(Fate.DROPPED, held[1].received_at, reason)

    def admit(self, name: str) -> None:
        """Take member `name`'s frames (again, after it left)."""
        with self._condition:
            self._left.discard(name)

    def _changed(self) -> None:
        if self._on_change is not None:
            self._on_change()

    def _drop(self, reason: str) -> None:
        for member, frame in self._frames.values():
            member.accounting.settle(Fate.DROPPED, frame.received_at, reason)
        self._frames = {}
