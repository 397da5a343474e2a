"""
What every bench's report says of its run, and the one writer of the bench's JSON.

The machine the figures were measured on, the source they belong to, the load before and
after, and `write_report`, which puts `schema_version` first so that a script reading reports
across versions can tell their shape.
"""
from __future__ import annotations

import json
import os
from pathlib import Path
import platform
import subprocess
from typing import Mapping

import onnxruntime

from triton_perception.bench.session.schema import Machine
from triton_perception.system import SOURCE_ROOT

BENCH_SCHEMA_VERSION = 1  # the shape of bench.json and bench-glue.json


def cpu_model() -> str:
    """x86 names the CPU in /proc/cpuinfo; a Jetson names the board in the device tree."""
    try:
        for line in Path('/proc/cpuinfo').read_text().splitlines():
            if line.startswith('model name'):
                return line.split(':', 1)[1].strip()
        return Path('/proc/device-tree/model').read_text().strip('\0\n ')
    except OSError:
        return platform.processor() or platform.machine()


def source_version() -> str | None:
    """
    Return the checkout's commit, '-dirty' with local changes.

    The figures belong to that code.
    """
    if not (SOURCE_ROOT / '.git').exists():
        return None
    try:
        completed = subprocess.run(['git', '-C', str(SOURCE_ROOT), 'describe', '--always',
                                    '--dirty'], capture_output=True, text=True, check=False)
    except OSError:
        return None
    return completed.stdout.strip() or None


def machine_description(profile: str, triton_version: str) -> Machine:
    """Return what the figures were measured on: CPU, cores, memory, versions, load at start."""
    memory_kib = next((int(line.split()[1]) for line in
                       Path('/proc/meminfo').read_text().splitlines()
                       if line.startswith('MemTotal:')), 0)
    return {
        'cpu_model': cpu_model(), 'architecture': platform.machine(),
        'cores': os.cpu_count(), 'usable_cores': len(os.sched_getaffinity(0)),
        'memory_gb': round(memory_kib / 1024 ** 2, 1), 'kernel': platform.release(),
        'python': platform.python_version(), 'onnxruntime': onnxruntime.__version__,
        'triton': triton_version, 'profile': profile,
        'load_average_start': load_averages(),
    }


# A target's figures are taken on a quiet machine: above this 1-minute load average a result
# line says they are a busy machine's.
QUIET_LOAD = 0.5


def busy_note(load_1min: float) -> str:
    """Return what a result line adds when the load average was above QUIET_LOAD, else ''."""
    return (f'; load average {load_1min:.2f} at the start, above {QUIET_LOAD}: a busy '
            "machine's figures, not a target's" if load_1min > QUIET_LOAD else '')


def load_averages() -> list[float]:
    """Return the 1, 5 and 15 minute load averages, rounded for the report."""
    return [round(value, 2) for value in os.getloadavg()]


def table_cell(value: object) -> str:
    """Return a figure as a table cell: '–' for none, floats in their shortest form."""
    return '–' if value is None else f'{value:g}' if isinstance(value, float) else str(value)


def write_report(report: Mapping[str, object], path: Path | None) -> None:
    """
    Write `report` as indented JSON to `path`, `schema_version` first; no path writes nothing.

    The one writer of the bench's JSON reports (`bench`, `bench --glue`), so that scripts
    reading them across versions can tell their shape.
    """
    if path:
        path.parent.mkdir(parents=True, exist_ok=True)
        versioned = {'schema_version': BENCH_SCHEMA_VERSION,
                     **{key: value for key, value in report.items() if key != 'schema_version'}}
        path.write_text(json.dumps(versioned, indent=2) + '\n', encoding='utf-8')
