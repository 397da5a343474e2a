"""
A camera's rounds: the frames its nodes hold at one moment, planned as requests, sent, delivered.

A request thread takes a camera's round, prepares each member's frame, plans one joined request
(or one per model where the joined ensemble does not serve the members), sends it and hands
each member its own outputs. The camera's own request threads (joined_worker) and the process's
shared ones (camera_batches, which may send several cameras' rounds as one request) do it
through this one object, made when the camera's first node joins and dropped when its last one
leaves, so the round's connection generation, inputs and counts belong to one connection.
Knows nothing of ROS.
"""
from __future__ import annotations

from functools import partial
import threading
from typing import Callable

import numpy as np
from numpy.typing import NDArray
import tritonclient.grpc as grpcclient

from triton_perception.frames import Frame, FrameMessage, RequestTimes
from triton_perception.serving.requests.connection_health import ConnectionHealth
from triton_perception.serving.requests.frame_fates import (deliver_and_settle, fail_unsettled,
                                                            prepare_or_settle, REQUEST)
from triton_perception.serving.requests.joined_requests import (CameraRound, HEALTH_OUTPUT,
                                                                JoinedModel, read_joined_model,
                                                                Request)
from triton_perception.serving.requests.joined_slot import JoinedSlot, Member, MemberFrames
from triton_perception.serving.requests.output_memory import OutputMemory
from triton_perception.serving.requests.request_inputs import FrameInputs, FrameMemory, Tensors
from triton_perception.serving.requests.request_sending import Part, send, settle_failure
from triton_perception.serving.requests.shared_frames import SharedFrames
from triton_perception.serving.requests.triton_client import ClientSettings
from triton_perception.serving.requests.worker_log import WorkerLog

JUDGING_HEALTH = 'judging health'
# Called with the frame's message and its health statistics, once per joined request.
StatisticsHook = Callable[[FrameMessage, NDArray[np.float32]], None]
# A request thread's output regions, by model and the outputs asked of it.
Outputs = dict[tuple[str, tuple[str, ...]], OutputMemory]


class CameraRounds:
    """One camera's rounds at one Triton server, for whichever request thread serves them."""

    def __init__(self, camera: str, joined_model: str, slot: JoinedSlot,
                 shared_frames: SharedFrames, settings: ClientSettings, health: ConnectionHealth,
                 log: WorkerLog, statistics: StatisticsHook | None) -> None:
        """
        Serve the frames `slot` holds for camera `camera` (its namespace) to `joined_model`.

        `settings`, `log`: the first member's; `health`: the camera's connection state;
        `statistics` gets each joined answer's health statistics.
        """
        self.camera = camera
        self.joined_model = joined_model
        self.log = log
        self._slot = slot
        self._shared_frames = shared_frames
        self._settings = settings
        self._health = health
        self._statistics = statistics
        self._inputs = FrameInputs(settings.shared_memory, settings.url, log)
        self._joined: dict[int, JoinedModel | None] = {}  # by connection generation
        self._lock = threading.Lock()
        self._joined_requests = 0  # requests that answered two or more members at once
        self._batched_requests = 0  # of those, requests that carried other cameras' frames too
        self._said: set[str] = set()

    @property
    def shared_memory(self) -> bool:
        """Whether frames and outputs go through shared memory (the first member's setting)."""
        return self._settings.shared_memory

    @property
    def generation(self) -> int:
        """Return the connection's count: it changes when the server restarts."""
        return self._health.generation

    def counts(self) -> dict[str, int]:
        """Return the joined requests and, of those, the batched ones."""
        with self._lock:
            return {'joined_requests': self._joined_requests,
                    'batched_requests': self._batched_requests}

    def say_once(self, text: str) -> None:
        """Log `text` once for the camera (e.g. how its frames are sent)."""
        if text not in self._said:
            self._said.add(text)
            self.log.info(text)

    def takeable(self) -> bool:
        """Whether the camera has frames a request thread may take now."""
        return self._slot.takeable()

    def lease_frames(self) -> FrameMemory:
        """Return a request thread's lease on the camera's frame regions (close it when done)."""
        return self._shared_frames.lease(self)

    def take(self, client: grpcclient.InferenceServerClient) -> CameraRound | None:
        """Take the camera's frames if takeable now and plan their requests."""
        frames = self._slot.take(wait=False)
        return None if frames is None else self.prepare(client, frames)

    def prepare(self, client: grpcclient.InferenceServerClient,
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

    def serve(self, client: grpcclient.InferenceServerClient, outputs: Outputs,
              shared: FrameMemory, taken: CameraRound) -> None:
        """Send the round's requests one after the other and deliver each answer."""
        for request in taken.requests:
            key = (request.model, request.outputs)
            if key not in outputs:
                outputs[key] = OutputMemory(request.model, request.outputs,
                                            request.members[0].settings.shared_memory,
                                            request.members[0].log)
            self._send(client, outputs[key], shared, request, taken)

    def part(self, lease: FrameMemory, inputs: Tensors, suffix: str = '') -> Part:
        """Return the camera's part of a request: `inputs` written through `lease`."""
        return Part(lease, inputs, self._inputs, self.generation, suffix)

    def count_request(self, batched: bool) -> None:
        """Count an answer that served two or more members (`batched`: with other cameras)."""
        with self._lock:
            self._joined_requests += 1
            self._batched_requests += int(batched)

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

    def _requests(self, client: grpcclient.InferenceServerClient, members: list[Member],
                  prepared: dict[str, Tensors]) -> list[Request]:
        """Return one joined request when the joined ensemble serves `members`, else one each."""
        generation = self._health.generation
        if generation not in self._joined:
            self._joined = {generation: read_joined_model(client, self.joined_model)}
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
        return [Request(self.joined_model, inputs, tuple(wanted), members)]

    def _say_plan(self, members: list[Member], joined: JoinedModel | None) -> None:
        models = ', '.join(member.settings.model for member in members)
        if joined is None:
            members[0].log.info(f'no model {self.joined_model} at the server: one request per '
                                f'model ({models}) for each camera frame')
        elif len(members) > 1 and not joined.serves(members):
            members[0].log.warning(
                f'{self.joined_model} serves {", ".join(sorted(joined.steps))}, not all of '
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
