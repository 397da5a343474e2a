"""
Run a server that stops after its clients, and surely, as ROS launch starts tritonserver.

    python -m triton_perception.system.stops_last [--grace S] [--kill-after S] COMMAND [ARG ...]

What reaches the processes ROS launch started depends on how launch is stopped (Humble and
later, docs/ros-machine.md cites the sources):
- Ctrl-C in launch's terminal: the terminal sends SIGINT to the whole foreground process group
  (launch, the nodes and this wrapper); launch sends no SIGINT of its own, and SIGTERM to every
  process still running after its sigterm_timeout, SIGKILL after sigkill_timeout more.
- `kill -INT` to launch's pid: launch sends SIGINT to every process at once when its standard
  input is no terminal (a service, a script), else nothing; the same SIGTERM and SIGKILL follow.
- SIGTERM to launch: launch ends and signals nobody; each process's parent-death signal
  (SIGTERM) ends it.
tritonserver stopping while the nodes still finish their last request, unregister their shared
memory and close their channels can crash (2.51: signal 11 in a gRPC thread), and the nodes log
a lost server for nothing. So this wrapper runs COMMAND as its child in a session of its own (a
terminal's Ctrl-C does not reach it), and holds a SIGINT back until every other process its
parent started has ended, `--grace` seconds at most. SIGTERM is passed on at once: launch
escalating, or the parent dying (the wrapper's parent-death signal). Triton acts on its first
signal only and then drains for its --exit-timeout-secs, keeping its ports; launch's SIGKILL
reaches this wrapper alone. So `--kill-after` seconds after passing the first signal on, a
COMMAND still running is killed with its process group (tritonserver's Python-backend stubs):
given shorter than launch's sigkill_timeout, no server outlives launch. The child also ends
with the wrapper (started through parent_death). Exits with COMMAND's exit code, 128 + N when a
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
from triton_perception.system.signals import StopRequest

DEFAULT_GRACE_S = 4.0
POLL_S = 0.05


def run(command: list[str], grace_s: float, kill_after_s: float | None = None) -> int:
    """Run `command` until it exits; pass stop signals on as the module says."""
    stop = StopRequest.on_signals()
    die_with_parent()
    parent, me = os.getppid(), os.getpid()
    child = subprocess.Popen(ending_with_parent(command), env=with_parent_pid(),
                             start_new_session=True)
    sent: set[int] = set()
    first_sent_at: float | None = None
    killed = False

    def send(signum: int) -> None:
        nonlocal first_sent_at
        if signum not in sent and child.poll() is None:
            sent.add(signum)
            child.send_signal(signum)
            first_sent_at = first_sent_at or time.monotonic()

    while True:
        try:
            code = child.wait(timeout=POLL_S)
            break
        except subprocess.TimeoutExpired:
            pass
        interrupted_at = stop.received.get('SIGINT')
        if 'SIGTERM' in stop.received:
            send(signal.SIGTERM)
        elif interrupted_at is not None and (
                time.monotonic() - interrupted_at >= grace_s
                or live_children(parent) == [me]):
            send(signal.SIGINT)
        if (kill_after_s is not None and first_sent_at is not None and not killed
                and time.monotonic() - first_sent_at >= kill_after_s):
            killed = True
            kill_group(child)
            say(f'stops_last: {command[0]} still running {kill_after_s:g} s after its stop '
                'signal; killed it')
    kill_group(child)  # what the server left of its group (Python-backend stubs)
    return 128 - code if code < 0 else code


def say(line: str) -> None:
    """Print `line` to stderr, which may be a pipe to a launch that has already ended."""
    try:
        print(line, file=sys.stderr, flush=True)
    except OSError:
        pass


def kill_group(child: subprocess.Popen[bytes]) -> None:
    """SIGKILL `child`'s process group (it leads a session of its own), if anything is left."""
    try:
        os.killpg(child.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def main(argv: list[str]) -> int:
    """Parse `[--grace SECONDS] COMMAND ...` and run it; 2 on bad arguments."""
    parser = argparse.ArgumentParser(
        prog='python -m triton_perception.system.stops_last',
        description="Run COMMAND; hold SIGINT until the parent's other children ended.")
    parser.add_argument('--grace', type=float, default=DEFAULT_GRACE_S,
                        help='longest wait for the other children after SIGINT, in seconds')
    parser.add_argument('--kill-after', type=float, default=None,
                        help='SIGKILL COMMAND this long after passing on its first stop signal, '
                             'in seconds (default: never)')
    parser.add_argument('command', nargs=argparse.REMAINDER)
    arguments = parser.parse_args(argv)
    if (not arguments.command or arguments.grace < 0
            or (arguments.kill_after is not None and arguments.kill_after < 0)):
        parser.print_usage(sys.stderr)
        return 2
    return run(arguments.command, arguments.grace, arguments.kill_after)


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
