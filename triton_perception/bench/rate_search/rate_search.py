"""
`bench --rate-search`: the highest rate the pipeline sustains, found as ros2_benchmark does.

The pipeline as launched (the plan's processes: cameras, detection, lanes or both, a layout),
or a stand-in of known capacity (stand_in_node), is fed frames held in memory (a bag's camera
topic or a clip, looped; ros2_benchmark's LOOPING mode) at a publisher rate for a window, every
camera at that rate. A frame is delivered when every output of it reached the bench; the rest
are missed. A rate is sustained when at most ceil(drop_limit x frames sent) are missed (5 %,
ros2_benchmark's acceptable frame loss fraction). The search, as ros2_benchmark's auto finder:
a trial run at the middle of the range (warm-up, not judged), a bisection of [lower, upper]
until the interval is narrower than `bisection_width_hz`, then steps of `step_hz` up from its
lower end until a rate is not sustained. Then runs at fixed rates (the given ones and the rate
found), `repeats` times each. Every process it starts is stopped on exit and on Ctrl-C.
"""
from __future__ import annotations

from dataclasses import asdict
import os
from pathlib import Path
import time
from typing import Callable, Sequence

import numpy as np
import yaml

from triton_perception.bench.rate_search.rate_pipeline import RatePipeline, rounded
from triton_perception.bench.rate_search.rate_search_report import (input_data, machine,
                                                                    model_hashes,
                                                                    package_version, read_frames)
from triton_perception.bench.rate_search.rate_search_schema import (FixedRate,
                                                                    RATE_SEARCH_SCHEMA_VERSION,
                                                                    RateFigures, RateSearchReport)
from triton_perception.bench.rate_search.rate_settings import (bisection_probes,
                                                               RateSearchSettings, search)
from triton_perception.bench.session import (BenchSession, busy_note, load_averages,
                                             write_report)
from triton_perception.system import default_model_repository


def fixed_rates(settings: RateSearchSettings, found: float) -> list[float]:
    """Return the fixed rates to run: the given ones and the rate found, in order, once each."""
    return sorted({*settings.fixed_rates, *([found] if found > 0 else [])})


def medians(runs: Sequence[RateFigures]) -> dict[str, float | None]:
    """Return the median over runs of every numeric top-level figure (None where any is None)."""
    result: dict[str, float | None] = {}
    for key, value in runs[0].items():
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            values = [run.get(key) for run in runs]
            result[key] = (rounded(float(np.median([float(v) for v in values if isinstance(
                v, (int, float))]))) if all(isinstance(v, (int, float)) for v in values)
                else None)
    result['p50_ms'] = rounded(float(np.median([run['latency_ms']['p50'] or 0 for run in runs])))
    result['p99_ms'] = rounded(float(np.median([run['latency_ms']['p99'] or 0 for run in runs])))
    return result


class Progress:
    """A progress bar on the log: runs done of those planned, and the time left."""

    WIDTH = 24

    def __init__(self, settings: RateSearchSettings, log: Callable[[str], None]) -> None:
        """Plan the trial, the bisection, about three steps up and the fixed runs."""
        self.planned = (1 + bisection_probes(settings) + 3
                        + (len(settings.fixed_rates) + 1) * settings.repeats)
        self.done = 0
        self.started = time.monotonic()
        self.log = log

    def step(self, what: str) -> None:
        """Count one run more and show the bar."""
        self.done += 1
        self.planned = max(self.planned, self.done)
        filled = round(self.WIDTH * self.done / self.planned)
        left_s = (time.monotonic() - self.started) / self.done * (self.planned - self.done)
        self.log(f"[{'#' * filled}{'.' * (self.WIDTH - filled)}] {self.done}/{self.planned} "
                 f'runs, about {left_s / 60:.0f} min left: {what}')

    def replan(self, remaining: int) -> None:
        """Set the runs still to come once the search is done."""
        self.planned = self.done + remaining


def run_rate_search(settings: RateSearchSettings,
                    log: Callable[[str], None]) -> RateSearchReport:
    """
    Search, run the fixed rates, and return the results (written to json_path after each phase).

    Raises BenchError when the pipeline answers nothing or a process exits.
    """
    repository = (settings.model_repository or default_model_repository()).resolve()
    with BenchSession('triton_perception-rates-', log) as session:
        frames, source = read_frames(settings.bag, settings.topic, settings.video,
                                     settings.max_frames, log)
        served = None
        if settings.stand_in_hz is None:
            served = (session.find_server(settings.triton_url) if settings.triton_url else
                      session.start_server(repository, settings.profile, settings.precision))
        ros = session.open_ros(announce=False)
        pipeline = RatePipeline(settings, ros, frames, served.url if served else None,
                                served.pid if served else None, session.scratch, log)
        try:
            report: RateSearchReport = {
                'schema_version': RATE_SEARCH_SCHEMA_VERSION,
                'command': settings.command,
                'package': package_version(),
                'machine': machine(settings.profile if served else 'none (stand-in)',
                                   settings.precision,
                                   served.version if served else 'none (stand-in pipeline)'),
                'models': model_hashes(repository, pipeline.kinds) if served else {},
                'input': input_data(source, settings.topic, frames),
                'pipeline': {'cameras': settings.cameras, 'models': settings.models,
                             'layout': settings.layout, 'outputs': pipeline.outputs(),
                             'stand_in_capacity_hz': settings.stand_in_hz},
            }
            _measure(settings, pipeline, report, log)
            return report
        finally:
            pipeline.close()


def _measure(settings: RateSearchSettings, pipeline: RatePipeline, report: RateSearchReport,
             log: Callable[[str], None]) -> None:
    """Search, then run the fixed rates, into `report` (written after the search and each rate)."""
    progress = Progress(settings, log)

    def probe(rate: float, window_s: float, phase: str) -> RateFigures:
        figures = pipeline.run(rate, window_s, phase)
        progress.step(f"{phase} {rate:g} Hz: {figures['dropped_share']:.1%} missed")
        return figures

    load_before = os.getloadavg()[0]
    report['search'] = search(probe, settings)
    found = report['search']['max_sustained_hz']
    log(f'highest rate sustained with at most {settings.drop_limit:.0%} missed, held by a '
        f'second window: {found:g} Hz'
        + (f" (at the {report['search']['at_bound']} bound of the range: widen "
           '--search-range)' if report['search']['at_bound'] else '') + busy_note(load_before))
    rates = fixed_rates(settings, found)
    progress.replan(len(rates) * settings.repeats)
    report['fixed_rates'] = {}
    report['metadata'] = _metadata(settings, report, found)
    write_report(report, settings.json_path)
    for rate in rates:
        runs = [probe(rate, settings.window_s, f'fixed #{repeat + 1}')
                for repeat in range(settings.repeats)]
        fixed: FixedRate = {'runs': runs, 'median': medians(runs)}
        report['fixed_rates'][f'{rate:g}fps'] = fixed  # ros2_benchmark's key
        report['machine']['load_average_end'] = load_averages()
        write_report(report, settings.json_path)


def _metadata(settings: RateSearchSettings, report: RateSearchReport,
              found: float) -> dict[str, object]:
    """Return ros2_benchmark's metadata block, under its names."""
    data = report['input']
    return {
        'BenchmarkMetadata.NAME': (f'triton_perception {settings.models}, {settings.cameras} '
                                   f'camera(s), layout {settings.layout}'
                                   + (f', stand-in {settings.stand_in_hz:g} Hz'
                                      if settings.stand_in_hz is not None else '')),
        'BenchmarkMetadata.TEST_DATETIME': time.strftime('%Y-%m-%dT%H:%M:%S%z'),
        'BenchmarkMetadata.DEVICE_ARCH': report['machine'].get('architecture', ''),
        'BenchmarkMetadata.DEVICE_OS': report['machine'].get('os', ''),
        'BenchmarkMetadata.BENCHMARK_MODE': 'LOOPING',
        'BenchmarkMetadata.INPUT_DATA_PATH': data['path'],
        'BenchmarkMetadata.INPUT_DATA_HASH': data['sha256'],
        'BenchmarkMetadata.INPUT_DATA_SIZE': data['size_bytes'],
        'BenchmarkMetadata.DATA_RESOLUTION': data['resolution'],
        'BenchmarkMetadata.PEAK_THROUGHPUT_PREDICTION': found,
        'BenchmarkMetadata.CONFIG': yaml.safe_dump(
            {key: (str(value) if isinstance(value, Path) else
                   list(value) if isinstance(value, tuple) else value)
             for key, value in asdict(settings).items()}, sort_keys=True),
    }
