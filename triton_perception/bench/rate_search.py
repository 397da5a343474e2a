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

from dataclasses import asdict, dataclass
import math
import os
from pathlib import Path
import tempfile
import time
from typing import Callable, Sequence

import numpy as np
from sensor_msgs.msg import Image
from vision_msgs.msg import Detection2DArray
import yaml

from triton_perception.bench.bench_schema import Percentiles
from triton_perception.bench.glue_cases import (BOTH, camera_namespaces, DETECTIONS, GlueCase,
                                                LANES, publish_paced, start_processes, wait_ready)
from triton_perception.bench.measures import check_alive
from triton_perception.bench.rate_search_report import (input_data, machine, model_hashes,
                                                        package_version, read_frames)
from triton_perception.bench.rate_search_schema import (FixedRate, LatencySplit, Probe,
                                                        RATE_SEARCH_SCHEMA_VERSION,
                                                        RateFigures, RateSearchReport,
                                                        SearchResult)
from triton_perception.bench.report import busy_note, load_averages, write_report
from triton_perception.bench.ros_side import CaseWiring, ros_environment, RosSide, stop_bench
from triton_perception.bench.settings import (BenchError, DEFAULT_VIDEO, DRAIN_TIMEOUT_S,
                                              NodeKind, Stamp)
from triton_perception.bench.stand_in_node import MODULE as STAND_IN_MODULE
from triton_perception.bench.stand_in_node import NODE_NAME as STAND_IN_NODE
from triton_perception.bench.triton_side import inference_statistics, step_breakdown
from triton_perception.frames import NodeStatus
from triton_perception.serving import ServerConfig, TritonServer
from triton_perception.system import (default_model_repository, free_ports, NodeProcess,
                                      private_domain, ros_arguments, tree_cpu_s, tree_rss_mb)

MODELS = {'detection': DETECTIONS, 'lanes': LANES, 'both': BOTH}
LAYOUTS = ('single', 'per_node', 'groups_of_2', 'per_camera')
STAND_IN_KIND = NodeKind(STAND_IN_NODE, '', (), (('detections', Detection2DArray),), dict)
Prober = Callable[[float, float, str], RateFigures]


@dataclass(frozen=True)
class RateSearchSettings:
    """
    What `bench --rate-search` runs and how.

    `bag` (its camera `topic`) or else `video` gives the frames, at most `max_frames` of them
    held in memory. `stand_in_hz`: replace the pipeline by stand-in nodes of that capacity
    (0: they answer nothing). Rates are per camera, in Hz.
    """

    cameras: int = 1
    models: str = 'both'
    layout: str = 'single'
    bag: Path | None = None
    topic: str | None = None
    video: Path = DEFAULT_VIDEO
    max_frames: int = 120
    lower_hz: float = 1.0
    upper_hz: float = 40.0
    step_hz: float = 0.5
    bisection_width_hz: float = 2.0
    drop_limit: float = 0.05
    window_s: float = 10.0
    fixed_rates: tuple[float, ...] = (10.0, 30.0)
    repeats: int = 3
    json_path: Path | None = None
    profile: str = 'cpu'
    precision: str = 'fp'
    triton_url: str | None = None
    model_repository: Path | None = None
    stand_in_hz: float | None = None
    command: str = ''

    def __post_init__(self) -> None:
        """Raise BenchError for settings the search cannot run with."""
        if self.models not in MODELS:
            raise BenchError(f'--models {self.models}: choose from {", ".join(MODELS)}')
        if self.layout not in LAYOUTS:
            raise BenchError(f'--layout {self.layout}: choose from {", ".join(LAYOUTS)}')
        if not 1 <= self.cameras <= 16:
            raise BenchError(f'--cameras: need 1-16 cameras for --rate-search, got {self.cameras}')
        if not 0 < self.lower_hz < self.upper_hz:
            raise BenchError(f'--search-range: need 0 < lower < upper, got {self.lower_hz:g},'
                             f'{self.upper_hz:g}')
        if self.step_hz <= 0 or self.bisection_width_hz < self.step_hz:
            raise BenchError(f'--search-step {self.step_hz:g}: need a step > 0 and no wider than '
                             f'the bisection width ({self.bisection_width_hz:g} Hz)')
        if self.window_s <= 0 or self.repeats < 1 or not 0 < self.drop_limit < 1:
            raise BenchError('need --duration > 0, --repeats >= 1 and a drop limit in (0, 1)')
        if any(rate <= 0 for rate in self.fixed_rates):
            raise BenchError(f'--rates: every rate must be above 0, got {self.fixed_rates}')


def sustained(sent: int, missed: int, drop_limit: float) -> bool:
    """Say whether a run missed at most ceil(drop_limit x sent) frames (ros2_benchmark's test)."""
    return missed <= math.ceil(sent * drop_limit)


def bisection_probes(settings: RateSearchSettings) -> int:
    """Return how many bisection probes the search runs (for the progress bar)."""
    width = settings.upper_hz - settings.lower_hz
    return max(0, math.ceil(math.log2(width / settings.bisection_width_hz)))


def search(probe: Prober, settings: RateSearchSettings) -> SearchResult:
    """
    Find the highest sustained rate: a trial run, bisection, then steps up (ros2_benchmark's order).

    `probe(rate_hz, window_s, phase)` runs the pipeline at a rate and returns its figures.
    """
    probes: list[Probe] = []

    def run(rate: float, phase: str) -> bool:
        figures = probe(rate, settings.window_s, phase)
        probes.append({'phase': phase, 'figures': figures})
        return figures['sustained']

    lower, upper = settings.lower_hz, settings.upper_hz
    run(round((lower + upper) / 2, 3), 'trial')
    while upper - lower > settings.bisection_width_hz:
        middle = round((lower + upper) / 2, 3)
        if run(middle, 'bisection'):
            lower = middle
        else:
            upper = middle
    found = lower
    while (rate := round(found + settings.step_hz, 3)) <= settings.upper_hz:
        if not run(rate, 'linear'):
            break
        found = rate
    # One window that held may have been a lucky one: the rate found holds a second window, or
    # the search steps down until one does.
    while found > settings.lower_hz and not run(found, 'confirmation'):
        found = max(settings.lower_hz, round(found - settings.step_hz, 3))
    at_bound = ('upper' if found + settings.step_hz > settings.upper_hz else
                'lower' if found == settings.lower_hz else None)
    return {'drop_limit': settings.drop_limit, 'lower_hz': settings.lower_hz,
            'upper_hz': settings.upper_hz, 'bisection_width_hz': settings.bisection_width_hz,
            'step_hz': settings.step_hz, 'window_s': settings.window_s, 'probes': probes,
            'max_sustained_hz': found, 'at_bound': at_bound}


def rounded(value: float | None, digits: int = 2) -> float | None:
    """Return `value` rounded for the report, None as None."""
    return None if value is None else round(float(value), digits)


def percentiles(values: Sequence[float]) -> Percentiles:
    """Return p50, p90 and p99 (ms), None without values."""
    if not values:
        return {'p50': None, 'p90': None, 'p99': None}
    p50, p90, p99 = np.percentile(values, [50, 90, 99])
    return {'p50': rounded(p50), 'p90': rounded(p90), 'p99': rounded(p99)}


def jitters_ms(arrivals: Sequence[float]) -> list[float]:
    """Return |second differences| of one camera's arrival times in ms (ros2_benchmark's jitter)."""
    if len(arrivals) < 3:
        return []
    return [float(value) for value in np.abs(np.diff(np.diff(np.array(arrivals) * 1e3)))]


def latency_split(end_to_end: float | None, before: NodeStatus | None, after: NodeStatus | None,
                  server_ms: float | None) -> LatencySplit:
    """
    Where one output's mean end-to-end time went over a run, in ms.

    From the node's stage sums (its /diagnostics) between two statuses: take, decode and queue
    until the request is sent (`to_request`), the request's round trip, of which Triton's own
    request time (`server`, the statistics extension), and response -> published; what the
    node does not see (the frame's and the result's transport and executors) is the rest.
    """
    stages: dict[str, float] = {}
    if before is not None and after is not None and after.timed > before.timed:
        frames = after.timed - before.timed
        stages = {stage: (total - before.stage_ms_sums.get(stage, 0.0)) / frames
                  for stage, total in after.stage_ms_sums.items()}
    node_ms = sum(stages.values()) if stages else None
    return {'end_to_end': rounded(end_to_end),
            'take_decode_queue': rounded(stages.get('to_request')),
            'request': rounded(stages.get('request')), 'server': rounded(server_ms),
            'publish': rounded(stages.get('to_publish')),
            'transport_and_executor': (rounded(end_to_end - node_ms) if end_to_end is not None
                                       and node_ms is not None else None)}


def server_request_ms(before: dict[str, dict[str, int]],
                      after: dict[str, dict[str, int]], model: str) -> float | None:
    """Return the model's mean request time (Triton's `success` timer) between two readings."""
    count = after.get(model, {}).get('success_count', 0) - before.get(model, {}).get(
        'success_count', 0)
    if count <= 0:
        return None
    return (after[model]['success'] - before.get(model, {}).get('success', 0)) / count / 1e6


class RatePipeline:
    """The pipeline under test, its wiring in the bench and the frames it is fed."""

    def __init__(self, settings: RateSearchSettings, ros: RosSide, frames: list[Image],
                 triton_url: str | None, server_pid: int | None, log_directory: Path,
                 log: Callable[[str], None]) -> None:
        """Start the pipeline's processes and wait until every camera is served."""
        self.settings = settings
        self.frames = frames
        self.triton_url = triton_url
        self.server_pid = server_pid
        self.log = log
        self.processes: list[NodeProcess] = []
        namespace = f'/rate_search_{os.getpid()}'
        self.cameras = camera_namespaces(namespace, settings.cameras)
        case = GlueCase(settings.layout, MODELS[settings.models], settings.cameras)
        stand_in = settings.stand_in_hz is not None
        self.kinds = (STAND_IN_KIND,) if stand_in else case.kinds
        self.wirings = [CaseWiring(ros, camera, self.kinds, reporting=not stand_in,
                                   image_readers=1 if stand_in else case.image_readers)
                        for camera in self.cameras]
        try:
            if stand_in:
                for camera in self.cameras:
                    self.processes.append(NodeProcess(
                        STAND_IN_NODE, ros_arguments({'capacity_hz': settings.stand_in_hz},
                                                     namespace=camera),
                        log_directory, module=STAND_IN_MODULE))
                case = GlueCase('floor', DETECTIONS, settings.cameras)  # readiness: topics only
            else:
                assert triton_url is not None
                start_processes(case, triton_url, namespace, log_directory, self.processes)
            log(f'started {len(self.processes)} process(es); waiting until every camera is '
                'served')
            wait_ready(case, self.wirings, self.cameras, self.processes)
        except BaseException:
            self.close()
            raise

    def outputs(self) -> list[str]:
        """Return the outputs a frame is delivered by (per camera): node/topic."""
        return [f'{kind.executable}/{topic}' for kind in self.kinds for topic, _ in kind.topics]

    def statuses(self) -> list[dict[str, NodeStatus]]:
        """Return a copy of each camera's latest node statuses."""
        return [dict(wiring.statuses) for wiring in self.wirings]

    def run(self, rate_hz: float, window_s: float, phase: str) -> RateFigures:
        """Publish at `rate_hz` per camera for `window_s`, drain, and return the run's figures."""
        url = self.triton_url if self.settings.stand_in_hz is None else None
        cpu_before = {process.pid: tree_cpu_s(process.pid) for process in self.processes}
        server_before = tree_cpu_s(self.server_pid) if self.server_pid else 0.0
        statistics_before = inference_statistics(url) if url else {}
        statuses_before = self.statuses()
        start = time.monotonic()
        stamps = publish_paced(self.wirings, self.frames, rate_hz, window_s, self.processes)
        span_s = time.monotonic() - start
        for wiring, sent in zip(self.wirings, stamps):
            wiring.tracker.wait(sent[-1], DRAIN_TIMEOUT_S)
        time.sleep(0.1)  # results of the last frames' neighbours still in flight
        for process in self.processes:
            check_alive(process)
        cpu_s = sum(tree_cpu_s(process.pid) - before for process, before in
                    zip(self.processes, cpu_before.values()))
        server_s = tree_cpu_s(self.server_pid) - server_before if self.server_pid else None
        statistics_after = inference_statistics(url) if url else {}
        statuses_after = self.statuses()
        return self._figures(rate_hz, window_s, phase, stamps, span_s, cpu_s, server_s,
                             (statistics_before, statistics_after),
                             (statuses_before, statuses_after))

    def _figures(self, rate_hz: float, window_s: float, phase: str,
                 stamps: list[list[Stamp]], span_s: float, cpu_s: float, server_s: float | None,
                 statistics: tuple[dict[str, dict[str, int]], dict[str, dict[str, int]]],
                 statuses: tuple[list[dict[str, NodeStatus]], list[dict[str, NodeStatus]]]
                 ) -> RateFigures:
        sent = sum(len(camera) for camera in stamps)
        latencies: list[float] = []
        jitters: list[float] = []
        ends: list[float] = []
        for wiring, camera in zip(self.wirings, stamps):
            arrivals = []
            for stamp in camera:
                done = wiring.tracker.done_at(stamp)
                if done is not None:
                    arrivals.append(done)
                    latencies.append((done - wiring.tracker.sent[stamp]) * 1e3)
            jitters += jitters_ms(sorted(arrivals))
            ends += arrivals
        delivered = len(latencies)
        if delivered == 0:
            raise BenchError(
                f'the pipeline answered none of the {sent} frames sent at {rate_hz:g} Hz '
                f'({", ".join(self.outputs())} on {", ".join(self.cameras)}) within the run and '
                f'{DRAIN_TIMEOUT_S:g} s after it')
        missed = sent - delivered
        first_sent = min(wiring.tracker.sent[camera[0]] for wiring, camera in
                         zip(self.wirings, stamps))
        last_sent = max(wiring.tracker.sent[camera[-1]] for wiring, camera in
                        zip(self.wirings, stamps))
        received_s = max(ends) - min(ends)
        frames = max(sent, 1)
        figures: RateFigures = {
            'rate_hz': rate_hz, 'window_s': round(span_s, 2),
            'BasicPerformanceMetrics.NUM_FRAMES_SENT': sent,
            'BasicPerformanceMetrics.NUM_MISSED_FRAMES': missed,
            'BasicPerformanceMetrics.MEAN_PLAYBACK_FRAME_RATE': (
                rounded(sent / (last_sent - first_sent)) if last_sent > first_sent else None),
            'BasicPerformanceMetrics.MEAN_FRAME_RATE': (
                rounded(delivered / received_s) if received_s > 0 else None),
            'BasicPerformanceMetrics.MEAN_LATENCY': rounded(float(np.mean(latencies))),
            'BasicPerformanceMetrics.MIN_LATENCY': rounded(min(latencies)),
            'BasicPerformanceMetrics.MAX_LATENCY': rounded(max(latencies)),
            'BasicPerformanceMetrics.MEAN_JITTER': (rounded(float(np.mean(jitters)))
                                                    if jitters else None),
            'BasicPerformanceMetrics.MIN_JITTER': rounded(min(jitters)) if jitters else None,
            'BasicPerformanceMetrics.MAX_JITTER': rounded(max(jitters)) if jitters else None,
            'BasicPerformanceMetrics.STD_DEV_JITTER': (rounded(float(np.std(jitters)))
                                                       if jitters else None),
            'dropped_share': round(missed / frames, 4),
            'sustained': sustained(sent, missed, self.settings.drop_limit),
            'latency_ms': percentiles(latencies),
            'results_per_output': {
                kind.executable: sum(wiring.tracker.latency_ms(stamp, (kind.executable,))
                                     is not None for wiring, camera in zip(self.wirings, stamps)
                                     for stamp in camera) for kind in self.kinds},
            'cpu': {'nodes_percent_of_core': round(cpu_s / span_s * 100, 1),
                    'server_percent_of_core': (round(server_s / span_s * 100, 1)
                                               if server_s is not None else None),
                    'nodes_ms_per_frame': round(cpu_s * 1e3 / frames, 2),
                    'server_ms_per_frame': (round(server_s * 1e3 / frames, 2)
                                            if server_s is not None else None)},
            'memory_mib': {'nodes': round(sum(tree_rss_mb(process.pid)
                                              for process in self.processes), 1),
                           'server': (round(tree_rss_mb(self.server_pid), 1)
                                      if self.server_pid else None)},
            'latency_split_ms': self._split(stamps, statistics, statuses),
            'triton_steps_ms': step_breakdown(*statistics),
        }
        self.log(f'{phase} {rate_hz:g} Hz: {sent} sent, {missed} missed '
                 f'({missed / frames:.1%}), output '
                 f"{figures['BasicPerformanceMetrics.MEAN_FRAME_RATE']} Hz, latency p50/p99 "
                 f"{figures['latency_ms']['p50']}/{figures['latency_ms']['p99']} ms: "
                 + ('sustained' if figures['sustained'] else 'NOT sustained'))
        return figures

    def _split(self, stamps: list[list[Stamp]],
               statistics: tuple[dict[str, dict[str, int]], dict[str, dict[str, int]]],
               statuses: tuple[list[dict[str, NodeStatus]], list[dict[str, NodeStatus]]]
               ) -> dict[str, LatencySplit]:
        """Each output's mean latency split (the first camera's nodes' stage times)."""
        split = {}
        for kind in self.kinds:
            values = [latency for wiring, camera in zip(self.wirings, stamps) for stamp in camera
                      if (latency := wiring.tracker.latency_ms(stamp, (kind.executable,)))
                      is not None]
            split[kind.executable] = latency_split(
                float(np.mean(values)) if values else None,
                statuses[0][0].get(kind.executable), statuses[1][0].get(kind.executable),
                server_request_ms(*statistics, kind.model) if kind.model else None)
        return split

    def close(self) -> None:
        """Stop every process started and close the wiring."""
        for process in self.processes:
            code = process.stop()
            if code not in (0, None):
                self.log(f'{process.name} exited with code {code}:\n{process.output_tail()}')
        for wiring in self.wirings:
            wiring.close()


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
    temporary = Path(tempfile.mkdtemp(prefix='triton_perception-rates-'))
    environment_before = dict(os.environ)
    domain = private_domain()
    os.environ.update(ros_environment(temporary / 'ros', domain))
    server: TritonServer | None = None
    ros: RosSide | None = None
    pipeline: RatePipeline | None = None
    repository = (settings.model_repository or default_model_repository()).resolve()
    try:
        frames, source = read_frames(settings.bag, settings.topic, settings.video,
                                     settings.max_frames, log)
        url, server_pid, triton_version = None, None, 'none (stand-in pipeline)'
        if settings.stand_in_hz is None:
            server, url, server_pid, triton_version = _server(settings, repository, log)
        ros = RosSide()
        pipeline = RatePipeline(settings, ros, frames, url, server_pid, temporary, log)
        report: RateSearchReport = {
            'schema_version': RATE_SEARCH_SCHEMA_VERSION,
            'command': settings.command,
            'package': package_version(),
            'machine': machine(settings.profile if settings.stand_in_hz is None
                               else 'none (stand-in)', settings.precision, triton_version),
            'models': ({} if settings.stand_in_hz is not None
                       else model_hashes(repository, pipeline.kinds)),
            'input': input_data(source, settings.topic, frames),
            'pipeline': {'cameras': settings.cameras, 'models': settings.models,
                         'layout': settings.layout, 'outputs': pipeline.outputs(),
                         'stand_in_capacity_hz': settings.stand_in_hz},
        }
        progress = Progress(settings, log)
        active = pipeline

        def probe(rate: float, window_s: float, phase: str) -> RateFigures:
            figures = active.run(rate, window_s, phase)
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
            runs = []
            for repeat in range(settings.repeats):
                runs.append(probe(rate, settings.window_s, f'fixed #{repeat + 1}'))
            fixed: FixedRate = {'runs': runs, 'median': medians(runs)}
            report['fixed_rates'][f'{rate:g}fps'] = fixed  # ros2_benchmark's key
            report['machine']['load_average_end'] = load_averages()
            write_report(report, settings.json_path)
        return report
    finally:
        if pipeline is not None:
            pipeline.close()
        stop_bench(ros, server, temporary, domain)
        os.environ.clear()
        os.environ.update(environment_before)


def _server(settings: RateSearchSettings, repository: Path, log: Callable[[str], None]
            ) -> tuple[TritonServer | None, str, int | None, str]:
    """Start tritonserver (or use --triton-url): the server, its URL, pid and release."""
    import tritonclient.grpc as grpcclient  # noqa: PLC0415 (not for the stand-in)

    from triton_perception.bench.run import external_server  # noqa: PLC0415
    server = None
    if settings.triton_url:
        url = settings.triton_url
        server_pid = external_server(url, log)
    else:
        http_port, grpc_port, metrics_port = free_ports(3)
        server = TritonServer(ServerConfig(
            model_repository=repository, profile=settings.profile,
            precision=settings.precision, http_port=http_port, grpc_port=grpc_port,
            metrics_port=metrics_port), log=log, show_server_log=False)
        server.start()
        server.wait_until_ready()
        url, server_pid = server.grpc_url, server.pid
    with grpcclient.InferenceServerClient(url) as client:
        triton_version = client.get_server_metadata().version
    return server, url, server_pid, triton_version


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
