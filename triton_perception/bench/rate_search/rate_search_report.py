"""
A rate search's record: the frames, the machine, the package, the hashes, and its table.

What a `bench --rate-search` results file says besides the figures (the machine, the package,
the models' and the input's hashes), the frames it plays, and the table printed at the end.
"""
from __future__ import annotations

import importlib.metadata
from importlib.metadata import PackageNotFoundError, version as distribution_version
import os
from pathlib import Path
import re
import shutil
import subprocess
from typing import Callable, Sequence

from sensor_msgs.msg import Image

from triton_perception.bag import DEFAULT_TOPIC, read_images
from triton_perception.bench.rate_search.rate_search_schema import (InputData, RateFigures,
                                                                    RateSearchMachine,
                                                                    RateSearchReport)
from triton_perception.bench.session import (BenchError, ensemble_steps, machine_description,
                                             NodeKind, read_clip, rgb_message, source_version,
                                             table_cell)
from triton_perception.system import CLIP_HINT, sha256_of, SOURCE_ROOT

WEIGHT_SUFFIXES = ('.onnx', '.plan', '.engine')


def read_frames(bag: Path | None, topic: str | None, video: Path, max_frames: int,
                log: Callable[[str], None]) -> tuple[list[Image], Path]:
    """Return up to `max_frames` frames of the bag's camera (else the clip) as rgb8 Images."""
    if bag is not None:
        frames = []
        for image in read_images(bag, topic or DEFAULT_TOPIC):
            frames.append(rgb_message(image.rgb))
            if len(frames) >= max_frames:
                break
        source = bag
    else:
        if not video.is_file():
            raise BenchError(f'video {video} not found: {CLIP_HINT}')
        frames, source = read_clip(video, max_frames), video
    if not frames:
        raise BenchError(f'no frames in {source}')
    log(f'{len(frames)} frames of {source} held in memory '
        f'({sum(len(frame.data) for frame in frames) / 2 ** 20:.0f} MiB)')
    return frames, source


def input_data(source: Path, topic: str | None, frames: Sequence[Image]) -> InputData:
    """Return the input's path, hash (a bag: over its files' names and hashes), size, frames."""
    files = sorted(path for path in source.rglob('*') if path.is_file()) if source.is_dir() \
        else [source]
    if source.is_dir():
        import hashlib  # noqa: PLC0415
        digest = hashlib.sha256()
        for path in files:
            digest.update(f'{path.relative_to(source)} {sha256_of(path)}\n'.encode())
        sha256 = digest.hexdigest()
    else:
        sha256 = sha256_of(source)
    return {'path': str(source.resolve()), 'topic': topic, 'sha256': sha256,
            'size_bytes': sum(path.stat().st_size for path in files), 'frames': len(frames),
            'resolution': f'{frames[0].width}x{frames[0].height}'}


def gpu_name() -> str:
    """Return the GPUs nvidia-smi names, a Jetson's board (integrated GPU), or 'none found'."""
    if shutil.which('nvidia-smi'):
        completed = subprocess.run(['nvidia-smi', '--query-gpu=name', '--format=csv,noheader'],
                                   capture_output=True, text=True, check=False)
        if completed.returncode == 0 and completed.stdout.strip():
            return ', '.join(completed.stdout.split('\n')).strip(', ')
    try:
        board = Path('/proc/device-tree/model').read_text().strip('\0\n ')
    except OSError:
        board = ''
    return f'integrated ({board})' if 'jetson' in board.lower() else 'none found'


def os_name() -> str:
    """Return /etc/os-release's PRETTY_NAME, or the platform's name."""
    try:
        for line in Path('/etc/os-release').read_text().splitlines():
            if line.startswith('PRETTY_NAME='):
                return line.split('=', 1)[1].strip('"')
    except OSError:
        pass
    return os.uname().sysname


def ros_distro() -> str:
    """Return ROS_DISTRO, or the distribution of the installed rclpy wheel (ros-<distro>-rclpy)."""
    if os.environ.get('ROS_DISTRO'):
        return os.environ['ROS_DISTRO']
    for distribution in importlib.metadata.distributions():
        match = re.fullmatch(r'ros[-_](\w+)[-_]rclpy', distribution.metadata['Name'] or '')
        if match:
            return f'{match.group(1)} (PyPI wheels)'
    return 'unknown'


def machine(profile: str, precision: str, triton_version: str) -> RateSearchMachine:
    """Return the machine: CPU, cores, GPU, memory, OS, ROS, Triton, profile and precision."""
    base = machine_description(profile, triton_version)
    return {'cpu_model': base['cpu_model'], 'architecture': base['architecture'],
            'cores': base['cores'], 'usable_cores': base['usable_cores'], 'gpu': gpu_name(),
            'memory_gb': base['memory_gb'], 'os': os_name(), 'kernel': base['kernel'],
            'python': base['python'], 'ros_distro': ros_distro(), 'triton': triton_version,
            'profile': profile, 'precision': precision,
            'load_average_start': base['load_average_start'],
            'load_average_end': base['load_average_start']}


def package_version() -> dict[str, str | None]:
    """Return the package's version (installed metadata, else package.xml) and its commit."""
    try:
        version: str | None = distribution_version('triton_perception')
    except PackageNotFoundError:
        found = re.search(r'<version>([^<]+)</version>',
                          (SOURCE_ROOT / 'package.xml').read_text(encoding='utf-8'))
        version = found.group(1) if found else None
    return {'version': version, 'source': source_version()}


def model_hashes(repository: Path, kinds: Sequence[NodeKind]) -> dict[str, str]:
    """Return the SHA-256 of every weights file the served ensembles' steps hold, by path."""
    hashes = {}
    for kind in kinds:
        for step in ensemble_steps(repository, kind.model):
            for path in sorted((repository / step).rglob('*')):
                if path.suffix in WEIGHT_SUFFIXES and path.is_file():
                    hashes[str(path.relative_to(repository))] = sha256_of(path)
    return hashes


def rate_row(label: str, figures: RateFigures) -> str:
    """Return one Markdown row of a run's headline figures."""
    cpu, latency = figures['cpu'], figures['latency_ms']
    return (f"| {label} | {figures['rate_hz']:g} | "
            f"{table_cell(figures['BasicPerformanceMetrics.MEAN_FRAME_RATE'])} | "
            f"{figures['dropped_share']:.1%} | "
            f"{table_cell(figures['BasicPerformanceMetrics.MEAN_LATENCY'])} / "
            f"{table_cell(latency['p50'])} / {table_cell(latency['p90'])} / "
            f"{table_cell(latency['p99'])} / "
            f"{table_cell(figures['BasicPerformanceMetrics.MAX_LATENCY'])} | "
            f"{table_cell(figures['BasicPerformanceMetrics.MEAN_JITTER'])} | "
            f"{table_cell(cpu['nodes_percent_of_core'])} / "
            f"{table_cell(cpu['server_percent_of_core'])} | "
            f"{table_cell(figures['memory_mib']['nodes'])} / "
            f"{table_cell(figures['memory_mib']['server'])} |")


def rate_table(report: RateSearchReport) -> str:
    """Return the search's result and every fixed-rate run as a Markdown table."""
    search = report['search']
    lines = [f"highest rate sustained with at most {search['drop_limit']:.0%} of frames missed: "
             f"**{search['max_sustained_hz']:g} Hz** per camera ({len(search['probes'])} "
             'probes)', '',
             '| run | rate Hz | output Hz | missed | latency ms mean / p50 / p90 / p99 / max | '
             'jitter ms | CPU % of a core, nodes / server | RSS MiB, nodes / server |',
             '| --- | --- | --- | --- | --- | --- | --- | --- |']
    lines += [rate_row(probe['phase'], probe['figures']) for probe in search['probes']]
    for rate, fixed in report.get('fixed_rates', {}).items():
        lines += [rate_row(f'{rate} #{index + 1}', run) for index, run in enumerate(fixed['runs'])]
    return '\n'.join(lines)
