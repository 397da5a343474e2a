"""
Asynchronous inference against Triton for a stream of frames; knows nothing of ROS.

One latest-frame slot and at most `max_in_flight` requests: a ROS callback hands a frame over
and returns at once; a newer frame replaces a waiting one (the old one is counted as dropped),
so nothing queues without bound and results stay fresh. When Triton is unreachable the worker
waits with backoff and resumes by itself.
"""
from __future__ import annotations

from dataclasses import dataclass, field
import ipaddress
import itertools
from multiprocessing.shared_memory import SharedMemory
import os
import threading
import time
from typing import Any, Callable, Protocol

import grpc
import numpy as np
import tritonclient.grpc as grpcclient
from tritonclient.utils import InferenceServerException, np_to_triton_dtype

from triton_perception.frames.accounting import Fate, FrameAccounting, FrameRejected, RequestTimes

Tensors = dict[str, np.ndarray]
# Status codes that mean "the server is gone", as opposed to "this request was bad".
UNREACHABLE = ('StatusCode.UNAVAILABLE', 'StatusCode.CANCELLED', 'StatusCode.UNKNOWN')
TIMEOUT = 'StatusCode.DEADLINE_EXCEEDED'
INITIAL_BACKOFF_S = 0.25
CHANNEL_ARGUMENTS = [
    ('grpc.max_send_message_length', 2**31 - 1),  # tritonclient's defaults: frames are large
    ('grpc.max_receive_message_length', 2**31 - 1),
    ('grpc.initial_reconnect_backoff_ms', 250),
    ('grpc.min_reconnect_backoff_ms', 250),
    ('grpc.max_reconnect_backoff_ms', 1000),
]
HEALTH_CHECK_PERIOD_S = 1.0
# A readiness check that takes longer counts as unreachable: gRPC sets no deadline of its own,
# and a hung server must show in /diagnostics within seconds, as a stopped one does.
HEALTH_CHECK_TIMEOUT_S = 2.0
# While Triton is away, "waiting for Triton" is logged every WAITING_LOG_BACKOFFS backoff waits,
# but not more often than every 5 s (the log stays readable while the backoff is short) nor
# less often than every 30 s (the log still shows the wait goes on).
WAITING_LOG_BACKOFFS = 4
WAITING_LOG_MIN_INTERVAL_S = 5.0
WAITING_LOG_MAX_INTERVAL_S = 30.0
SHARED_INPUT = 'IMAGE'
_region_numbers = itertools.count()


class Log(Protocol):
    """The logging a node gives the worker (rclpy's logger, with per-frame problems throttled)."""

    def info(self, message: str) -> None:
        """Log `message` at info level."""

    def warning(self, message: str) -> None:
        """Log `message` at warning level."""

    def frame_problem(self, message: str) -> None:
        """Report a per-frame problem; the implementation throttles these."""


@dataclass
class Frame:
    """A received frame on its way through the slot; `message` is opaque to this module."""

    message: Any
    received_at: float


@dataclass(frozen=True)
class TlsOptions:
    """PEM contents (not paths) for a TLS gRPC channel; all None means plain text."""

    root_certificates: str | None = None
    private_key: str | None = None
    certificate_chain: str | None = None

    @property
    def enabled(self) -> bool:
        """Whether any of the PEM contents is set, so that the channel uses TLS."""
        return bool(self.root_certificates or self.private_key or self.certificate_chain)


@dataclass(frozen=True)
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


def _pem(text: str | None) -> bytes | None:
    return text.encode() if text else None


def infer_inputs(tensors: Tensors) -> list[grpcclient.InferInput]:
    """Return gRPC inputs carrying each array's bytes in the request, in C order."""
    inputs = []
    for name, array in tensors.items():
        tensor = grpcclient.InferInput(name, list(array.shape), np_to_triton_dtype(array.dtype))
        tensor.set_data_from_numpy(np.ascontiguousarray(array))
        inputs.append(tensor)
    return inputs


class _SilentLog:

    def info(self, message: str) -> None:
        del message

    def warning(self, message: str) -> None:
        del message

    def frame_problem(self, message: str) -> None:
        del message


_SILENT = _SilentLog()


class SharedMemoryInput:
    """
    The frame tensor through Triton system shared memory instead of the gRPC message.

    One region per request thread, named after the model and process, created owner-only
    (0600) by Python's SharedMemory. It is unlinked on close, and by Python's resource tracker
    if the process dies. Registrations are repeated after the server restarts (`generation`).
    """

    def __init__(self, model: str) -> None:
        """Name the region after `model`, this process and a counter; nothing is allocated yet."""
        self.name = f'triton_perception_{model}_{os.getpid()}_{next(_region_numbers)}'
        self._memory: SharedMemory | None = None
        self._registered_generation = -1

    def tensor(self, client: grpcclient.InferenceServerClient, array: np.ndarray,
               generation: int) -> grpcclient.InferInput:
        """
        Copy `array` into the region and return the input that points Triton at it.

        The region is created on first use and re-created (closed, unregistered and unlinked,
        then created again) when `array` is larger than it; a smaller array reuses it. A region of
        this name left by a killed process whose pid this process now has is unlinked first. A
        new region is registered with the server, and an existing one again when `generation`
        differs from the one it was registered under, since a restarted server has lost the
        registration; an earlier registration under the name is removed first. The array's bytes
        are then copied into the region, and the returned input, named IMAGE, refers to its
        first `array.nbytes` bytes.

        `client`: the gRPC client of the server that reads the region.
        `array`: the frame tensor.
        `generation`: the worker's connection count; it changes when the server restarts.

        Returns an InferInput for IMAGE with its shape and dtype, set to read the shared memory.
        """
        if self._memory is None or array.nbytes > self._memory.size:
            self.close(client)
            try:
                self._memory = SharedMemory(name=self.name, create=True,
                                            size=max(1, array.nbytes))
            except FileExistsError:  # left by a killed process that had our pid
                SharedMemory(name=self.name).unlink()
                self._memory = SharedMemory(name=self.name, create=True,
                                            size=max(1, array.nbytes))
        if self._registered_generation != generation:
            try:
                client.unregister_system_shared_memory(self.name)
            except InferenceServerException:
                pass  # not registered with this server instance
            client.register_system_shared_memory(self.name, f'/{self.name}',
                                                 self._memory.size)
            self._registered_generation = generation
        np.ndarray(array.shape, array.dtype, buffer=self._memory.buf)[...] = array
        tensor = grpcclient.InferInput(SHARED_INPUT, list(array.shape),
                                       np_to_triton_dtype(array.dtype))
        tensor.set_shared_memory(self.name, array.nbytes)
        return tensor

    def forget_registration(self) -> None:
        """
        Forget the registration the server lost (it restarted between two requests).

        The next request registers the region again.
        """
        self._registered_generation = -1

    def close(self, client: grpcclient.InferenceServerClient | None) -> None:
        """
        Unregister the region from the server (if `client` is given), then close and unlink it.

        Does nothing without a region; an unregister the server cannot answer is ignored.
        """
        if self._memory is None:
            return
        if client is not None and self._registered_generation >= 0:
            try:
                client.unregister_system_shared_memory(self.name)
            except InferenceServerException:
                pass  # the server is gone; its registration went with it
        self._memory.close()
        self._memory.unlink()
        self._memory = None
        self._registered_generation = -1


class InferenceWorker:
    """Owns the slot, the request threads and the connection state for one model."""

    def __init__(self, settings: ClientSettings, accounting: FrameAccounting,
                 prepare: Callable[[Frame], Tensors],
                 deliver: Callable[[Frame, Tensors, Tensors], None], log: Log) -> None:
        """
        `prepare` turns a frame into input tensors (raising FrameRejected for bad input).

        `deliver` publishes the inputs and outputs of a finished request.
        """
        self.settings = settings
        self._accounting = accounting
        self._prepare = prepare
        self._deliver = deliver
        self._ros_log = log
        self._condition = threading.Condition()
        self._slot: Frame | None = None
        self._ready = False
        self._generation = 0  # counts (re)connections: server restarts lose registrations
        self._shared_memory = settings.shared_memory
        self._status = f'connecting to Triton at {settings.url}'
        self._stopping = False
        self._wake_connection = threading.Event()
        self._threads = [threading.Thread(target=self._connection_loop, daemon=True,
                                          name=f'{settings.model}-connection')]
        self._threads += [threading.Thread(target=self._request_loop, daemon=True,
                                           name=f'{settings.model}-request-{index}')
                          for index in range(settings.max_in_flight)]

    def start(self) -> None:
        """Start the connection thread and the `max_in_flight` request threads."""
        for thread in self._threads:
            thread.start()

    def stop(self, reason: str = 'shutting down', timeout_s: float = 2.0) -> None:
        """Stop taking frames; a frame still waiting in the slot is counted as dropped."""
        with self._condition:
            self._stopping = True
            self._drop_slot(reason)
            self._condition.notify_all()
        self._wake_connection.set()
        deadline = time.monotonic() + timeout_s
        for thread in self._threads:
            thread.join(timeout=max(0.0, deadline - time.monotonic()))

    @property
    def _log(self) -> Log:
        """Quiet once stopping: the node's logger may already be gone during shutdown."""
        return _SILENT if self._stopping else self._ros_log

    @property
    def ready(self) -> bool:
        """Whether the model was ready at the last check; frames submitted while not are dropped."""
        return self._ready

    @property
    def status(self) -> str:
        """Return the connection state in words, e.g. why Triton is not ready (/diagnostics)."""
        return self._status

    def submit(self, frame: Frame) -> None:
        """Never blocks on Triton: fills the slot, replacing (dropping) a waiting frame."""
        with self._condition:
            if not self._ready or self._stopping:
                self._accounting.settle(Fate.DROPPED, frame.received_at, 'triton not ready')
                return
            self._drop_slot('replaced by a newer frame')
            self._slot = frame
            # The connection thread waits on the same condition: wake every waiter.
            self._condition.notify_all()

    def _drop_slot(self, reason: str) -> None:
        if self._slot is not None:
            self._accounting.settle(Fate.DROPPED, self._slot.received_at, reason)
            self._slot = None

    def _set_unready(self, reason: str) -> None:
        with self._condition:
            if self._ready:
                self._log.warning(f'lost Triton at {self.settings.url} '
                                  f'(model {self.settings.model}): {reason}')
            self._ready = False
            self._status = reason
            self._drop_slot('triton not ready')
            self._condition.notify_all()
        self._wake_connection.set()

    def _connection_loop(self) -> None:
        """
        Check the model once a second while ready, and with backoff while it is not.

        A crashed server then shows in diagnostics even when no frame is in flight.
        """
        client = make_client(self.settings)
        backoff_s = INITIAL_BACKOFF_S
        next_log = 0.0
        while not self._stopping:
            problem = self._model_problem(client)
            if problem is None:
                if not self._ready:
                    with self._condition:
                        self._ready = True
                        self._generation += 1
                        self._status = 'ready'
                        self._condition.notify_all()
                    self._log.info(f'Triton ready at {self.settings.url} '
                                   f'(model {self.settings.model})')
                    backoff_s, next_log = INITIAL_BACKOFF_S, 0.0
                self._wake_connection.wait(HEALTH_CHECK_PERIOD_S)
                self._wake_connection.clear()
                continue
            if self._ready:
                self._set_unready(problem)
            self._status = problem
            if time.monotonic() >= next_log:
                self._log.warning(f'waiting for Triton at {self.settings.url} (model '
                                  f'{self.settings.model}): {problem}')
                next_log = time.monotonic() + min(
                    WAITING_LOG_MAX_INTERVAL_S,
                    max(WAITING_LOG_MIN_INTERVAL_S, WAITING_LOG_BACKOFFS * backoff_s))
            self._wake_connection.wait(backoff_s)
            self._wake_connection.clear()
            backoff_s = min(self.settings.max_backoff_s, backoff_s * 2)
        client.close()

    def _model_problem(self, client: grpcclient.InferenceServerClient) -> str | None:
        try:
            if client.is_model_ready(self.settings.model, client_timeout=HEALTH_CHECK_TIMEOUT_S):
                return None
            return f'model {self.settings.model} is not ready'
        except InferenceServerException as error:
            return f'server unreachable ({error.status() or error.message()})'

    def _take(self) -> Frame | None:
        with self._condition:
            while not self._stopping and (self._slot is None or not self._ready):
                self._condition.wait()
            if self._stopping:
                return None
            frame, self._slot = self._slot, None
            return frame

    def _request_loop(self) -> None:
        client = make_client(self.settings)
        outputs = [grpcclient.InferRequestedOutput(name) for name in self.settings.outputs]
        shared = SharedMemoryInput(self.settings.model)
        try:
            while (frame := self._take()) is not None:
                self._process(client, outputs, shared, frame)
        finally:
            shared.close(client)
            client.close()

    def _request_inputs(self, client: grpcclient.InferenceServerClient,
                        shared: SharedMemoryInput, inputs: Tensors) -> list[grpcclient.InferInput]:
        """
        Return the frame through shared memory when enabled.

        gRPC for everything else and as the fallback when the server refuses shared memory (e.g. it
        is on another host).
        """
        if not (self._shared_memory and SHARED_INPUT in inputs):
            return infer_inputs(inputs)
        try:
            frame_tensor = shared.tensor(client, inputs[SHARED_INPUT], self._generation)
        except InferenceServerException as error:
            if error.status() in UNREACHABLE:
                raise
            self._shared_memory = False
            shared.close(client)
            self._log.warning(f'Triton at {self.settings.url} refused shared memory '
                              f'({error.message()}); sending frames over gRPC')
            return infer_inputs(inputs)
        rest = {name: array for name, array in inputs.items() if name != SHARED_INPUT}
        return [frame_tensor, *infer_inputs(rest)]

    def _process(self, client: grpcclient.InferenceServerClient,
                 outputs: list[grpcclient.InferRequestedOutput], shared: SharedMemoryInput,
                 frame: Frame) -> None:
        try:
            inputs = self._prepare(frame)
        except FrameRejected as rejection:
            self._accounting.settle(Fate.REJECTED, frame.received_at, rejection.reason)
            self._log.frame_problem(
                f'rejected a frame: {rejection} ({self._accounting.count(Fate.REJECTED)} '
                'rejected so far)')
            return
        except Exception as error:  # noqa: BLE001 (a bug must not stop the worker thread)
            self._accounting.settle(Fate.FAILED, frame.received_at,
                                    f'preparing the request: {type(error).__name__}: {error}')
            self._log.frame_problem(f'could not prepare a request: {error!r}')
            return
        try:
            request_inputs = self._request_inputs(client, shared, inputs)
            sent_at = time.monotonic()
            result = client.infer(self.settings.model, request_inputs, outputs=outputs,
                                  client_timeout=self.settings.timeout_s)
            answered_at = time.monotonic()
        except InferenceServerException as error:
            if 'shared memory' in (error.message() or ''):
                shared.forget_registration()
            self._request_failed(frame, error)
            return
        try:
            self._deliver(frame, inputs,
                          {name: result.as_numpy(name) for name in self.settings.outputs})
        except Exception as error:  # noqa: BLE001 (any publishing fault must be counted)
            self._accounting.settle(Fate.FAILED, frame.received_at,
                                    f'result handling: {type(error).__name__}: {error}')
            self._log.frame_problem(f'could not publish the result: {error}')
            return
        self._accounting.settle(Fate.PUBLISHED, frame.received_at,
                                request=RequestTimes(sent_at, answered_at))

    def _request_failed(self, frame: Frame, error: InferenceServerException) -> None:
        status = error.status() or ''
        if status == TIMEOUT:
            reason = f'timeout after {self.settings.timeout_s:g} s'
        elif status in UNREACHABLE:
            reason = 'server unreachable'
        else:
            reason = f'server error: {error.message()}'
        self._accounting.settle(Fate.FAILED, frame.received_at, reason)
        self._log.frame_problem(f'inference failed ({self.settings.model}): {reason}')
        if status in UNREACHABLE:
            self._set_unready(reason)
