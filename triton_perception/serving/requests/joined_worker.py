"""
One request per camera frame for every node of a perception process's camera.

A camera whose detection and lane nodes run in one perception process has one JoinedWorker:
each node hands it every frame it accepts, and a request thread sends the frame once, to the
joined ensemble (`perception`: both models and the camera's health statistics), and hands each
node its own outputs. Results, accounting and failures stay per node: a node's bad frame is
rejected in its own `prepare` and the others are still served. Where the joined ensemble does
not serve the members' models (own models, or an ensemble missing from the repository), or
only one node is active, each node's frame goes to its own model, one request each, as an
InferenceWorker sends it; the log says so once. What a round is (the members' frames planned as
requests, sent and delivered) is camera_rounds.CameraRounds, made at the first join: the
camera's own request threads serve it, or in a process with several cameras the process's
request threads (camera_batches), which send the rounds of all ready cameras together. This
class is the camera's face to its nodes: members join, submit and leave; the connection's
state and figures. Knows nothing of ROS.
"""
from __future__ import annotations

import threading
import time
from typing import Callable, Protocol

from triton_perception.frames import Frame, FrameAccounting
from triton_perception.serving.requests.camera_rounds import (CameraRounds, fail_round, Outputs,
                                                              StatisticsHook)
from triton_perception.serving.requests.connection_health import ConnectionHealth
from triton_perception.serving.requests.joined_slot import JoinedSlot, Member, MemberFrames
from triton_perception.serving.requests.member_worker import MemberWorker
from triton_perception.serving.requests.request_gate import RequestGate
from triton_perception.serving.requests.request_inputs import Tensors
from triton_perception.serving.requests.request_threads import supervised
from triton_perception.serving.requests.shared_frames import SharedFrames
from triton_perception.serving.requests.triton_client import (ClientSettings, make_client,
                                                              watch_connection)
from triton_perception.serving.requests.worker_log import Log, WorkerLog


class ProcessRequests(Protocol):
    """The request threads a process's cameras share (camera_batches.CameraBatches)."""

    def add(self, camera: CameraRounds, settings: ClientSettings) -> None:
        """Serve `camera`'s frames from now on (the first camera's `settings` start threads)."""

    def remove(self, camera: CameraRounds, timeout_s: float) -> None:
        """Serve `camera` no more, once its requests in flight are answered."""

    def frame_arrived(self) -> None:
        """Look again at which camera has frames to send."""


class JoinedWorker:
    """The request threads and connection state of one camera's nodes at one Triton server."""

    def __init__(self, joined_model: str, shared_frames: SharedFrames,
                 statistics: StatisticsHook | None = None, camera: str = '',
                 gate: RequestGate | None = None,
                 batches: ProcessRequests | None = None) -> None:
        """
        Send to `joined_model` whatever frames of its members it serves; `statistics` gets health.

        `shared_frames`: the camera's frame regions. The client settings (address, TLS, request
        threads, timeout) are the first member's: a camera's nodes share one parameters file.
        `gate`: the process's request gate, which decides which camera `camera` (its
        namespace) sends next when the process has more frames than it serves. `batches`: the
        process's request threads, which send the frames of all its ready cameras together;
        without them the camera has request threads of its own.
        """
        self._joined_model = joined_model
        self._camera = camera
        self._gate = gate
        self._batches = batches
        self._shared_frames = shared_frames
        self._statistics = statistics
        self._slot = JoinedSlot()
        self._lock = threading.Lock()
        self._members: dict[str, Member] = {}
        self._settings: ClientSettings | None = None
        self._threads: list[threading.Thread] = []
        self._health: ConnectionHealth | None = None
        self._rounds: CameraRounds | None = None  # the connection's, from the first join

    @property
    def joined_model(self) -> str:
        """Return the ensemble that serves the camera's models with one request per frame."""
        return self._joined_model

    @property
    def slot(self) -> JoinedSlot:
        """Return the slot that holds the camera's waiting frames, one per member."""
        return self._slot

    def member(self, name: str, settings: ClientSettings, accounting: FrameAccounting,
               prepare: Callable[[Frame], Tensors],
               deliver: Callable[[Frame, Tensors, Tensors], None], log: Log,
               wanted: Callable[[], tuple[str, ...]] | None = None) -> MemberWorker:
        """
        Return node `name`'s worker face; it joins on `start`, as an InferenceWorker starts.

        `wanted` returns the outputs the node consumes now (Member.wanted).
        """
        return MemberWorker(self, Member(name, settings, accounting, prepare, deliver,
                                         WorkerLog(log), wanted))

    @property
    def ready(self) -> bool:
        """Whether the members' models were ready at the last check."""
        return self._slot.accepting

    @property
    def status(self) -> str:
        """Return the connection state in words."""
        return self._health.status if self._health is not None else 'not started'

    def join(self, member: Member) -> None:
        """Add `member`; the first one's settings start the connection and request threads."""
        with self._lock:
            self._members[member.name] = member
            self._slot.admit(member.name)
            if self._threads:
                return
            # A fresh slot after the last member left (and stopped it).
            self._slot = JoinedSlot(self._batches.frame_arrived if self._batches is not None
                                    else None if self._gate is None else self._gate.frame_arrived)
            settings = self._settings = member.settings
            self._health = ConnectionHealth(settings.url, self._member_models,
                                            settings.max_backoff_s, self._slot, member.log)
            rounds = self._rounds = CameraRounds(
                self._camera, self._joined_model, self._slot, self._shared_frames, settings,
                self._health, member.log, self._statistics)
            self._threads = [threading.Thread(target=self._connection_loop, daemon=True,
                                              name='camera-connection')]
            if self._batches is None:
                self._threads += [threading.Thread(
                    target=supervised(self._request_loop, member.log, f'request thread {index}'),
                    daemon=True, name=f'camera-request-{index}')
                    for index in range(settings.max_in_flight)]
            threads = list(self._threads)
        for thread in threads:
            thread.start()
        if self._batches is not None:
            self._batches.add(rounds, settings)

    def leave(self, member: Member, reason: str, timeout_s: float) -> None:
        """Remove `member` (its waiting frame dropped); the last one stops the threads."""
        with self._lock:
            self._members.pop(member.name, None)
            self._slot.remove(member.name, reason)
            if self._members or not self._threads:
                return
            threads, self._threads = self._threads, []
            health = self._health
            rounds = self._rounds
        if self._batches is not None and rounds is not None:
            self._batches.remove(rounds, timeout_s)
        self._slot.stop(reason)
        if health is not None:
            health.stop()
        deadline = time.monotonic() + timeout_s
        for thread in threads:
            thread.join(timeout=max(0.0, deadline - time.monotonic()))

    def submit(self, member: Member, frame: Frame) -> None:
        """Put `member`'s frame in the camera's slot (dropped while Triton is not ready)."""
        self._slot.put(member, frame)

    def figures(self) -> dict[str, str]:
        """Return the camera's joined (of those, batched) requests and its figures at the gate."""
        counts = self._rounds.counts() if self._rounds is not None else {
            'joined_requests': 0, 'batched_requests': 0}
        figures = {**{key: str(value) for key, value in counts.items()},
                   **(self._health.served if self._health is not None else {})}
        if self._gate is not None:
            figures.update((f'gate_{key}', value)
                           for key, value in self._gate.figures(self._camera).items())
        return figures

    def _current_rounds(self) -> CameraRounds:
        with self._lock:
            assert self._rounds is not None  # set by the first join
            return self._rounds

    def _member_models(self) -> tuple[str, ...]:
        with self._lock:
            return tuple(dict.fromkeys(member.settings.model
                                       for member in self._members.values()))

    def _connection_loop(self) -> None:
        assert self._settings is not None and self._health is not None  # set by the first join
        watch_connection(self._settings, self._health)

    def _request_loop(self) -> None:
        assert self._settings is not None  # set by the first join
        slot = self._slot
        rounds = self._current_rounds()
        client = make_client(self._settings)
        outputs: Outputs = {}
        shared = rounds.lease_frames()
        try:
            while (frames := self._next_frames(slot)) is not None:
                try:
                    if frames and (taken := rounds.prepare(client, frames)) is not None:
                        rounds.serve(client, outputs, shared, taken)
                except Exception as error:  # noqa: BLE001 (settle the round, serve the next)
                    fail_round(frames, error)
                finally:
                    if self._gate is not None:
                        self._gate.done(self._camera)
        finally:
            shared.close(client)
            for memory in outputs.values():
                memory.close(client)
            client.close()

    def _next_frames(self, slot: JoinedSlot) -> MemberFrames | None:
        """
        Return the camera's next frames to serve; None once the slot stops.

        With a gate, wait for this camera's turn first (an empty dict: the frames went meanwhile).
        """
        if self._gate is None:
            return slot.take()
        if not self._gate.wait_turn(self._camera, lambda: slot.stopping or slot.takeable()):
            return None
        frames = slot.take(wait=False)
        if frames is None and slot.stopping:
            self._gate.done(self._camera)
            return None
        return frames or {}
