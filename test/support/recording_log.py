"""A request worker's Log that keeps what it is told, for a test to read or a failure to show."""
from __future__ import annotations


class RecordingLog:
    """The workers' Log, kept in a list."""

    def __init__(self) -> None:
        """Keep nothing yet."""
        self.lines: list[str] = []

    def info(self, message: str) -> None:
        """Keep `message`."""
        self.lines.append(message)

    warning = frame_problem = info
