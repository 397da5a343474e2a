"""
Memory of the perception processes: one perception_process against one process per node.

For 1 and 4 cameras with detection, lanes and overlay, the plan's processes are started
against a running Triton and left idle until their resident memory settles (the nodes have
imported everything and connected); then the memory of every perception process is summed. Python,
rclpy, OpenCV and the gRPC client are paid once per process, so the layouts differ by about
that much per process.
"""
from __future__ import annotations

from pathlib import Path
import tempfile
import time
from typing import Callable

from triton_perception.bench.bench_schema import MemoryFigures
from triton_perception.pipeline import pipeline_plan
from triton_perception.serving import ServerConfig, TritonServer
from triton_perception.system import default_model_repository, free_ports, NodeProcess, tree_rss_mb

CAMERA_COUNTS = (1, 4)
LAYOUTS = ('single', 'per_node')
SETTLE_S = 1.0          # between two RSS samples; the figure is taken once they agree
SETTLE_MIB = 2.0        # what "agree" means
READY_TIMEOUT_S = 120.0


def camera_argument(cameras: int) -> str:
    """Return the `cameras` launch argument for `cameras` cameras: cam0=/cam0/image_raw,..."""
    return ','.join(f'cam{index}=/cam{index}/image_raw' for index in range(cameras))


def measure(triton_url: str, cameras: int, layout: str,
            log: Callable[[str], None]) -> MemoryFigures:
    """Start the plan's node processes for `cameras` cameras, return their settled RSS (MiB)."""
    plan = pipeline_plan({'start_triton': 'false', 'triton_url': triton_url,
                          'cameras': camera_argument(cameras), 'namespace': f'/memory{cameras}',
                          'process_layout': layout})
    processes: list[NodeProcess] = []
    with tempfile.TemporaryDirectory(prefix='triton_perception-memory-') as scratch:
        try:
            for node in plan.nodes:
                processes.append(NodeProcess(node.executable, node.ros_arguments(),
                                             Path(scratch)))
            rss = _settled_rss(processes)
        finally:
            for process in processes:
                process.stop()
    log(f'{cameras} camera(s), {layout}: {len(processes)} process(es), {rss:.0f} MiB')
    return {'cameras': cameras, 'layout': layout, 'processes': len(processes),
            'rss_mib': round(rss, 1), 'rss_per_camera_mib': round(rss / cameras, 1)}


def _settled_rss(processes: list[NodeProcess]) -> float:
    """Sum the processes' RSS once two samples SETTLE_S apart differ by less than SETTLE_MIB."""
    deadline = time.monotonic() + READY_TIMEOUT_S
    previous = -1.0
    while time.monotonic() < deadline:
        if not all(process.alive() for process in processes):
            raise RuntimeError('a perception process ended while idle: '
                               + next(p.output() for p in processes if not p.alive())[-2000:])
        current = sum(tree_rss_mb(process.pid) for process in processes)
        if abs(current - previous) < SETTLE_MIB:
            return current
        previous = current
        time.sleep(SETTLE_S)
    return previous


def measure_all(triton_url: str | None, log: Callable[[str], None]) -> list[MemoryFigures]:
    """Measure every camera count and layout against `triton_url`, or a CPU server started here."""
    if triton_url:
        return [measure(triton_url, cameras, layout, log)
                for cameras in CAMERA_COUNTS for layout in LAYOUTS]
    http_port, grpc_port, metrics_port = free_ports(3)
    with TritonServer(ServerConfig(model_repository=default_model_repository(), profile='cpu',
                                   http_port=http_port, grpc_port=grpc_port,
                                   metrics_port=metrics_port), log=log,
                      show_server_log=False) as server:
        return [measure(server.grpc_url, cameras, layout, log)
                for cameras in CAMERA_COUNTS for layout in LAYOUTS]


def memory_table(results: list[MemoryFigures]) -> str:
    """Return the results as a Markdown table."""
    lines = ['| cameras | layout | processes | RSS (MiB) | per camera (MiB) |',
             '| --- | --- | --- | --- | --- |']
    lines += [f"| {row['cameras']} | {row['layout']} | {row['processes']} | {row['rss_mib']:.0f} "
              f"| {row['rss_per_camera_mib']:.0f} |" for row in results]
    return '\n'.join(lines)
