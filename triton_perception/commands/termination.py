"""
SIGINT and SIGTERM as an exception, for commands that start child processes.

`server` and `bench` unwind through their own `finally` blocks on either signal, so that every
process they started is stopped; the exception they catch is defined here, once for both.
"""
from __future__ import annotations

import signal

from triton_perception.errors import TritonPerceptionError


class Interrupted(TritonPerceptionError, RuntimeError):
    """SIGINT or SIGTERM arrived; unwind and stop child processes."""


def raise_on_termination() -> None:
    """Turn SIGTERM (and SIGINT) into an exception so cleanup code runs on both."""
    def handler(signum: int, _frame: object) -> None:
        raise Interrupted(signal.Signals(signum).name)
    signal.signal(signal.SIGTERM, handler)
    signal.signal(signal.SIGINT, handler)
