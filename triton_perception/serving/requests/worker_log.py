"""The logging a node gives its inference worker, quiet once the worker stops."""
from __future__ import annotations

from typing import Protocol


class Log(Protocol):
    """The logging a node gives the worker (rclpy's logger, with per-frame problems throttled)."""

    def info(self, message: str) -> None:
        """Log `message` at info level."""

    def warning(self, message: str) -> None:
        """Log `message` at warning level."""

    def frame_problem(self, message: str) -> None:
        """Report a per-frame problem; the implementation throttles these."""


class WorkerLog:
    """A Log that forwards to the node's until `quiet`: the node's logger may go at shutdown."""

    def __init__(self, log: Log) -> None:
        """Forward to `log`."""
        self._log = log
        self._quiet = False
        self._faults_said: set[str] = set()

    def quiet(self) -> None:
        """Log nothing from now on."""
        self._quiet = True

    def info(self, message: str) -> None:
        """Log `message` at info level, unless quiet."""
        if not self._quiet:
            self._log.info(message)

    def warning(self, message: str) -> None:
        """Log `message` at warning level, unless quiet."""
        if not self._quiet:
            self._log.warning(message)

    def frame_problem(self, message: str) -> None:
        """Report a per-frame problem, unless quiet."""
        if not self._quiet:
            self._log.frame_problem(message)

    def fault(self, reason: str, message: str) -> None:
        """
        Log a fault's `message`: the first of each `reason` as a warning, the rest throttled.

        A reason is the stage and the exception's class, so each kind of fault is told in full
        once, however often it happens.
        """
        if reason in self._faults_said:
            self.frame_problem(message)
            return
        self._faults_said.add(reason)
        self.warning(f'{message} (logged once; further ones throttled, counted as {reason!r})')
