"""Figures from what was timed, and from /proc: CPU time and memory of the processes measured."""
from __future__ import annotations

import os
from pathlib import Path
import threading
from typing import Sequence

import numpy as np

from triton_perception.bench.session.settings import BenchError, RSS_SAMPLE_PERIOD_S
from triton_perception.system import NodeProcess, process_cpu_s, process_tree, status_kib


def summary(values_ms: Sequence[float]) -> dict[str, float | int | None]:
    """Return the median and p95 (ms, rounded to 0.01) and the number of frames timed."""
    if not values_ms:
        return {'median': None, 'p95': None, 'frames': 0}
    return {'median': round(float(np.median(values_ms)), 2),
            'p95': round(float(np.percentile(values_ms, 95)), 2), 'frames': len(values_ms)}


def p95(values_ms: Sequence[float]) -> float | None:
    """Return the 95th percentile of `values_ms` rounded to 0.01 ms, None without values."""
    return round(float(np.percentile(values_ms, 95)), 2) if values_ms else None


def ratio(numerator: float | None, denominator: float | None) -> float | None:
    """Return numerator / denominator rounded to 0.001, None if either is missing or zero."""
    return round(numerator / denominator, 3) if numerator and denominator else None


class TreeRssPeak:
    """Peak summed VmRSS of a process tree: a tree has no VmHWM, so sample it periodically."""

    def __init__(self, root: int | None) -> None:
        """Watch the process tree under `root` (None: nothing to watch, `peak_mb` is None)."""
        self._root = root
        self.peak_kib = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, name='rss-sampler', daemon=True)

    def _sample(self) -> None:
        while self._root is not None:
            total = sum(status_kib(pid, 'VmRSS') for pid in process_tree(self._root))
            self.peak_kib = max(self.peak_kib, total)
            if self._stop.wait(RSS_SAMPLE_PERIOD_S):
                return

    def __enter__(self) -> 'TreeRssPeak':
        """Start sampling the tree's RSS every RSS_SAMPLE_PERIOD_S."""
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        """Stop sampling and wait for the sampler thread."""
        self._stop.set()
        self._thread.join()

    @property
    def peak_mb(self) -> float | None:
        """Return the largest summed RSS seen, in MiB; None when no process was watched."""
        return round(self.peak_kib / 1024, 1) if self._root is not None else None


def stub_model(pid: int) -> str | None:
    """
    Return the model a Python backend stub process serves, None for any other process.

    The stub's command line names the model's file, <repository>/<model>/<version>/model.py.
    """
    try:
        arguments = Path(f'/proc/{pid}/cmdline').read_bytes().decode(errors='replace').split('\0')
    except OSError:
        return None
    if not arguments or not arguments[0].endswith('triton_python_backend_stub'):
        return None
    return next((Path(argument).parents[1].name for argument in arguments[1:]
                 if argument.endswith('.py') and len(Path(argument).parents) > 2), None)


def server_cpu_by_process(root: int) -> tuple[float, dict[str, float]]:
    """
    Return CPU seconds so far of tritonserver's own process and of its stubs by model.

    Any other descendant counts with tritonserver.
    """
    main = 0.0
    stubs: dict[str, float] = {}
    for pid in process_tree(root):
        model = stub_model(pid) if pid != root else None
        if model is None:
            main += process_cpu_s(pid)
        else:
            stubs[model] = stubs.get(model, 0.0) + process_cpu_s(pid)
    return main, stubs


def listening_pid(port: int) -> int | None:
    """Return the local tritonserver listening on `port`, for --triton-url (its CPU and memory)."""
    inodes = set()
    for table in ('/proc/net/tcp', '/proc/net/tcp6'):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if fields[3] == '0A' and int(fields[1].rsplit(':', 1)[1], 16) == port:
                inodes.add(f'socket:[{fields[9]}]')
    for entry in os.scandir('/proc'):
        if not entry.name.isdigit():
            continue
        try:
            if Path(f'/proc/{entry.name}/comm').read_text().strip() != 'tritonserver':
                continue
            if any(os.readlink(fd.path) in inodes for fd in os.scandir(f'/proc/{entry.name}/fd')):
                return int(entry.name)
        except OSError:
            continue
    return None


def check_alive(node: NodeProcess) -> None:
    """Raise BenchError with the node's exit code and last output lines if it has exited."""
    if not node.alive():
        raise BenchError(f'{node.name} exited with code {node.process.returncode}:\n'
                         f'{node.output_tail()}')
