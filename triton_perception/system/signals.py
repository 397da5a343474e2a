"""
SIGINT and SIGTERM, caught in one place for every process the package runs.

Three ways a process of the package takes a stop signal, each what its work needs:
- recorded, never raised (`StopRequest`): node processes, the bag tools, `run`, `wait-ready`,
  the server wrapper (system.stops_last). CPython runs a Python handler in the main thread
  between two bytecodes of whatever runs there; in a node process that can be the middle of
  rclpy's take, where an exception becomes a RuntimeError of the conversion (see
  nodes.node_process). So the handler only records which signals came and when, sets an event
  and calls an optional hook; the process acts on the record in its own time;
- raised (`raise_on_signals`): `server` and `bench`, which unwind through their `finally`
  blocks to stop every process they started, raise `Interrupted`;
- ignored (`ignore_stop_signals`): a process that is only exiting, so that a late signal cannot
  change its exit code (CPython resets Python-level handlers as the interpreter exits).
"""
from __future__ import annotations

import signal
import threading
import time
from typing import Callable

from triton_perception.errors import TritonPerceptionError

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class StopRequest:
    """
    SIGINT and SIGTERM recorded as a request to stop; the handler never raises.

    The first signal is kept (`signal_name`) and sets `event`; every signal's first arrival is
    kept in `received` (monotonic seconds by name), so that a wrapper can tell a terminal's
    Ctrl-C from launch's SIGTERM. Later signals of the same name change nothing.
    """

    def __init__(self, on_request: Callable[[str], None] | None = None) -> None:
        """Record nothing yet; `on_request` is called with the first signal's name."""
        self.event = threading.Event()
        self.signal_name = ''
        self.received: dict[str, float] = {}
        self._on_request = on_request

    @classmethod
    def on_signals(cls, on_request: Callable[[str], None] | None = None) -> StopRequest:
        """
        Install the handlers; `on_request` is called with the first signal's name.

        In a node process install them before rclpy.init to keep rclpy's own handlers, which
        chain to these and also wake the executor and shut the context down; after it, to
        replace them.
        """
        request = cls(on_request)
        for number in STOP_SIGNALS:
            signal.signal(number, request.record)
        return request

    @property
    def requested(self) -> bool:
        """Return whether a stop signal arrived."""
        return self.event.is_set()

    def record(self, signum: int, _frame: object) -> None:
        """Record `signum` (a signal handler: it never raises)."""
        name = signal.Signals(signum).name
        self.received.setdefault(name, time.monotonic())
        if self.event.is_set():
            return
        self.signal_name = name
        self.event.set()
        if self._on_request is not None:
            self._on_request(name)


class Interrupted(TritonPerceptionError, RuntimeError):
    """SIGINT or SIGTERM arrived; unwind and stop child processes."""


def raise_on_signals() -> None:
    """Turn SIGINT and SIGTERM into Interrupted, so that cleanup code runs on both."""
    def handler(signum: int, _frame: object) -> None:
        raise Interrupted(signal.Signals(signum).name)
    for number in STOP_SIGNALS:
        signal.signal(number, handler)


def ignore_stop_signals() -> None:
    """
    Ignore SIGINT and SIGTERM from here on: the process only exits, with the code it has.

    As the interpreter exits, CPython resets every Python-level handler to the default, so a
    signal then (the second of two SIGINTs, from the terminal and from launch) would end the
    process with -2 or -15; an ignored signal stays ignored.
    """
    for number in STOP_SIGNALS:
        signal.signal(number, signal.SIG_IGN)
