"""Process-tree facts from /proc (no psutil on a Jetson by default) and process-life helpers."""
from __future__ import annotations

import ctypes
import os
import signal
import socket
from collections import defaultdict
from pathlib import Path

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


def alive(pid: int) -> bool:
    """Running (a zombie waiting to be reaped counts as gone)."""
    fields = _stat_fields(pid)
    return fields is not None and fields[0] != 'Z'


def tree_cpu_s(root: int) -> float:
    """utime + stime of a process tree, in seconds."""
    ticks = 0
    for pid in process_tree(root):
        if fields := _stat_fields(pid):
            ticks += int(fields[11]) + int(fields[12])
    return ticks / CLOCK_TICKS


def status_kib(pid: int, field: str) -> int:
    """A `kB` line of /proc/<pid>/status (VmRSS, VmHWM); 0 once the process is gone."""
    try:
        for line in Path(f'/proc/{pid}/status').read_text().splitlines():
            if line.startswith(f'{field}:'):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def tree_rss_mb(root: int) -> float:
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


def die_with_parent() -> None:
    """Linux (preexec_fn): SIGTERM the child when the process that started it dies, even by
    SIGKILL, so no tritonserver or node outlives its supervisor."""
    libc = ctypes.CDLL('libc.so.6', use_errno=True)
    pr_set_pdeathsig = 1
    libc.prctl(pr_set_pdeathsig, signal.SIGTERM)
