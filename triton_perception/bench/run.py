"""
One benchmark run: the server (started or found), the clip, the ROS side, then every case.

What the cases share is set up and torn down here, and the report's header (machine, source,
settings) written; each case is measured by Benchmark (benchmark.py).
"""
from __future__ import annotations

from typing import Callable

from sensor_msgs.msg import Image

from triton_perception.bench.bench_schema import BenchReport, BenchRun, CaseFigures
from triton_perception.bench.benchmark import Benchmark
from triton_perception.bench.report import METHOD
from triton_perception.bench.session import (BenchError, BenchSession, BenchSettings,
                                             load_averages, machine_description, RATE_HZ,
                                             read_clip, ServedTriton, source_version,
                                             WARMUP_FRAMES, write_report)
from triton_perception.models import check_models
from triton_perception.system import CLIP_HINT, default_model_repository
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
    with BenchSession('triton_perception-bench-', log) as session:
        log(f'reading {settings.video}')
        messages = read_clip(settings.video)
        if settings.triton_url:
            served = session.find_server(settings.triton_url)
            profile = settings.profile or 'unknown (external server)'
        else:
            served = session.start_server(repository, settings.profile or 'cpu',
                                          settings.precision)
            assert served.server is not None
            profile = f'{served.server.profile}, precision {settings.precision}'
        ros = session.open_ros()
        report = _report_head(settings, profile, served, messages[0])
        report['machine']['ros_domain_id'] = session.domain.domain_id
        report['tracking'] = tracking_update_ms()
        log(tracking_line(report['tracking']))
        benchmark = Benchmark(settings, repository, served.url, served.pid, ros, messages,
                              session.scratch, log)
        cases: dict[str, CaseFigures] = {}
        for case in settings.cases:
            cases[case] = benchmark.run_case(case)
            report['machine']['load_average_end'] = load_averages()
            write_report(BenchRun(report, cases).report(), settings.json_path)
        return BenchRun(report, cases)


def _report_head(settings: BenchSettings, profile: str, served: ServedTriton,
                 first: Image) -> BenchReport:
    """Return the report's head: the machine, the source and every case's settings."""
    return {
        'machine': machine_description(profile, served.version),
        'source': source_version(),
        'settings': {'frames': settings.frames, 'warmup_frames': WARMUP_FRAMES,
                     'duration_s': settings.duration_s, 'rate_hz': RATE_HZ,
                     'video': str(settings.video), 'frame_size': [first.width, first.height],
                     'cases': list(settings.cases), 'triton_url': served.url,
                     'node_parameters': settings.node_parameters(),
                     'triton_started_by_bench': served.server is not None},
        'method': METHOD,
    }
