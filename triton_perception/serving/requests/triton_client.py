"""
Asynchronous inference against Triton for a stream of frames; knows nothing of ROS.

The InferenceWorker composes the latest-frame slot (frame_slot), the readiness checks with
backoff (connection_health), the request inputs with their shared-memory fallback
(request_inputs), the large outputs through shared memory (output_memory) and the meaning of
failed calls (request_errors): a ROS callback hands a frame over and returns at once, at most
`max_in_flight` requests run, and when Triton is unreachable the worker waits with backoff and
resumes by itself.
"""
from __future__ import annotations

from dataclasses import dataclass, field
import ipaddress
import threading
import time
from typing import Callable

import grpc
import tritonclient.grpc as grpcclient

from triton_perception.frames import Frame, FrameAccounting
from triton_perception.serving.requests.connection_health import ConnectionHealth
from triton_perception.serving.requests.frame_fates import (deliver_and_settle, fail_with,
                                                            prepare_or_settle, REQUEST)
from triton_perception.serving.requests.frame_slot import LatestFrameSlot
from triton_perception.serving.requests.output_memory import OutputMemory
from triton_perception.serving.requests.request_inputs import (FrameInputs, FrameMemory,
                                                               SharedMemoryInput, Tensors)
from triton_perception.serving.requests.request_sending import Part, send, settle_failure
from triton_perception.serving.requests.request_threads import supervised
from triton_perception.serving.requests.shared_frames import SharedFrames
from triton_perception.serving.requests.worker_log import Log, WorkerLog

CHANNEL_ARGUMENTS = [
    ('grpc.max_send_message_length', 2**31 - 1),  # tritonclient's defaults: frames are large
    ('grpc.max_receive_message_length', 2**31 - 1),
    ('grpc.initial_reconnect_backoff_ms', 250),
    ('grpc.min_reconnect_backoff_ms', 250),
    ('grpc.max_reconnect_backoff_ms', 1000),
]


@dataclass(frozen=True, kw_only=True)
class TlsOptions:
    """PEM contents (not paths) for a TLS gRPC channel; all None means plain text."""

    root_certificates: str | None = None
    private_key: str | None = None
    certificate_chain: str | None = None

    @property
    def enabled(self) -> bool:
        """Whether any of the PEM contents is set, so that the channel uses TLS."""
        return bool(self.root_certificates or self.private_key or self.certificate_chain)


@dataclass(frozen=True, kw_only=True)
class ClientSettings:
    """
    How a worker reaches one Triton model.

    `url` is host:port of Triton's gRPC endpoint and `outputs` the output tensors to request.
    `max_in_flight` is the number of request threads (requests at once), `timeout_s` the time
    one request may take, and `max_backoff_s` the longest wait between reconnection checks.
    `transport` is 'auto', 'grpc' or 'shared_memory' (see `shared_memory`).
    """

    url: str
    model: str
    outputs: tuple[str, ...]
    max_in_flight: int = 1
    timeout_s: float = 5.0
    tls: TlsOptions = field(default_factory=TlsOptions)
    max_backoff_s: float = 1.5
    transport: str = 'auto'

    @property
    def shared_memory(self) -> bool:
        """'auto': frames go through shared memory when the server is on this host."""
        if self.transport != 'auto':
            return self.transport == 'shared_memory'
        return is_loopback(self.url.rsplit(':', 1)[0].strip('[]'))


def is_loopback(host: str) -> bool:
    """Return whether `host` is 'localhost' or a loopback IP address (not resolved by DNS)."""
    if host == 'localhost':
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def make_client(settings: ClientSettings) -> grpcclient.InferenceServerClient:
    """
    Make a gRPC client that reconnects within a second; TLS credentials from the PEM contents.

    Its default backoff grows to 120 s, which would delay recovery after a server restart.
    """
    tls = settings.tls
    credentials = grpc.ssl_channel_credentials(
        root_certificates=_pem(tls.root_certificates), private_key=_pem(tls.private_key),
        certificate_chain=_pem(tls.certificate_chain)) if tls.enabled else None
    return grpcclient.InferenceServerClient(settings.url, creds=credentials,
                                            channel_args=CHANNEL_ARGUMENTS)


def watch_connection(settings: ClientSettings, health: ConnectionHealth) -> None:
    """Watch the server with a client of its own until `health` stops (a connection thread)."""
    client = make_client(settings)
    try:
        health.watch(client)
    finally:
        client.close()


def _pem(text: str | None) -> bytes | None:
    return text.encode() if text else None


class InferenceWorker:
    """Owns the slot, the request threads and the connection state for one model."""

    def __init__(self, settings: ClientSettings, accounting: FrameAccounting,
                 prepare: Callable[[Frame], Tensors],
                 deliver: Callable[[Frame, Tensors, Tensors], None], log: Log,
                 shared_frames: SharedFrames | None = None) -> None:
        """
        Serve `settings.model`, counting every frame into `accounting`.

        `prepare` turns a frame into input tensors (raising FrameRejected for bad input).
        `deliver` publishes the inputs and outputs of a finished request.
        `shared_frames`: the camera's frame regions, shared with the workers of its other models
        so that a frame is written into shared memory once; None gives each request thread a
        region of its own.
        """
        self.settings = settings
        self._shared_frames = shared_frames
        self._accounting = accounting
        self._prepare = prepare
        self._deliver = deliver
        self._log = WorkerLog(log)
        self._slot = LatestFrameSlot(accounting)
        self._health = ConnectionHealth(settings.url, lambda: (settings.model,),
                                        settings.max_backoff_s,
                                        self._slot, self._log)
        self._inputs = FrameInputs(settings.shared_memory, settings.url, self._log)
        self._threads = [threading.Thread(target=self._connection_loop, daemon=True,
                                          name=f'{settings.model}-connection')]
        self._threads += [threading.Thread(
            target=supervised(self._request_loop, self._log, f'request thread {index}'),
            daemon=True, name=f'{settings.model}-request-{index}')
                          for index in range(settings.max_in_flight)]

    def start(self) -> None:
        """Start the connection thread and the `max_in_flight` request threads."""
        for thread in self._threads:
            thread.start()

    def stop(self, reason: str = 'shutting down', timeout_s: float = 2.0) -> None:
        """Stop taking frames; a frame still waiting in the slot is counted as dropped."""
        self._log.quiet()  # the node's logger may already be gone during shutdown
        self._slot.stop(reason)
        self._health.stop()
        deadline = time.monotonic() + timeout_s
        for thread in self._threads:
            thread.join(timeout=max(0.0, deadline - time.monotonic()))

    @property
    def ready(self) -> bool:
        """Whether the model was ready at the last check; frames submitted while not are dropped."""
        return self._health.ready

    @property
    def status(self) -> str:
        """Return the connection state in words, e.g. why Triton is not ready (/diagnostics)."""
        return self._health.status

    def submit(self, frame: Frame) -> None:
        """Never blocks on Triton: fills the slot, replacing (dropping) a waiting frame."""
        self._slot.put(frame)

    def figures(self) -> dict[str, str]:
        """Return the precision served and its calibration (the rest is the accounting's)."""
        return dict(self._health.served)

    def _connection_loop(self) -> None:
        watch_connection(self.settings, self._health)

    def _request_loop(self) -> None:
        client = make_client(self.settings)
        outputs = OutputMemory(self.settings.model, self.settings.outputs,
                               self.settings.shared_memory, self._log)
        shared: FrameMemory = (SharedMemoryInput(self.settings.model)
                               if self._shared_frames is None else self._shared_frames.lease(self))
        try:
            while (frame := self._slot.take()) is not None:
                try:
                    self._process(client, outputs, shared, frame)
                except Exception as error:  # noqa: BLE001 (settle the frame, serve the next)
                    fail_with(self._accounting, self._log, frame, REQUEST, error)
        finally:
            shared.close(client)
            outputs.close(client)
            client.close()

    def _process(self, client: grpcclient.InferenceServerClient,
                 outputs: OutputMemory, shared: FrameMemory,
                 frame: Frame) -> None:
        inputs = prepare_or_settle(self._accounting, self._log, self._prepare, frame)
        if inputs is None:
            return
        try:
            answer = send(client, self.settings.model,
                          [Part(shared, inputs, self._inputs, self._health.generation)],
                          outputs, self.settings.timeout_s)
        except Exception as error:  # noqa: BLE001 (any fault settles the frame, the thread goes on)
            settle_failure(self._accounting, self._log, frame, self.settings.model,
                           self.settings.timeout_s, error, self._health)
            return
        deliver_and_settle(self._accounting, self._log, self._deliver, frame, inputs,
                           lambda: outputs.arrays(answer.result), answer.times)
