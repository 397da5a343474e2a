"""
A child process's standard input and output, written and read with deadlines, never blocking.

Why: a decoder child that stops reading (a wedged hardware decoder, a keyframe larger than the
pipe's buffer while the child still starts) must not hold the thread that feeds it past a
deadline, and one that writes frames while it is fed must never fill its output pipe and so stop
reading: each wait below watches both pipes, keeps what the child wrote, and gives up at the
deadline (`PipeTimeout`) or when the child ends (`PipeEnded`).
"""
from __future__ import annotations

import array
import fcntl
import os
import select
import subprocess
import termios
import time

from triton_perception.errors import TritonPerceptionError

READ_CHUNK = 1 << 20


class PipeTimeout(TritonPerceptionError, TimeoutError):
    """The deadline passed before the child took the input or gave the output."""


class PipeEnded(TritonPerceptionError, EOFError):
    """The child closed its end: it ended (killed, crashed) or stopped reading."""


class ChildPipes:
    """The standard input and output of one child process, both non-blocking."""

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        """Take `process`'s stdin and stdout (both PIPE) and make them non-blocking."""
        assert process.stdin is not None and process.stdout is not None
        self._input = process.stdin.fileno()
        self._output = process.stdout.fileno()
        os.set_blocking(self._input, False)
        os.set_blocking(self._output, False)
        self._pending = bytearray()

    def write(self, data: bytes, deadline: float) -> None:
        """Write all of `data` by `deadline` (time.monotonic), keeping what the child writes."""
        view = memoryview(data)
        while view:
            readable, writable, _ = select.select([self._output], [self._input], [],
                                                  self._remaining(deadline))
            if readable:
                self._take()
            if writable:
                try:
                    view = view[os.write(self._input, view):]
                except BlockingIOError:
                    continue
                except OSError:  # BrokenPipeError, or the descriptor closed under us
                    raise PipeEnded from None
            elif not readable:
                raise PipeTimeout

    def read_line(self, deadline: float, limit: int = 256) -> bytes:
        """Return the next line (without its newline); PipeEnded if none within `limit` bytes."""
        while b'\n' not in self._pending[:limit]:
            if len(self._pending) >= limit:
                raise PipeEnded  # not the text line expected: the child is not what we think
            self._wait(deadline)
        end = self._pending.index(b'\n')
        line = bytes(self._pending[:end])
        del self._pending[:end + 1]
        return line

    def read(self, count: int, deadline: float) -> bytes:
        """Return the next `count` bytes."""
        while len(self._pending) < count:
            self._wait(deadline)
        chunk = bytes(self._pending[:count])
        del self._pending[:count]
        return chunk

    def unread_input(self) -> int:
        """Return how many written bytes the child has not read yet (FIONREAD of the pipe)."""
        count = array.array('i', [0])
        try:
            fcntl.ioctl(self._input, termios.FIONREAD, count, True)
        except OSError:
            return 0
        return count[0]

    def _wait(self, deadline: float) -> None:
        if not select.select([self._output], [], [], self._remaining(deadline))[0]:
            raise PipeTimeout
        self._take()

    def _take(self) -> None:
        try:
            chunk = os.read(self._output, READ_CHUNK)
        except BlockingIOError:
            return
        except OSError:
            raise PipeEnded from None
        if not chunk:
            raise PipeEnded
        self._pending += chunk

    @staticmethod
    def _remaining(deadline: float) -> float:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise PipeTimeout
        return remaining
