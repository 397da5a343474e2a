"""Process-tree facts from /proc (no psutil on a Jetson by default) and process-life helpers."""
from __future__ import annotations

from collections import defaultdict
import ctypes
import os
from pathlib import Path
import signal
import socket
import subprocess
import sys
import time
from typing import Mapping, Sequence

CLOCK_TICKS = os.sysconf('SC_CLK_TCK')


def _stat_fields(pid: int) -> list[str] | None:
    """/proc/<pid>/stat from field 3 (state) on; the command name may contain spaces."""
    try:
        text = Path(f'/proc/{pid}/stat').read_text()
    except OSError:
        return None
    return text.rsplit(')', 1)[1].split()


def process_tree(root: int) -> list[int]:
    """`root` and its descendants (tritonserver's Python backend stubs are its children)."""
    children: dict[int, list[int]] = defaultdict(list)
    for entry in os.scandir('/proc'):
        if entry.name.isdigit() and (fields := _stat_fields(int(entry.name))):
            children[int(fields[1])].append(int(entry.name))
    tree, pending = [], [root]
    while pending:
        pid = pending.pop()
        tree.append(pid)
        pending.extend(children.get(pid, ()))
    return tree


def live_children(parent: int) -> list[int]:
    """Return the running children of `parent` (zombies waiting to be reaped count as gone)."""
    return [int(entry.name) for entry in os.scandir('/proc')
            if entry.name.isdigit() and (fields := _stat_fields(int(entry.name)))
            and int(fields[1]) == parent and fields[0] != 'Z']


def alive(pid: int) -> bool:
    """Say whether the process is running (a zombie waiting to be reaped counts as gone)."""
    fields = _stat_fields(pid)
    return fields is not None and fields[0] != 'Z'


def tree_cpu_s(root: int) -> float:
    """Utime + stime of a process tree, in seconds."""
    return sum(process_cpu_s(pid) for pid in process_tree(root))


def process_cpu_s(pid: int) -> float:
    """Utime + stime of one process (its threads, not its children), in seconds; 0 once gone."""
    fields = _stat_fields(pid)
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS if fields else 0.0


def status_kib(pid: int, field: str) -> int:
    """Return a `kB` line of /proc/<pid>/status (VmRSS, VmHWM); 0 once the process is gone."""
    try:
        for line in Path(f'/proc/{pid}/status').read_text().splitlines():
            if line.startswith(f'{field}:'):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def tree_rss_mb(root: int) -> float:
    """Return the resident memory (MiB) of a process and all its descendants, from /proc."""
    return sum(status_kib(pid, 'VmRSS') for pid in process_tree(root)) / 1024


def free_ports(count: int) -> list[int]:
    """Ports free on loopback now (another process may take them later: use them at once)."""
    sockets = []
    for _ in range(count):
        probe = socket.socket()
        probe.bind(('127.0.0.1', 0))
        sockets.append(probe)
    ports = [probe.getsockname()[1] for probe in sockets]
    for probe in sockets:
        probe.close()
    return ports


PARENT_PID_ENV = 'TRITON_PERCEPTION_PARENT_PID'


def with_parent_pid(environment: Mapping[str, str] | None = None) -> dict[str, str]:
    """
    Return `environment` (default: this process's) naming this process as the child's starter.

    The child's `die_with_parent` reads it to see whether its starter died before the signal
    was set.
    """
    return {**(os.environ if environment is None else environment),
            PARENT_PID_ENV: str(os.getpid())}


def die_with_parent() -> bool:
    """
    SIGTERM this process when the process that started it dies, even by SIGKILL.

    Then no tritonserver or node outlives its supervisor: node processes call it first thing,
    and other commands are started through parent_death (`ending_with_parent`). A starter that
    named itself (`with_parent_pid`) and is already gone gets the same SIGTERM sent at once.
    Linux only; elsewhere returns False and does nothing.
    """
    starter = os.environ.pop(PARENT_PID_ENV, '')  # not inherited by this process's children
    if not sys.platform.startswith('linux'):
        return False
    libc = ctypes.CDLL(None, use_errno=True)
    pr_set_pdeathsig = 1
    result: int = libc.prctl(pr_set_pdeathsig, signal.SIGTERM)
    if starter.isdigit() and os.getppid() != int(starter):
        os.kill(os.getpid(), signal.SIGTERM)  # the starter died before the signal was set
    return result == 0


def ending_with_parent(command: Sequence[str], python: str = sys.executable) -> list[str]:
    """
    Return `command` run through parent_death: it gets SIGTERM when its starter dies.

    How a child that is not one of the package's Python processes (tritonserver, rviz2) is
    started. Not `preexec_fn=die_with_parent`: with a preexec_fn Python forks instead of vforking
    and runs Python code in the child before exec, which the subprocess documentation says may
    deadlock in a process with threads; a replay inside a Ray worker (gRPC threads) is one. The
    package's node processes set the signal themselves, first thing (`run_nodes`).
    """
    return [python, '-m', 'triton_perception.system.parent_death', *command]


def stopping_last(command: Sequence[str], python: str = sys.executable,
                  kill_after_s: float | None = None) -> list[str]:
    """
    Return `command` run through stops_last: its SIGINT waits for its starter's other children.

    How ROS launch starts tritonserver, so that on shutdown the nodes stop before the server
    they send to (system.stops_last says why); it ends with its starter too, as through
    `ending_with_parent`. With `kill_after_s`, the command is killed that long after its first
    stop signal if it still runs.
    """
    options = [] if kill_after_s is None else [f'--kill-after={kill_after_s:g}']
    return [python, '-m', 'triton_perception.system.stops_last', *options, *command]


def ros_arguments(parameters: Mapping[str, object], namespace: str = '') -> list[str]:
    """`--ros-args` for a node executable: parameters and the namespace."""
    arguments = ['--ros-args']
    for name, value in parameters.items():
        text = str(value).lower() if isinstance(value, bool) else str(value)
        arguments += ['-p', f'{name}:={text}']
    if namespace:
        arguments += ['-r', f'__ns:={namespace}']
    return arguments


def node_command(executable: str, python: str = sys.executable, module: str = '') -> list[str]:
    """
    Return the command that runs a node executable of this package.

    What lib/triton_perception/<executable> runs, with the given interpreter, so that it never
    depends on PATH. `module` names another module to run instead (the bench's own floor node).
    """
    return [python, '-m', module or f'triton_perception.nodes.{executable}']


class NodeProcess:
    """
    A node executable in its own process, as `ros2 run` starts it.

    Its output goes to a file so that whoever started it can quote the node's last words when it
    fails.
    """

    def __init__(self, executable: str, arguments: Sequence[str], log_directory: Path,
                 module: str = '', environment: Mapping[str, str] | None = None) -> None:
        """
        Start `executable` with `arguments`, its output going to a new log file in `log_directory`.

        The child gets no stdin and receives SIGTERM when this process dies (it calls
        `die_with_parent` itself, as every node process does).
        `module`: run this module instead of the executable's (`node_command`).
        `environment`: variables set for the child beside this process's own.
        """
        self.name = executable
        self.log_path = Path(log_directory) / f'{executable}-{time.monotonic_ns()}.log'
        self._log = open(self.log_path, 'w', encoding='utf-8')  # noqa: SIM115 (closed in stop)
        self.process = subprocess.Popen(
            [*node_command(executable, module=module), *arguments], stdout=self._log,
            stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            env=with_parent_pid({**os.environ, **(environment or {})}))

    @property
    def pid(self) -> int:
        """Return the node process's id."""
        return self.process.pid

    def alive(self) -> bool:
        """Return whether the node process is still running."""
        return self.process.poll() is None

    def output(self) -> str:
        """Everything the node printed (the child writes the file itself, also after stop())."""
        if not self._log.closed:
            self._log.flush()
        return self.log_path.read_text(encoding='utf-8', errors='replace')

    def output_tail(self, lines: int = 30) -> str:
        """Return the node's last `lines` output lines, each indented by two spaces for quoting."""
        return '\n'.join(f'  {line}' for line in self.output().splitlines()[-lines:])

    def stop(self, sig: int = signal.SIGINT, timeout_s: float = 10.0) -> int:
        """`sig` (SIGINT: the node's clean shutdown), SIGKILL after `timeout_s`."""
        if self.process.poll() is None:
            self.process.send_signal(sig)
            try:
                self.process.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if not self._log.closed:
            self._log.close()
        return self.process.returncode
