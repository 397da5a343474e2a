"""
One request per camera frame for every node of a perception process's camera.

A camera whose detection and lane nodes run in one perception process has one JoinedWorker:
each node hands it every frame it accepts, and a request thread sends the frame once, to the
joined ensemble (`perception`: both models and the camera's health statistics), and hands each
node its own outputs. Results, accounting and failures stay per node: a node's bad frame is
rejected in its own `prepare` and the others are still served. Where the joined ensemble does
not serve the members' models (own models, or an ensemble missing from the repository), or
only one node is active, each node's frame goes to its own model, one request each, as an
InferenceWorker sends it; the log says so once. In a process with several cameras the
process's request threads (serving.requests.camera_batches) take each camera's round instead of the
camera's own threads, and send the rounds of all ready cameras together. Knows nothing of ROS.
"""
from __future__ import annotations

from functools import partial
import threading
import time
from typing import Callable, Protocol

import numpy as np
from numpy.typing import NDArray
import tritonclient.grpc as grpcclient

from triton_perception.frames import Frame, FrameAccounting, FrameMessage, RequestTimes
from triton_perception.serving.requests.connection_health import ConnectionHealth
from triton_perception.serving.requests.frame_fates import (deliver_and_settle, fail_unsettled,
                                                            prepare_or_settle, REQUEST)
from triton_perception.serving.requests.joined_requests import (CameraRound, HEALTH_OUTPUT,
                                                                JoinedModel, read_joined_model,
                                                                Request)
from triton_perception.serving.requests.joined_slot import JoinedSlot, Member, MemberFrames
from triton_perception.serving.requests.member_worker import MemberWorker
from triton_perception.serving.requests.output_memory import OutputMemory
from triton_perception.serving.requests.request_gate import RequestGate
from triton_perception.serving.requests.request_inputs import FrameInputs, FrameMemory, Tensors
from triton_perception.serving.requests.request_sending import Part, send, settle_failure
from triton_perception.serving.requests.request_threads import supervised
from triton_perception.serving.requests.shared_frames import SharedFrames
from triton_perception.serving.requests.triton_client import (ClientSettings, make_client,
                                                              watch_connection)
from triton_perception.serving.requests.worker_log import Log, WorkerLog

JUDGING_HEALTH = 'judging health'
# Called with the frame's message and its health statistics, once per joined request.
StatisticsHook = Callable[[FrameMessage, NDArray[np.float32]], None]


class ProcessRequests(Protocol):
    """The request threads a process's cameras share (camera_batches.CameraBatches)."""

    def add(self, camera: JoinedWorker, settings: ClientSettings) -> None:
        """Serve `camera`'s frames from now on (the first camera's `settings` start threads)."""

    def remove(self, camera: JoinedWorker, timeout_s: float) -> None:
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
        self.camera = camera
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
        self._inputs: FrameInputs | None = None
        self._joined: dict[int, JoinedModel | None] = {}  # by connection generation
        self.joined_requests = 0  # requests that answered two or more members at once
        self.batched_requests = 0  # of those, requests that carried other cameras' frames too
        self._first_log: WorkerLog | None = None
        self._said: set[str] = set()

    @property
    def joined_model(self) -> str:
        """Return the ensemble that serves the camera's models with one request per frame."""
        return self._joined_model

    @property
    def shared_memory(self) -> bool:
        """Whether the first member's settings send frames and outputs through shared memory."""
        return self._settings is not None and self._settings.shared_memory

    @property
    def log(self) -> WorkerLog:
        """Return the log of the camera's first member (what the camera's requests say)."""
        with self._lock:
            assert self._first_log is not None  # set by the first join
            return self._first_log

    def say_once(self, text: str) -> None:
        """Log `text` once for the camera (e.g. how its frames are sent)."""
        if text not in self._said:
            self._said.add(text)
            self.log.info(text)

    def lease_frames(self) -> FrameMemory:
        """Return a request thread's lease on the camera's frame regions (close it when done)."""
        return self._shared_frames.lease(self)

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
            self._first_log = member.log
            self._health = ConnectionHealth(settings.url, self._member_models,
                                            settings.max_backoff_s, self._slot, member.log)
            self._inputs = FrameInputs(settings.shared_memory, settings.url, member.log)
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
            self._batches.add(self, settings)

    def leave(self, member: Member, reason: str, timeout_s: float) -> None:
        """Remove `member` (its waiting frame dropped); the last one stops the threads."""
        with self._lock:
            self._members.pop(member.name, None)
            self._slot.remove(member.name, reason)
            if self._members or not self._threads:
                return
            threads, self._threads = self._threads, []
            health = self._health
        if self._batches is not None:
            self._batches.remove(self, timeout_s)
        self._slot.stop(reason)
        if health is not None:
            health.stop()
        deadline = time.monotonic() + timeout_s
        for thread in threads:
            thread.join(timeout=max(0.0, deadline - time.monotonic()))

    def submit(self, member: Member, frame: Frame) -> None:
        """Put `member`'s frame in the camera's slot (dropped while Triton is not ready)."""
        self._slot.put(member, frame)

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
        client = make_client(self._settings)
        outputs: dict[tuple[str, tuple[str, ...]], OutputMemory] = {}
        shared = self._shared_frames.lease(self)
        try:
            while (frames := self._next_frames(slot)) is not None:
                try:
                    if frames and (taken := self.prepare_round(client, frames)) is not None:
                        self.serve_round(client, outputs, shared, taken)
                except Exception as error:  # noqa: BLE001 (settle the round, serve the next)
                    fail_round(frames, error)
                finally:
                    if self._gate is not None:
                        self._gate.done(self.camera)
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
        if not self._gate.wait_turn(self.camera, lambda: slot.stopping or slot.takeable()):
            return None
        frames = slot.take(wait=False)
        if frames is None and slot.stopping:
            self._gate.done(self.camera)
            return None
        return frames or {}

    def figures(self) -> dict[str, str]:
        """Return the camera's joined (of those, batched) requests and its figures at the gate."""
        figures = {'joined_requests': str(self.joined_requests),
                   'batched_requests': str(self.batched_requests),
                   **(self._health.served if self._health is not None else {})}
        if self._gate is not None:
            figures.update((f'gate_{key}', value)
                           for key, value in self._gate.figures(self.camera).items())
        return figures

    def take_round(self, client: grpcclient.InferenceServerClient) -> CameraRound | None:
        """Take the camera's frames if takeable now and plan their requests (the batches' way)."""
        frames = self._slot.take(wait=False)
        return None if frames is None else self.prepare_round(client, frames)

    def prepare_round(self, client: grpcclient.InferenceServerClient,
                      frames: MemberFrames) -> CameraRound | None:
        """
        Prepare each member's frame and plan the requests; None when nothing is left to send.

        A frame a member rejects is settled in its `prepare`; an unreachable server fails them.
        """
        prepared = {name: inputs for name, (member, frame) in frames.items()
                    if (inputs := prepare_or_settle(member.accounting, member.log,
                                                    member.prepare, frame)) is not None}
        if not prepared:
            return None
        members = [frames[name][0] for name in prepared]
        message = frames[members[0].name][1].message
        try:
            requests = self._requests(client, members, prepared)
        except Exception as error:  # noqa: BLE001 (any fault fails the frames it touched)
            for member in members:
                self._failed(member, frames[member.name][1], error)
            return None
        return CameraRound(frames, requests, message)

    def serve_round(self, client: grpcclient.InferenceServerClient,
                    outputs: dict[tuple[str, tuple[str, ...]], OutputMemory],
                    shared: FrameMemory, taken: CameraRound) -> None:
        """Send the round's requests one after the other and deliver each answer."""
        for request in taken.requests:
            key = (request.model, request.outputs)
            if key not in outputs:
                outputs[key] = OutputMemory(request.model, request.outputs,
                                            request.members[0].settings.shared_memory,
                                            request.members[0].log)
            self._send(client, outputs[key], shared, request, taken)

    def _requests(self, client: grpcclient.InferenceServerClient, members: list[Member],
                  prepared: dict[str, Tensors]) -> list[Request]:
        """Return one joined request when the joined ensemble serves `members`, else one each."""
        assert self._health is not None  # set by the first join
        generation = self._health.generation
        if generation not in self._joined:
            self._joined = {generation: read_joined_model(client, self._joined_model)}
            self._say_plan(members, self._joined[generation])
        joined = self._joined[generation]
        if joined is None or not joined.serves(members):
            return [Request(member.settings.model, prepared[member.name], member.outputs(),
                            [member]) for member in members]
        inputs: Tensors = {}
        wanted: dict[str, None] = {}
        for member in members:
            inputs.update(prepared[member.name])
            wanted.update(dict.fromkeys(member.outputs()))
        if self._statistics is not None and HEALTH_OUTPUT in joined.outputs:
            wanted[HEALTH_OUTPUT] = None
        return [Request(self._joined_model, inputs, tuple(wanted), members)]

    def _say_plan(self, members: list[Member], joined: JoinedModel | None) -> None:
        models = ', '.join(member.settings.model for member in members)
        if joined is None:
            members[0].log.info(f'no model {self._joined_model} at the server: one request per '
                                f'model ({models}) for each camera frame')
        elif len(members) > 1 and not joined.serves(members):
            members[0].log.warning(
                f'{self._joined_model} serves {", ".join(sorted(joined.steps))}, not all of '
                f'{models}: one request per model for each camera frame')

    def _send(self, client: grpcclient.InferenceServerClient, memory: OutputMemory,
              shared: FrameMemory, request: Request, taken: CameraRound) -> None:
        try:
            answer = send(client, request.model, [self.part(shared, request.inputs)], memory,
                          request.members[0].settings.timeout_s)
        except Exception as error:  # noqa: BLE001 (any fault fails the frames it touched)
            self.fail_request(request, taken, error)
            return
        if len(request.members) > 1:
            self.count_request(batched=False)
        arrays, problem = memory.arrays_or_problem(answer.result)
        self.deliver(request, taken, arrays, problem, answer.times)

    def count_request(self, batched: bool) -> None:
        """Count an answer that served two or more members (`batched`: with other cameras)."""
        with self._lock:
            self.joined_requests += 1
            self.batched_requests += int(batched)

    def part(self, lease: FrameMemory, inputs: Tensors, suffix: str = '') -> Part:
        """Return the camera's part of a request: `inputs` written through `lease`."""
        assert self._inputs is not None  # set by the first join
        return Part(lease, inputs, self._inputs, self.generation, suffix)

    @property
    def generation(self) -> int:
        """Return the connection's count: it changes when the server restarts."""
        assert self._health is not None  # set by the first join
        return self._health.generation

    def deliver(self, request: Request, taken: CameraRound, arrays: Tensors,
                problem: ValueError | None, times: RequestTimes) -> None:
        """
        Hand the health statistics and each member's own outputs of an answer on.

        A fault in judging health fails the frames of the request: the answer is not trusted.
        """
        if self._statistics is not None and HEALTH_OUTPUT in arrays:
            try:
                self._statistics(taken.message, arrays[HEALTH_OUTPUT])
            except Exception as error:  # noqa: BLE001 (counted, the thread goes on)
                fail_unsettled(((member.accounting, member.log, taken.frames[member.name][1])
                                for member in request.members), JUDGING_HEALTH, error)
                return
        for member in request.members:
            frame = taken.frames[member.name][1]
            deliver_and_settle(member.accounting, member.log, member.deliver, frame,
                               request.inputs, partial(_own, arrays, member, problem), times)

    def fail_request(self, request: Request, taken: CameraRound, error: Exception) -> None:
        """Settle every member's frame of a request that failed, with the reason."""
        for member in request.members:
            self._failed(member, taken.frames[member.name][1], error)

    def _failed(self, member: Member, frame: Frame, error: Exception) -> None:
        settle_failure(member.accounting, member.log, frame, member.settings.model,
                       member.settings.timeout_s, error, self._health)


def fail_round(frames: MemberFrames, error: Exception) -> None:
    """Settle as failed, by a fault of the request stage, every frame of a round still unsettled."""
    fail_unsettled(((member.accounting, member.log, frame) for member, frame in frames.values()),
                   REQUEST, error)


def _own(arrays: Tensors, member: Member, problem: ValueError | None) -> Tensors:
    """
    Return `member`'s outputs of a joined answer; raise `problem` if the answer was bad.

    Outputs the request left out (Member.wanted) are absent; every one asked for is there
    (OutputMemory.arrays_or_problem says otherwise).
    """
    if problem is not None:
        raise problem
    return {name: arrays[name] for name in member.settings.outputs if name in arrays}
