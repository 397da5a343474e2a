"""
Test-side helpers for the ROS user's path.

A colcon workspace built from this checkout, the environment its `install/setup.bash` gives, `ros2`
commands, and `ros2 launch` as a process.
"""
from __future__ import annotations

from dataclasses import dataclass
import os
from pathlib import Path
import shutil
import signal
import subprocess
import sys
import time
from typing import Sequence

from support.ros_helpers import wait_until
from triton_perception.system.processes import alive, free_ports, process_tree

REPO = Path(__file__).resolve().parents[2]
VENV = Path(sys.prefix)
ROS2 = VENV / 'bin' / 'ros2'
# colcon lives in a venv of its own (dev/requirements-colcon.txt): it pins setuptools<80.
COLCON = VENV / 'colcon' / 'bin' / 'colcon'


def venv_environment() -> dict[str, str]:
    """
    Return this process's environment with the venv as the ROS underlay.

    It keeps the test ROS domain, logs and DDS profile, as `source /opt/ros/<distro>/setup.bash`
    gives on a ROS machine.
    """
    environment = dict(os.environ)
    environment['AMENT_PREFIX_PATH'] = str(VENV)
    environment['PATH'] = os.pathsep.join([str(VENV / 'bin'), environment.get('PATH', '')])
    return environment


def sourced_environment(install: Path) -> dict[str, str]:
    """Return the environment after `source install/setup.bash` on top of the venv underlay."""
    result = subprocess.run(['bash', '-c', f'source "{install}/setup.bash" && env -0'],
                            env=venv_environment(), capture_output=True, timeout=60, check=True)
    pairs = (item.split('=', 1) for item in result.stdout.decode().split('\0') if '=' in item)
    return dict(pairs)


def copy_checkout(source: Path) -> None:
    """Copy the tracked files of this checkout (no venv, weights or build output) as a clone."""
    files = subprocess.run(['git', 'ls-files', '-z'], cwd=REPO, capture_output=True,
                           check=True).stdout.decode().split('\0')
    for name in filter(None, files):
        target = source / name
        target.parent.mkdir(parents=True, exist_ok=True)
        origin = REPO / name
        if origin.is_symlink():
            target.symlink_to(os.readlink(origin))
        elif origin.is_file():
            shutil.copy2(origin, target)


def colcon_build(workspace: Path, install_base: str, symlink_install: bool) -> Path:
    """`colcon build` of src/triton_perception against the venv's ROS; returns the install base."""
    command = [str(COLCON), 'build', '--packages-select', 'triton_perception',
               '--build-base', f'build_{install_base}', '--install-base', install_base]
    if symlink_install:
        command.append('--symlink-install')
    environment = venv_environment()
    environment['CMAKE_PREFIX_PATH'] = str(VENV)
    result = subprocess.run(command, cwd=workspace, env=environment, capture_output=True,
                            text=True, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    return workspace / install_base


# What the ros2 CLI says while its daemon has not discovered the node yet (discovery takes
# seconds on a loaded machine): asked again, not failed on.
NOT_DISCOVERED = ('Node not found', 'Waiting for an action server', 'not available')
DISCOVERY_LIMIT_S = 60.0


def ros2(environment: dict[str, str], *arguments: str,
         timeout_s: float = 120.0) -> subprocess.CompletedProcess[str]:
    """
    Run `ros2 ARGUMENTS` in `environment` and return its result.

    While the CLI says the node is not discovered yet, it asks again, for up to
    DISCOVERY_LIMIT_S.
    """
    deadline = time.monotonic() + DISCOVERY_LIMIT_S
    while True:
        result = subprocess.run([str(ROS2), *arguments], env=environment, capture_output=True,
                                text=True, timeout=timeout_s, stdin=subprocess.DEVNULL)
        if not any(text in result.stderr for text in NOT_DISCOVERED) or \
                time.monotonic() > deadline:
            return result
        time.sleep(0.5)


@dataclass
class LaunchedPipeline:
    """`ros2 launch triton_perception pipeline.launch.py ...` in a session of its own."""

    process: subprocess.Popen[bytes]
    log_path: Path

    @classmethod
    def start(cls, environment: dict[str, str], log_path: Path,
              arguments: Sequence[str]) -> 'LaunchedPipeline':
        """
        Start `ros2 launch` of pipeline.launch.py (CPU profile, free ports) with `arguments`.

        Its output goes to `log_path`; it runs in a session of its own, so that a signal can
        reach its whole process group.
        """
        http_port, grpc_port, metrics_port = free_ports(3)
        with open(log_path, 'w', encoding='utf-8') as log:
            process = subprocess.Popen(
                [str(ROS2), 'launch', 'triton_perception', 'pipeline.launch.py', 'profile:=cpu',
                 f'grpc_port:={grpc_port}', f'http_port:={http_port}',
                 f'metrics_port:={metrics_port}', *arguments],
                env=environment, stdout=log, stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL, start_new_session=True)
        return cls(process, log_path)

    def output(self) -> str:
        """Return what launch and its processes have written so far."""
        return self.log_path.read_text(encoding='utf-8', errors='replace')

    def processes(self) -> list[int]:
        """Launch and everything it started (tritonserver, its stubs, the gate, the nodes)."""
        return process_tree(self.process.pid) if self.process.poll() is None else []

    def signal_and_wait_gone(self, stop_signal: int, whole_group: bool,
                             timeout_s: float = 10.0) -> list[int]:
        """
        Send `stop_signal` and wait until launch and every process it started are gone.

        The signal goes to launch alone (what a supervisor does) or to its process group (Ctrl-C in
        a terminal). Returns the pids that were there; fails naming the survivors.
        """
        tree = self.processes()
        if whole_group:
            os.killpg(self.process.pid, stop_signal)
        else:
            self.process.send_signal(stop_signal)
        try:
            wait_until(lambda: not any(alive(pid) for pid in tree) and self.process.poll()
                       is not None, timeout_s, 'launch and every process it started to end')
        except AssertionError:
            survivors = [pid for pid in tree if alive(pid)]
            self.kill(tree)
            raise AssertionError(f'{len(survivors)} processes outlived launch after '
                                 f'{signal.Signals(stop_signal).name}: {survivors}\n'
                                 + self.output()[-3000:]) from None
        return tree

    def kill(self, known: Sequence[int] = ()) -> None:
        """
        Whatever is left, at once (cleanup after a failure); `known`.

        Pids seen earlier, which a killed launch no longer parents.
        """
        for pid in reversed([*process_tree(self.process.pid), *known]):
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        self.process.wait(timeout=30)


def stand_in_rviz2(directory: Path, body: str = '') -> Path:
    """Write an executable `rviz2` into `directory` running `body` (rviz2 is not installed here)."""
    viewer = directory / 'rviz2'
    directory.mkdir(parents=True, exist_ok=True)
    viewer.write_text(f'#!/bin/sh\n{body}\n')
    viewer.chmod(0o755)
    return viewer
