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
