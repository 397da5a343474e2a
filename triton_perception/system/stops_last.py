"""
Run a server that stops after its clients, as ROS launch starts tritonserver.

    python -m triton_perception.system.stops_last [--grace SECONDS] COMMAND [ARGUMENT ...]

On shutdown ROS launch sends SIGINT to every process it started at once, and a terminal's
Ctrl-C reaches the whole process group at once too. tritonserver then stops while the nodes
still finish their last request, unregister their shared memory and close their channels;
tritonserver 2.51 can crash doing so (signal 11 in a gRPC thread), and the nodes log a lost
server for nothing. So this wrapper runs COMMAND as its child,
in a session of its own (a terminal's Ctrl-C does not reach it), and holds a SIGINT back until
every other process its parent started has ended, `--grace` seconds at most (launch sends
SIGTERM after its own sigterm_timeout anyway). SIGTERM is passed on at once: launch escalating,
or the parent dying (the wrapper's parent-death signal). The child ends with the wrapper's
parent too (started through parent_death). Exits with COMMAND's exit code, 128 + N when a
signal N ended it.
"""
from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time

from triton_perception.system.processes import die_with_parent, ending_with_parent, \
    live_children, with_parent_pid

DEFAULT_GRACE_S = 4.0
POLL_S = 0.05


class HeldStop:
    """The stop signals this process received, recorded by handlers that never raise."""

    def __init__(self) -> None:
        """Install the handlers for SIGINT and SIGTERM."""
        self.interrupted_at: float | None = None
        self.terminated = False
        signal.signal(signal.SIGINT, self._record)
        signal.signal(signal.SIGTERM, self._record)

    def _record(self, signum: int, _frame: object) -> None:
        if signum == signal.SIGTERM:
            self.terminated = True
        elif self.interrupted_at is None:
            self.interrupted_at = time.monotonic()


def run(command: list[str], grace_s: float) -> int:
    """Run `command` until it exits; pass stop signals on as the module says."""
    stop = HeldStop()
    die_with_parent()
    parent, me = os.getppid(), os.getpid()
    child = subprocess.Popen(ending_with_parent(command), env=with_parent_pid(),
                             start_new_session=True)
    sent: set[int] = set()

    def send(signum: int) -> None:
        if signum not in sent and child.poll() is None:
            sent.add(signum)
            child.send_signal(signum)

    while True:
        try:
            code = child.wait(timeout=POLL_S)
            break
        except subprocess.TimeoutExpired:
            pass
        if stop.terminated:
            send(signal.SIGTERM)
        elif stop.interrupted_at is not None and (
                time.monotonic() - stop.interrupted_at >= grace_s
                or live_children(parent) == [me]):
            send(signal.SIGINT)
    return 128 - code if code < 0 else code


def main(argv: list[str]) -> int:
    """Parse `[--grace SECONDS] COMMAND ...` and run it; 2 on bad arguments."""
    parser = argparse.ArgumentParser(
        prog='python -m triton_perception.system.stops_last',
        description="Run COMMAND; hold SIGINT until the parent's other children ended.")
    parser.add_argument('--grace', type=float, default=DEFAULT_GRACE_S,
                        help='longest wait for the other children after SIGINT, in seconds')
    parser.add_argument('command', nargs=argparse.REMAINDER)
    arguments = parser.parse_args(argv)
    if not arguments.command or arguments.grace < 0:
        parser.print_usage(sys.stderr)
        return 2
    return run(arguments.command, arguments.grace)


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
