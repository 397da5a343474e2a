"""
Whether a worker's Triton models are ready: checked each second while they are, with backoff if not.

A crashed server then shows in diagnostics even when no frame is in flight, and the worker
resumes by itself when the server comes back. The checks open and close the latest-frame slot.
"""
from __future__ import annotations

import threading
import time
from typing import Callable, Protocol, Sequence

import tritonclient.grpc as grpcclient
from tritonclient.utils import InferenceServerException

from triton_perception.serving.requests.request_errors import unreachable_reason
from triton_perception.serving.requests.worker_log import Log

INITIAL_BACKOFF_S = 0.25
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


def model_problem(client: grpcclient.InferenceServerClient, model: str) -> str | None:
    """Return why `model` cannot take requests now, or None when it is ready."""
    try:
        if client.is_model_ready(model, client_timeout=HEALTH_CHECK_TIMEOUT_S):
            return None
        return f'model {model} is not ready'
    except InferenceServerException as error:
        return unreachable_reason(error)


def served_precision(client: grpcclient.InferenceServerClient,
                     models: Sequence[str]) -> dict[str, str]:
    """
    Return the precision `models` are served at and the calibration it came from (/diagnostics).

    Read from the model steps' config parameters `precision` and `calibration`, which the
    server's repository view writes for INT8 (serving/server/profile_repository.py); an ensemble's
    steps are followed. A step whose config cannot be read counts as 'unknown'. Without any
    such parameter the float graphs are served: 'fp'.
    """
    found: dict[str, tuple[str, str]] = {}
    pending, seen = list(models), set()
    while pending:
        name = pending.pop(0)
        if name in seen:
            continue
        seen.add(name)
        try:
            config = client.get_model_config(name, client_timeout=HEALTH_CHECK_TIMEOUT_S).config
        except InferenceServerException:
            found[name] = ('unknown', '')
            continue
        if config.platform == 'ensemble':
            pending += [step.model_name for step in config.ensemble_scheduling.step]
        elif 'precision' in config.parameters:
            parameters = config.parameters
            found[name] = (parameters['precision'].string_value,
                           parameters['calibration'].string_value
                           if 'calibration' in parameters else '')
    precisions = sorted({precision for precision, _ in found.values()})
    precision = precisions[0] if len(precisions) == 1 else 'mixed: ' + ', '.join(
        f'{name} {value}' for name, (value, _) in sorted(found.items())) if precisions else 'fp'
    calibrations = dict.fromkeys(calibration for _, calibration in found.values() if calibration)
    return {'precision': precision, 'calibration': '; '.join(calibrations)}


def models_problem(client: grpcclient.InferenceServerClient, models: Sequence[str]) -> str | None:
    """Return why one of `models` cannot take requests now, or None when all are ready."""
    for model in models:
        problem = model_problem(client, model)
        if problem is not None:
            return problem
    return None


class SlotControl(Protocol):
    """What the connection checks open and close: a worker's slot of waiting frames."""

    @property
    def accepting(self) -> bool:
        """Whether frames are taken."""

    def accept_frames(self) -> None:
        """Take frames from now on."""

    def refuse_frames(self) -> bool:
        """Drop waiting frames and refuse new ones; say whether frames were taken until now."""


class ConnectionHealth:
    """The connection state of one worker: ready or why not, and how often it (re)connected."""

    def __init__(self, url: str, models: Callable[[], Sequence[str]], max_backoff_s: float,
                 slot: SlotControl, log: Log) -> None:
        """
        Watch `models()` at `url`; open `slot` while they are ready and close it when not.

        `models` is called at every check: the models a worker sends to may change (a joined
        worker's members come and go). `max_backoff_s` is the longest wait between checks
        while a model is not ready.
        """
        self._url = url
        self._models = models
        self._max_backoff_s = max_backoff_s
        self._slot = slot
        self._log = log
        self._status = f'connecting to Triton at {url}'
        self.served: dict[str, str] = {}  # served_precision, read when the models became ready
        # Counts (re)connections: a restarted server has lost its shared-memory registrations.
        self.generation = 0
        self._stopping = False
        self._wake = threading.Event()

    @property
    def ready(self) -> bool:
        """Whether the model was ready at the last check."""
        return self._slot.accepting

    @property
    def status(self) -> str:
        """Return the connection state in words, e.g. why Triton is not ready (/diagnostics)."""
        return self._status

    def lost(self, reason: str) -> None:
        """Close the slot for `reason` (a request found the server gone) and check again now."""
        if self._slot.refuse_frames():
            self._log.warning(f'lost Triton at {self._url} ({self._names()}): {reason}')
        self._status = reason
        self._wake.set()

    def stop(self) -> None:
        """End `watch` at its next wake-up, which is now."""
        self._stopping = True
        self._wake.set()

    def watch(self, client: grpcclient.InferenceServerClient) -> None:
        """Check the model through `client` until `stop`: each period while ready, else backoff."""
        backoff_s = INITIAL_BACKOFF_S
        next_log = 0.0
        while not self._stopping:
            problem = models_problem(client, self._models())
            if problem is None:
                if not self._slot.accepting:
                    self.generation += 1
                    self._status = 'ready'
                    self.served = served_precision(client, self._models())
                    self._slot.accept_frames()
                    self._log.info(f'Triton ready at {self._url} ({self._names()})')
                    backoff_s, next_log = INITIAL_BACKOFF_S, 0.0
                self._wait(HEALTH_CHECK_PERIOD_S)
                continue
            if self._slot.accepting:
                self.lost(problem)
            self._status = problem
            if time.monotonic() >= next_log:
                self._log.warning(f'waiting for Triton at {self._url} ({self._names()}): '
                                  f'{problem}')
                next_log = time.monotonic() + min(
                    WAITING_LOG_MAX_INTERVAL_S,
                    max(WAITING_LOG_MIN_INTERVAL_S, WAITING_LOG_BACKOFFS * backoff_s))
            self._wait(backoff_s)
            backoff_s = min(self._max_backoff_s, backoff_s * 2)

    def _names(self) -> str:
        models = self._models()
        return f'model{"s" if len(models) > 1 else ""} {", ".join(models)}'

    def _wait(self, seconds: float) -> None:
        self._wake.wait(seconds)
        self._wake.clear()
