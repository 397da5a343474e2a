"""
What a node calls on its worker, and a node's face of its camera's JoinedWorker.

A node of its own process has an InferenceWorker; a node of a perception process's camera has a
MemberWorker on the camera's JoinedWorker, which serves all the camera's nodes at once. Both
are a FrameWorker to the node.
"""
from __future__ import annotations

from typing import Protocol

from triton_perception.frames import Frame
from triton_perception.serving.requests.joined_slot import Member


class FrameWorker(Protocol):
    """What a node calls on its worker: an InferenceWorker of its own, or its camera's member."""

    def start(self) -> None:
        """Start taking frames."""

    def stop(self, reason: str = 'shutting down', timeout_s: float = 2.0) -> None:
        """Stop taking frames; a frame still waiting is counted as dropped for `reason`."""

    @property
    def ready(self) -> bool:
        """Whether the models were ready at the last check."""

    @property
    def status(self) -> str:
        """Return the connection state in words (/diagnostics)."""

    def submit(self, frame: Frame) -> None:
        """Hand a frame over; never blocks on Triton."""

    def figures(self) -> dict[str, str]:
        """Return the worker's own /diagnostics values (e.g. the camera's turn at the gate)."""


class CameraWorker(Protocol):
    """What a member calls on its camera's worker (serving.requests.joined_worker.JoinedWorker)."""

    def join(self, member: Member) -> None:
        """Add `member` to the camera's requests."""

    def leave(self, member: Member, reason: str, timeout_s: float) -> None:
        """Remove `member`; its waiting frame is dropped for `reason`."""

    @property
    def ready(self) -> bool:
        """Whether the members' models were ready at the last check."""

    @property
    def status(self) -> str:
        """Return the connection state in words."""

    def submit(self, member: Member, frame: Frame) -> None:
        """Put `member`'s frame in the camera's slot."""

    def figures(self) -> dict[str, str]:
        """Return the camera's request figures for /diagnostics."""


class MemberWorker:
    """A node's face of its camera's JoinedWorker: what the node calls on an InferenceWorker."""

    def __init__(self, worker: CameraWorker, member: Member) -> None:
        """Hand `member`'s frames to `worker`."""
        self._worker = worker
        self._member = member

    def start(self) -> None:
        """Join the camera's requests (the first member starts the worker's threads)."""
        self._worker.join(self._member)

    def stop(self, reason: str = 'shutting down', timeout_s: float = 2.0) -> None:
        """Leave; a frame of this node still waiting is counted as dropped for `reason`."""
        self._member.log.quiet()
        self._worker.leave(self._member, reason, timeout_s)

    @property
    def ready(self) -> bool:
        """Whether the models were ready at the last check."""
        return self._worker.ready

    @property
    def status(self) -> str:
        """Return the connection state in words (/diagnostics)."""
        return self._worker.status

    def submit(self, frame: Frame) -> None:
        """Never blocks on Triton: the frame waits for the camera's next request."""
        self._worker.submit(self._member, frame)

    def figures(self) -> dict[str, str]:
        """Return the camera's joined (and of those batched) requests and its gate figures."""
        return self._worker.figures()
