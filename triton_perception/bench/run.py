"""
One benchmark run: the server (started or found), the clip, the ROS side, then every case.

What the cases share is set up and torn down here, and the report's header (machine, source,
settings) written; each case is measured by Benchmark (benchmark.py).
"""
from __future__ import annotations

import os
from pathlib import Path
import tempfile
import threading
from typing import Callable

from sensor_msgs.msg import Image
import tritonclient.grpc as grpcclient

from triton_perception.bench.bench_schema import BenchReport, BenchRun, CaseFigures
from triton_perception.bench.benchmark import Benchmark
from triton_perception.bench.measures import listening_pid
from triton_perception.bench.report import (load_averages, machine_description, METHOD,
                                            source_version, write_report)
from triton_perception.bench.ros_side import read_clip, ros_environment, RosSide, stop_bench
from triton_perception.bench.settings import (BenchError, BenchSettings, NODES, RATE_HZ,
                                              READY_TIMEOUT_S, WARMUP_FRAMES)
from triton_perception.models import check_models
from triton_perception.pipeline import wait_for_remote_models
from triton_perception.serving import is_loopback, ServerConfig, TritonServer
from triton_perception.system import (CLIP_HINT, default_model_repository, free_ports,
                                      private_domain)
from triton_perception.tracking import tracking_line, tracking_update_ms


def run_bench(settings: BenchSettings, log: Callable[[str], None]) -> BenchRun:
    """
    Measure every case.

    The JSON is rewritten after each case so an interrupted run keeps what it measured. Every
    process started here is stopped before returning or raising.
    """
    repository = (settings.model_repository or default_model_repository()).resolve()
    problems = check_models(repository)
    if problems:
        raise BenchError('; '.join(problems))
    if not settings.video.is_file():
        raise BenchError(f'video {settings.video} not found: {CLIP_HINT}')
    temporary = Path(tempfile.mkdtemp(prefix='triton_perception-bench-'))
    domain = private_domain()
    os.environ.update(ros_environment(temporary / 'ros', domain))
    server: TritonServer | None = None
    ros: RosSide | None = None
    try:
        log(f'reading {settings.video}')
        messages = read_clip(settings.video)
        if settings.triton_url:
            url = settings.triton_url
            server_pid = external_server(url, log)
            profile = settings.profile or 'unknown (external server)'
        else:
            http_port, grpc_port, metrics_port = free_ports(3)
            server = TritonServer(ServerConfig(
                model_repository=repository, profile=settings.profile or 'cpu',
                precision=settings.precision,
                http_port=http_port, grpc_port=grpc_port, metrics_port=metrics_port),
                log=log, show_server_log=False)
            server.start()
            server.wait_until_ready()
            url, server_pid, profile = server.grpc_url, server.pid, server.profile
            profile += f', precision {settings.precision}'
        with grpcclient.InferenceServerClient(url) as client:
            triton_version = client.get_server_metadata().version
        ros = RosSide()
        log(f'ROS domain {domain.domain_id} (of its own), load average '
            f'{" ".join(f"{value:.2f}" for value in os.getloadavg())}')
        report = _report_head(settings, profile, triton_version, messages[0], url,
                              server is not None)
        report['machine']['ros_domain_id'] = domain.domain_id
        report['tracking'] = tracking_update_ms()
        log(tracking_line(report['tracking']))
        benchmark = Benchmark(settings, repository, url, server_pid, ros, messages,
                              temporary, log)
        cases: dict[str, CaseFigures] = {}
        for case in settings.cases:
            cases[case] = benchmark.run_case(case)
            report['machine']['load_average_end'] = load_averages()
            write_report(BenchRun(report, cases).report(), settings.json_path)
        return BenchRun(report, cases)
    finally:
        stop_bench(ros, server, temporary, domain)


def external_server(url: str, log: Callable[[str], None]) -> int | None:
    """
    Wait for a Triton the bench did not start to serve the models; return its pid if local.

    A server on another host gives no pid, and so no server CPU or memory figures.
    """
    if not wait_for_remote_models(url, tuple(kind.model for kind in NODES.values()),
                                  threading.Event(), log, READY_TIMEOUT_S):
        raise BenchError(f'Triton at {url} does not serve the models')
    host, port = url.rsplit(':', 1)
    server_pid = listening_pid(int(port)) if is_loopback(host.strip('[]')) else None
    log(f'Triton at {url}: ' + (f'tritonserver pid {server_pid}' if server_pid else
                                'not a local tritonserver; no server CPU/memory figures'))
    return server_pid


def _report_head(settings: BenchSettings, profile: str, triton_version: str, first: Image,
                 url: str, started_server: bool) -> BenchReport:
    """Return the report's head: the machine, the source and every case's settings."""
    return {
        'machine': machine_description(profile, triton_version),
        'source': source_version(),
        'settings': {'frames': settings.frames, 'warmup_frames': WARMUP_FRAMES,
                     'duration_s': settings.duration_s, 'rate_hz': RATE_HZ,
                     'video': str(settings.video), 'frame_size': [first.width, first.height],
                     'cases': list(settings.cases), 'triton_url': url,
                     'node_parameters': settings.node_parameters(),
                     'triton_started_by_bench': started_server},
        'method': METHOD,
    }
