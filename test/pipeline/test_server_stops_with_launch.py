"""
tritonserver ends with ROS launch, however launch is stopped.

`ros2 launch` of triton_server.launch.py, for real, with a stand-in server that holds Triton's three
ports and, after its first stop signal, drains far longer than launch waits (deaf to further
signals and to its --exit-timeout-secs: the worst a Triton can do). Stopped by Ctrl-C in launch's
terminal, by `kill -INT` to launch's pid with and without a terminal, and by SIGTERM: each time no
server process and no listening port is left once launch has ended (SIGTERM: launch signals
nobody, so within the wrapper's kill delay after). What reached the server first is what
docs/ros-machine.md says launch sends in each case.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
import os
from pathlib import Path
import signal
import subprocess

import pytest

from support.ros_cli import REPO, ROS2, venv_environment
from support.ros_helpers import wait_until
from support.stand_in_tritonserver import draining_release
from triton_perception.pipeline.launch_support import (SERVER_SIGKILL_TIMEOUT_S,
                                                       SERVER_SIGTERM_TIMEOUT_S)
from triton_perception.serving import ServerConfig
from triton_perception.system.processes import alive, free_ports

pytestmark = [pytest.mark.ros, pytest.mark.slow]

LAUNCH_FILE = REPO / 'launch' / 'triton_server.launch.py'
LAUNCH_WAIT_S = SERVER_SIGTERM_TIMEOUT_S + SERVER_SIGKILL_TIMEOUT_S
# A loaded machine (a busy loop beside the test) starts and ends processes late; what is asserted
# is the order of events (server gone before launch's end), the slack only bounds the wait.
SLACK_S = 15.0
START_TIMEOUT_S = 120.0


def listening_ports() -> set[int]:
    """Return the TCP ports something listens on, from /proc/net/tcp and tcp6."""
    ports = set()
    for table in ('/proc/net/tcp', '/proc/net/tcp6'):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            if fields[3] == '0A':  # LISTEN
                ports.add(int(fields[1].rsplit(':', 1)[1], 16))
    return ports


@dataclass
class Launched:
    """A running `ros2 launch` of the server alone, with its stand-in's record and ports."""

    process: subprocess.Popen[bytes]
    record: Path
    ports: list[int]
    terminal: int | None  # the pty's master side, when launch has a terminal

    def events(self) -> list[tuple[str, object]]:
        """Return what the stand-in wrote: ('listening', pid), then (signal name, time) lines."""
        if not self.record.exists():
            return []
        return [ast.literal_eval(line) for line in self.record.read_text().splitlines()]

    def server_pid(self) -> int:
        """Return the stand-in's pid (it wrote it once listening)."""
        return int(next(value for name, value in self.events() if name == 'listening'))

    def first_signal(self) -> str:
        """Return the name of the first stop signal the stand-in received."""
        return next(name for name, _ in self.events() if name != 'listening')

    def output(self) -> str:
        """Return what launch wrote (its terminal or its log file)."""
        return (self.record.parent / 'launch.log').read_text(errors='replace')

    def cleanup(self) -> None:
        """Kill what is left after a failure, launch and the stand-in."""
        for pid in (self.process.pid, *(value for name, value in self.events()
                                        if name == 'listening')):
            try:
                os.kill(int(pid), signal.SIGKILL)  # type: ignore[call-overload]
            except ProcessLookupError:
                pass
        self.process.wait(timeout=30)
        if self.terminal is not None:
            os.close(self.terminal)


def launch_server(tmp_path: Path, terminal: bool) -> Launched:
    """Start `ros2 launch` of triton_server.launch.py with the draining stand-in; wait for it."""
    release = draining_release(tmp_path / 'triton', drain_s=120.0)
    http, grpc, metrics = free_ports(3)
    command = [str(ROS2), 'launch', str(LAUNCH_FILE), 'profile:=cpu', f'tritonserver:={release}',
               f'http_port:={http}', f'grpc_port:={grpc}', f'metrics_port:={metrics}']
    log = open(tmp_path / 'triton' / 'launch.log', 'wb')  # noqa: SIM115 (the child writes it)
    master = None
    if terminal:
        # Launch's standard input is a terminal it controls, as in a shell: setsid --ctty makes
        # the pty launch's controlling terminal, and ^C on it reaches launch's process group.
        master, slave = os.openpty()
        process = subprocess.Popen(['setsid', '--ctty', *command], stdin=slave, stdout=log,
                                   stderr=subprocess.STDOUT, env=venv_environment())
        os.close(slave)
    else:
        process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=log,
                                   stderr=subprocess.STDOUT, env=venv_environment(),
                                   start_new_session=True)
    log.close()
    launched = Launched(process, tmp_path / 'triton' / 'server.log', [http, grpc, metrics], master)
    try:
        wait_until(lambda: process.poll() is not None or (
            launched.events() and set(launched.ports) <= listening_ports()),
            START_TIMEOUT_S, 'the stand-in server listening on its three ports')
        assert process.poll() is None, launched.output()
    except BaseException:
        launched.cleanup()
        raise
    return launched


STOPS = {
    # what stops launch: (terminal, how, first signal the server gets)
    'ctrl-c in its terminal': (True, 'ctrl-c', 'SIGINT'),
    'kill -INT, with a terminal': (True, signal.SIGINT, 'SIGTERM'),
    'kill -INT, no terminal': (False, signal.SIGINT, 'SIGINT'),
}


@pytest.mark.parametrize('stop', list(STOPS))
def test_no_server_outlives_launch(stop: str, tmp_path: Path) -> None:
    """Launch ends within its timeouts and leaves no server and no listening port behind."""
    terminal, how, first_signal = STOPS[stop]
    launched = launch_server(tmp_path, terminal)
    try:
        if how == 'ctrl-c':
            assert launched.terminal is not None
            os.write(launched.terminal, b'\x03')
        else:
            launched.process.send_signal(how)
        launched.process.wait(timeout=LAUNCH_WAIT_S + SLACK_S)
        assert not alive(launched.server_pid()), launched.output()
        assert not set(launched.ports) & listening_ports()
        assert launched.first_signal() == first_signal, launched.events()
    finally:
        launched.cleanup()


def test_no_server_outlives_launch_ended_by_sigterm(tmp_path: Path) -> None:
    """SIGTERM: launch ends at once; the wrapper's parent-death signal ends the server after it."""
    launched = launch_server(tmp_path, terminal=False)
    try:
        launched.process.send_signal(signal.SIGTERM)
        launched.process.wait(timeout=SLACK_S)
        kill_after_s = ServerConfig(model_repository=REPO / 'model_repository').kill_after_s
        wait_until(lambda: not alive(launched.server_pid()), kill_after_s + SLACK_S,
                   'the server to end after launch')
        assert not set(launched.ports) & listening_ports()
        assert launched.first_signal() == 'SIGTERM', launched.events()
    finally:
        launched.cleanup()
