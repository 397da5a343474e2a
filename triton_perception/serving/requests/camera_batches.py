"""
The request threads of a perception process's cameras: every ready camera in one request.

When a request thread is free it takes the frames of every camera of the process that has
one waiting, never waiting for a camera that has not, and sends them as one request to the
batched joined ensemble (`perception_x2` ... `perception_x4`, serving.server.batched_ensembles), at
most MAX_BATCH cameras a request. Frames of different sizes go together: each camera has its
own input. Results, headers, accounting and health stay each camera's own (its CameraRounds
delivers them), and one camera's bad frame never fails another's:
- a frame a node rejects is settled in its own `prepare`, before the request;
- a batched request the server refuses for another reason than being unreachable or slow is
  sent again one camera at a time, so only the camera whose frame the server refused fails; a
  batch that timed out fails its frames at once (sending them again would wait as long again,
  per camera, on a server already slow);
- any other fault in a round (a bug, a region lost) fails the frames of that round only, and
  the thread serves the next.
A camera whose frames the joined ensemble does not serve (own models, one node only) is sent
alone, as its own worker would. With a request gate (`camera_priorities`), each camera in a
request holds one of the gate's slots, granted in the policy's order. Knows nothing of ROS.
"""
from __future__ import annotations

from contextlib import contextmanager
from functools import partial
import threading
import time
from typing import Iterator, NamedTuple

import tritonclient.grpc as grpcclient
from tritonclient.utils import InferenceServerException

from triton_perception.frames import RequestTimes
from triton_perception.serving.requests.camera_rounds import CameraRounds, fail_round, Outputs
from triton_perception.serving.requests.joined_requests import (CameraRound, JoinedModel,
                                                                read_joined_model, Request)
from triton_perception.serving.requests.output_memory import OutputMemory
from triton_perception.serving.requests.request_errors import is_timeout, is_unreachable
from triton_perception.serving.requests.request_gate import RequestGate
from triton_perception.serving.requests.request_inputs import FrameMemory
from triton_perception.serving.requests.request_sending import send
from triton_perception.serving.requests.request_threads import supervised
from triton_perception.serving.requests.triton_client import ClientSettings, make_client
from triton_perception.serving.server import batched_name, MAX_BATCH


class Turn(NamedTuple):
    """A camera's part in one round of the process's requests: its rounds and what it took."""

    camera: CameraRounds
    taken: CameraRound


def camera_suffix(camera: int) -> str:
    """Return what camera number `camera`'s tensor names carry in a batched request."""
    return f'_{camera}'


class CameraBatches:
    """One process's request threads, shared by its cameras' rounds (CameraRounds)."""

    def __init__(self, gate: RequestGate | None = None, most: int = MAX_BATCH) -> None:
        """Send at most `most` cameras a request; `gate` grants them by the process's policy."""
        if not 1 <= most <= MAX_BATCH:
            raise ValueError(f'a request carries 1 to {MAX_BATCH} cameras, not {most}')
        self._gate = gate
        self._most = most
        self._condition = threading.Condition()
        self._cameras: tuple[CameraRounds, ...] = ()  # replaced, never changed in place
        self._in_flight: dict[CameraRounds, int] = {}
        self._sent: dict[CameraRounds, int] = {}  # when each camera was last taken
        self._rounds = 0
        self._threads: list[threading.Thread] = []
        self._stopping = False
        self._holding = 0
        # What the server serves of the batched ensembles, read once per connection generation.
        self._batched: dict[str, JoinedModel | None] = {}
        self._batched_generation = -1

    def add(self, camera: CameraRounds, settings: ClientSettings) -> None:
        """Serve `camera`'s frames; the first camera's settings start the request threads."""
        with self._condition:
            self._cameras = (*self._cameras, camera)
            if self._threads:
                return
            self._stopping = False
            log = camera.log
            self._threads = [threading.Thread(
                target=supervised(partial(self._request_loop, settings), log,
                                  f'process request thread {index}'),
                daemon=True, name=f'process-request-{index}')
                for index in range(settings.max_in_flight)]
            threads = list(self._threads)
        for thread in threads:
            thread.start()

    def remove(self, camera: CameraRounds, timeout_s: float) -> None:
        """Serve `camera` no more once its requests in flight are answered (`timeout_s` at most)."""
        deadline = time.monotonic() + timeout_s
        with self._condition:
            self._cameras = tuple(other for other in self._cameras if other is not camera)
            self._condition.wait_for(lambda: not self._in_flight.get(camera),
                                     max(0.0, deadline - time.monotonic()))
            if self._cameras or not self._threads:
                return
            threads, self._threads = self._threads, []
            self._stopping = True
            self._condition.notify_all()
        if self._gate is not None:
            self._gate.frame_arrived()  # a thread waiting at the gate looks again and sees none
        for thread in threads:
            thread.join(timeout=max(0.0, deadline - time.monotonic()))

    def frame_arrived(self) -> None:
        """Wake the request threads: a camera's frames may have become takeable."""
        with self._condition:
            self._condition.notify_all()
        if self._gate is not None:
            self._gate.frame_arrived()

    @contextmanager
    def holding(self) -> Iterator[None]:
        """Hold requests back while several cameras' frames are handed over as one set."""
        with self._condition:
            self._holding += 1
        try:
            yield
        finally:
            with self._condition:
                self._holding -= 1
            self.frame_arrived()

    def _ready(self) -> list[CameraRounds]:
        if self._holding:
            return []
        return [camera for camera in self._cameras if camera.takeable()]

    def _next_cameras(self) -> list[CameraRounds] | None:
        """Wait for cameras with frames; return those to serve now, None once stopping."""
        if self._gate is None:
            with self._condition:
                self._condition.wait_for(lambda: self._stopping or bool(self._ready()))
                if self._stopping:
                    return None
                # Least recently sent first: with more ready cameras than a request carries,
                # each gets its turn.
                chosen = sorted(self._ready(),
                                key=lambda camera: self._sent.get(camera, -1))[:self._most]
                for camera in chosen:
                    self._in_flight[camera] = self._in_flight.get(camera, 0) + 1
                    self._rounds += 1
                    self._sent[camera] = self._rounds
                return chosen
        by_name: dict[str, CameraRounds] = {}

        def ready() -> list[str] | None:
            if self._stopping:
                return None
            by_name.clear()
            by_name.update((camera.camera, camera) for camera in self._ready())
            return list(by_name)

        names = self._gate.wait_batch(ready, self._most)
        if names is None:
            return None
        with self._condition:
            chosen = [by_name[name] for name in names]
            for camera in chosen:
                self._in_flight[camera] = self._in_flight.get(camera, 0) + 1
        return chosen

    def _finished(self, cameras: list[CameraRounds]) -> None:
        with self._condition:
            for camera in cameras:
                self._in_flight[camera] -= 1
            self._condition.notify_all()
        if self._gate is not None:
            for camera in cameras:
                self._gate.done(camera.camera)

    def _request_loop(self, settings: ClientSettings) -> None:
        client = make_client(settings)
        outputs: Outputs = {}
        leases: dict[CameraRounds, FrameMemory] = {}
        try:
            while (cameras := self._next_cameras()) is not None:
                rounds: list[Turn] = []
                try:
                    for camera in cameras:
                        if (taken := camera.take(client)) is not None:
                            rounds.append(Turn(camera, taken))
                    self._serve(client, outputs, leases, rounds)
                except Exception as error:  # noqa: BLE001 (settle the rounds, serve the next)
                    for turn in rounds:
                        fail_round(turn.taken.frames, error)
                finally:
                    self._finished(cameras)
                for gone in [camera for camera in leases if camera not in self._cameras]:
                    leases.pop(gone).close(client)  # its last lease frees its regions
        finally:
            for lease in leases.values():
                lease.close(client)
            for memory in outputs.values():
                memory.close(client)
            client.close()

    def _serve(self, client: grpcclient.InferenceServerClient, outputs: Outputs,
               leases: dict[CameraRounds, FrameMemory], rounds: list[Turn]) -> None:
        """Send the joined rounds together where the server has their batched ensemble."""
        joined = [(turn, request) for turn in rounds
                  if (request := _joined_request(turn)) is not None]
        model = joined[0][0].camera.joined_model if joined else ''
        together = [pair for pair in joined if pair[0].camera.joined_model == model]
        batch = None
        if len(together) > 1:
            batch = self._batched_model(client, model, len(together), together[0][0].camera)
        alone = rounds
        if batch is not None and self._send_batch(client, outputs, leases, batch, together):
            sent = {id(turn) for turn, _request in together}
            alone = [turn for turn in rounds if id(turn) not in sent]
        # A batch refused is sent one camera at a time, so only the refused frame fails.
        for turn in alone:
            turn.camera.serve(client, outputs, _lease(leases, turn.camera), turn.taken)

    def _batched_model(self, client: grpcclient.InferenceServerClient, joined: str,
                       count: int, camera: CameraRounds) -> str | None:
        """Return the ensemble serving `count` cameras of `joined` at once, None if none does."""
        name = batched_name(joined, count)
        if camera.generation != self._batched_generation:  # the server restarted: ask again
            self._batched, self._batched_generation = {}, camera.generation
        if name not in self._batched:
            try:
                self._batched[name] = read_joined_model(client, name)
            except InferenceServerException:
                return None  # unreachable: each camera's own request fails with the reason
            if self._batched[name] is None:
                camera.say_once(f'no model {name} at the server: {count} cameras of this '
                                'process are sent one request each')
        return name if self._batched[name] is not None else None

    def _send_batch(self, client: grpcclient.InferenceServerClient, outputs: Outputs,
                    leases: dict[CameraRounds, FrameMemory], model: str,
                    together: list[tuple[Turn, Request]]) -> bool:
        """
        Send the cameras' joined requests as one and deliver each camera its answer.

        Return False, having settled nothing, when the server refuses the batch but is
        reachable: the caller then sends each camera alone.
        """
        wanted = tuple(name + camera_suffix(index)
                       for index, (_turn, request) in enumerate(together)
                       for name in request.outputs)
        first = together[0][0].camera
        key = (model, wanted)
        if key not in outputs:
            outputs[key] = OutputMemory(model, wanted, first.shared_memory, first.log)
        memory = outputs[key]
        parts = [turn.camera.part(_lease(leases, turn.camera), request.inputs,
                                  camera_suffix(index))
                 for index, (turn, request) in enumerate(together)]
        try:
            answer = send(client, model, parts, memory,
                          max(request.members[0].settings.timeout_s
                              for _turn, request in together))
        except Exception as error:  # noqa: BLE001 (any fault fails the frames it touched)
            if (isinstance(error, InferenceServerException) and not is_unreachable(error)
                    and not is_timeout(error)):
                return False
            for turn, request in together:
                turn.camera.fail_request(request, turn.taken, error)
            return True
        self._deliver(memory, answer.result, together, answer.times)
        return True

    def _deliver(self, memory: OutputMemory, result: grpcclient.InferResult,
                 together: list[tuple[Turn, Request]], times: RequestTimes) -> None:
        arrays, problem = memory.arrays_or_problem(result)
        for index, (turn, request) in enumerate(together):
            suffix = camera_suffix(index)
            own = {name: arrays[name + suffix] for name in request.outputs
                   if name + suffix in arrays}
            turn.camera.count_request(batched=True)
            turn.camera.deliver(request, turn.taken, own, problem, times)


def _lease(leases: dict[CameraRounds, FrameMemory], camera: CameraRounds) -> FrameMemory:
    """Return the request thread's lease on `camera`'s frame regions, taken once (closed last)."""
    if camera not in leases:
        leases[camera] = camera.lease_frames()
    return leases[camera]


def _joined_request(turn: Turn) -> Request | None:
    """Return the turn's one request to its joined ensemble, None if it is not one such."""
    requests = turn.taken.requests
    if len(requests) == 1 and requests[0].model == turn.camera.joined_model:
        return requests[0]
    return None
