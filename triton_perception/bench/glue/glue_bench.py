"""
`bench --glue`: what the nodes themselves cost per frame, set against a bare floor node.

What the package's nodes cost beyond the bare minimum is measured here. So the served graphs are
swapped for constant graphs in the same contracts (constant_graphs), leaving Triton about its
transport, and each layout serves bgr8 frames (960x540 unless asked) at 30 Hz per camera
through the package's Fast DDS profile: the bench's floor node (floor_node; with one camera
also taking frames serialized), one process per node, one perception_process, and (with
several cameras) one perception_process per group of 2 cameras and per camera. For each case,
over a fixed window after a warm-up:
- CPU ms per frame: utime + stime of the case's processes (not tritonserver) over the window
  and its drain, divided by the frames published in the window (all cameras); tritonserver's
  and the bench's own process's (publishing, listening) are reported beside it;
- RSS: the processes' summed VmRSS at the window's end, under load, and per camera;
- latency added beyond Triton: per result, publish -> result received here, minus the mean
  Triton request time of its ensemble over the window (Triton's statistics: its queues, the
  Python backend's copies and the graph); p50 and p99 over every camera's results;
- frames lost: from each node's /diagnostics accounting (received, lost before the node,
  settled fates, pending) against the frames the bench sent it; the floor has no accounting,
  so for it only the frames without a result are counted here.
Every process it starts is stopped on exit and on Ctrl-C.
"""
from __future__ import annotations

from dataclasses import dataclass
import os
from pathlib import Path
import time
from typing import Callable, Sequence

import numpy as np
from sensor_msgs.msg import Image

from triton_perception.bench.glue.constant_graphs import constant_repository
from triton_perception.bench.glue.glue_cases import (bgr_frame, FRAME_SIZE, glue_cases,
                                                     node_accounting, results_missing,
                                                     served_per_camera, settled)
from triton_perception.bench.glue.glue_report import targets
from triton_perception.bench.glue.glue_schema import (GlueAccounting, GlueCaseFigures,
                                                      GlueReport, GlueWindow)
from triton_perception.bench.session import (BenchError, BenchSession, busy_note,
                                             camera_namespaces, CaseWiring, DEFAULT_VIDEO,
                                             DRAIN_TIMEOUT_S, GlueCase, inference_statistics,
                                             LAYOUTS, load_averages, machine_description,
                                             publish_paced, RATE_HZ, RosSide, ServedTriton,
                                             source_version, Stamp, start_processes,
                                             step_breakdown, wait_ready, write_report)
from triton_perception.serving import MAX_BATCH
from triton_perception.system import (default_model_repository, MODEL_REPOSITORY_ENV,
                                      NodeProcess, tree_cpu_s, tree_rss_mb)

ACCOUNTING_TIMEOUT_S = 5.0    # for the statuses counting every frame sent (period 1 s)


@dataclass(frozen=True)
class GlueSettings:
    """
    What `bench --glue` runs: camera counts, layouts, the warm-up and the measured window (s).

    `video`: the clip whose first frame is published (a synthetic frame if it is missing), at
    `frame_size` (width, height).
    """

    camera_counts: tuple[int, ...] = (1, 4)
    layouts: tuple[str, ...] = LAYOUTS
    window_s: float = 20.0
    warmup_s: float = 3.0
    json_path: Path | None = None
    video: Path = DEFAULT_VIDEO
    frame_size: tuple[int, int] = FRAME_SIZE
    camera_priorities: str = ''  # as the launch argument, the cameras named cam0, cam1, ...
    max_batch: int = MAX_BATCH  # as the launch argument

    def __post_init__(self) -> None:
        """Raise BenchError for no cameras, an unknown layout, no window or an odd frame size."""
        if not self.camera_counts or min(self.camera_counts) < 1 or max(self.camera_counts) > 16:
            raise BenchError(f'need camera counts in 1-16, got {self.camera_counts}')
        unknown = [layout for layout in self.layouts if layout not in LAYOUTS]
        if unknown or not self.layouts:
            raise BenchError(f'unknown layouts {unknown}; choose from {", ".join(LAYOUTS)}')
        if self.window_s <= 0 or self.warmup_s < 0:
            raise BenchError(f'need --duration > 0 and --warmup >= 0, got {self.window_s:g} and '
                             f'{self.warmup_s:g}')
        if not 1 <= self.max_batch <= MAX_BATCH:
            raise BenchError(f'need --max-batch within 1-{MAX_BATCH}, got {self.max_batch}')
        width, height = self.frame_size
        if not (16 <= width <= 3840 and 16 <= height <= 2160):
            raise BenchError(f'need a frame size within 16x16-3840x2160, got {width}x{height}')


def percentiles(values: Sequence[float]) -> dict[str, float | None]:
    """Return p50 and p99 rounded to 0.01 ms (None without values)."""
    if not values:
        return {'p50': None, 'p99': None}
    return {'p50': round(float(np.percentile(values, 50)), 2),
            'p99': round(float(np.percentile(values, 99)), 2)}


def triton_request_ms(before: dict[str, dict[str, int]],
                      after: dict[str, dict[str, int]]) -> dict[str, float]:
    """Return each ensemble's mean request time in ms (Triton's `success` timer) in between."""
    means = {}
    for model, totals in after.items():
        count = totals['success_count'] - before.get(model, {}).get('success_count', 0)
        if count > 0:
            spent = totals['success'] - before.get(model, {}).get('success', 0)
            means[model] = round(spent / count / 1e6, 3)
    return means


class GlueBench:
    """The cases of one run, against one server on constant graphs and one ROS participant."""

    def __init__(self, settings: GlueSettings, server: ServedTriton, ros: RosSide, frame: Image,
                 log_directory: Path, log: Callable[[str], None]) -> None:
        """Keep what every case uses."""
        self.settings = settings
        self.server = server
        self.ros = ros
        self.frame = frame
        self.log_directory = log_directory
        self.log = log

    def run_case(self, case: GlueCase) -> GlueCaseFigures:
        """Start the case's processes, warm up, measure the window, and stop them."""
        namespace = f'/glue_{os.getpid()}/{case.name}'
        cameras = camera_namespaces(namespace, case.cameras)
        wirings = [CaseWiring(self.ros, camera, case.kinds, image_readers=case.image_readers,
                              reporting=not case.floor) for camera in cameras]
        processes: list[NodeProcess] = []
        load_before = os.getloadavg()[0]
        try:
            start_processes(case, self.server.url, namespace, self.log_directory,
                            processes, self.settings.camera_priorities,
                            self.settings.max_batch)
            self.log(f'{case.name}: started {len(processes)} process(es) '
                     f'({", ".join(sorted({process.name for process in processes}))}); '
                     'waiting until ready')
            wait_ready(case, wirings, cameras, processes)
            self.log(f'{case.name}: warm-up {self.settings.warmup_s:g} s, then '
                     f'{self.settings.window_s:g} s measured, {case.cameras} x {RATE_HZ:g} Hz')
            warm_up = publish_paced(wirings, [self.frame], RATE_HZ, self.settings.warmup_s,
                                    processes)
            stamps, window = self._window(case, wirings, processes)
            sent = [len(early) + len(late) for early, late in zip(warm_up, stamps)]
            accounting = self._accounting(case, wirings, sent, warm_up, stamps)
        finally:
            for process in processes:
                code = process.stop()
                if code not in (0, None):
                    self.log(f'{process.name} exited with code {code}:\n{process.output_tail()}')
            for wiring in wirings:
                wiring.close()
        figures: GlueCaseFigures = {
            **window, **accounting,
            'frames_sent': sum(sent),  # warm-up and window, every camera
            'layout': case.layout, 'models': case.models, 'cameras': case.cameras,
            'frame': f'{self.frame.width}x{self.frame.height}', 'processes': len(processes),
            'load_average_1min': [round(load_before, 2), round(os.getloadavg()[0], 2)]}
        if accounting['accounting'] and case.cameras > 1:
            shares = served_per_camera(accounting['accounting'])
            self.log(f'{case.name}: served per camera (detection_node): '
                     + ', '.join(f'{camera} {share:.1%}' for camera, share in shares.items()))
        self.log(f"{case.name}: CPU {figures['cpu_ms_per_frame']} ms/frame (nodes) + "
                 f"{figures.get('server_cpu_ms_per_frame')} (tritonserver), RSS "
                 f"{figures['rss_mib']} MiB, added latency p50/p99 "
                 f"{figures['added_latency_ms']['p50']}/{figures['added_latency_ms']['p99']} ms, "
                 f"lost {figures['frames_lost']}, without result "
                 f"{figures['frames_without_result']}{busy_note(load_before)}")
        return figures

    def _window(self, case: GlueCase, wirings: Sequence[CaseWiring],
                processes: Sequence[NodeProcess]) -> tuple[list[list[Stamp]], GlueWindow]:
        """Measure the window: the stamps sent; CPU, memory, Triton's time, each latency."""
        url, server_pid = self.server.url, self.server.pid
        cpu_before = {process.pid: tree_cpu_s(process.pid) for process in processes}
        server_before = tree_cpu_s(server_pid) if server_pid else 0.0
        statistics_before = inference_statistics(url)
        start = time.monotonic()
        bench_before = time.process_time()
        stamps = publish_paced(wirings, [self.frame], RATE_HZ, self.settings.window_s, processes)
        span_s = time.monotonic() - start
        bench_s = time.process_time() - bench_before
        rss_mib = sum(tree_rss_mb(process.pid) for process in processes)
        for wiring, sent in zip(wirings, stamps):
            wiring.tracker.wait(sent[-1], DRAIN_TIMEOUT_S)
        cpu_by_process = {process.pid: tree_cpu_s(process.pid) - cpu_before[process.pid]
                          for process in processes}
        cpu_s = sum(cpu_by_process.values())
        by_executable: dict[str, float] = {}
        for process in processes:  # with one process per node: where the CPU goes
            by_executable[process.name] = (by_executable.get(process.name, 0.0)
                                           + cpu_by_process[process.pid])
        server_s = tree_cpu_s(server_pid) - server_before if server_pid else 0.0
        statistics_after = inference_statistics(url)
        triton_ms = triton_request_ms(statistics_before, statistics_after)
        frames = sum(len(sent) for sent in stamps)
        added, e2e = [], []
        for wiring, sent in zip(wirings, stamps):
            for kind in case.kinds:
                for stamp in sent:
                    latency = wiring.tracker.latency_ms(stamp, (kind.executable,))
                    if latency is not None:
                        e2e.append(latency)
                        added.append(latency - triton_ms.get(kind.model, 0.0))
        health_ms = health_check_ms_per_frame(wirings)
        return stamps, {
            'frames_published': frames, 'publish_span_s': round(span_s, 2),
            # The camera health check's own CPU per frame (its thread time, as the nodes report
            # it over the whole run) and its share of the case's CPU per frame.
            'health_check_cpu_ms_per_frame': health_ms,
            'health_check_cpu_share': (round(health_ms / (cpu_s * 1e3 / frames), 4)
                                       if health_ms is not None and cpu_s > 0 else None),
            # Below RATE_HZ when the bench itself could not keep up (the machine overloaded).
            'input_hz_per_camera': round(frames / span_s / case.cameras, 1),
            # Of the results the window's frames should bring, those received (latest-frame
            # slots drop frames that arrive while a request runs; DDS drops what is not taken).
            'served_share': round(len(added) / (frames * len(case.kinds)), 3),
            'cpu_ms_per_frame': round(cpu_s * 1e3 / frames, 2),
            'cpu_ms_per_frame_by_executable': {name: round(seconds * 1e3 / frames, 2)
                                               for name, seconds in by_executable.items()},
            'server_cpu_ms_per_frame': round(server_s * 1e3 / frames, 2),
            # The bench's own process (publishing the frames, taking results and statuses):
            # on a small machine it competes with the case for the cores.
            'bench_cpu_ms_per_frame': round(bench_s * 1e3 / frames, 2),
            'rss_mib': round(rss_mib, 1), 'rss_per_camera_mib': round(rss_mib / case.cameras, 1),
            'triton_request_ms': triton_ms,
            'e2e_latency_ms': percentiles(e2e), 'added_latency_ms': percentiles(added),
            'results_timed': len(added),
            'triton_steps_ms': step_breakdown(statistics_before, statistics_after),
        }

    def _accounting(self, case: GlueCase, wirings: Sequence[CaseWiring], sent: Sequence[int],
                    warm_up: Sequence[Sequence[Stamp]],
                    window: Sequence[Sequence[Stamp]]) -> GlueAccounting:
        """
        Each node's frame accounting once its status counts every frame sent (warm-up included).

        Also, from the bench's side, the frames of the whole run that brought no result.
        """
        deadline = time.monotonic() + ACCOUNTING_TIMEOUT_S
        while not case.floor and time.monotonic() < deadline and not all(
                settled(wiring.statuses, case.kinds, count)
                for wiring, count in zip(wirings, sent)):
            time.sleep(0.05)
        missing = sum(results_missing(wiring, kind, [*early, *late])
                      for wiring, early, late in zip(wirings, warm_up, window)
                      for kind in case.kinds)
        if case.floor:
            return {'accounting': None, 'frames_lost': None, 'frames_without_result': missing,
                    'accounted': None, 'results_missing_at_bench': missing}
        accounting = {
            f'cam{index}': {kind.executable: node_accounting(wiring.statuses.get(kind.executable),
                                                             count) for kind in case.kinds}
            for index, (wiring, count) in enumerate(zip(wirings, sent))}
        nodes = [entry for camera in accounting.values() for entry in camera.values()]
        complete = all(entry['lost'] is not None for entry in nodes)
        return {
            'accounting': accounting,
            'frames_lost': sum(entry['lost'] or 0 for entry in nodes) if complete else None,
            'frames_without_result': (sum(entry['without_result'] or 0 for entry in nodes)
                                      if complete else None),
            'accounted': complete and all(entry['balanced'] and entry['unseen'] == 0
                                          for entry in nodes),
            'results_missing_at_bench': missing,
        }


def health_check_ms_per_frame(wirings: Sequence[CaseWiring]) -> float | None:
    """
    Return the camera health check's CPU per frame over every camera of a case, in ms.

    From the newest health status of each camera (`check_cpu_ms` and `frames`, counted since
    the node started); None where no camera reports one (the floor nodes).
    """
    statuses = [wiring.camera_status for wiring in wirings if wiring.camera_status is not None]
    frames = sum(int(status.values.get('frames', '0')) for status in statuses)
    if not statuses or frames == 0:
        return None
    return round(sum(float(status.values.get('check_cpu_ms', '0')) for status in statuses)
                 / frames, 3)


def run_glue(settings: GlueSettings, log: Callable[[str], None]) -> GlueReport:
    """
    Serve constant graphs, run every case, and return the report (JSON rewritten per case).

    Every process started here is stopped before returning or raising.
    """
    with BenchSession('triton_perception-glue-', log) as session:
        repository = constant_repository(default_model_repository(),
                                         session.scratch / 'model_repository')
        log(f'constant graphs in the served contracts: {repository}')
        # The nodes read the model records (labels, lane model) from the served repository.
        os.environ[MODEL_REPOSITORY_ENV] = str(repository)
        served = session.start_server(repository, 'cpu')
        assert served.server is not None
        ros = session.open_ros()
        frame = bgr_frame(settings.video, log, settings.frame_size)
        report = _report_head(settings, served, frame)
        report['machine']['ros_domain_id'] = session.domain.domain_id
        bench = GlueBench(settings, served, ros, frame, session.scratch, log)
        for case in glue_cases(settings.camera_counts):
            if case.layout not in settings.layouts:
                continue
            report['cases'][case.name] = bench.run_case(case)
            report['targets'] = targets(report['cases'])
            report['machine']['load_average_end'] = load_averages()
            write_report(report, settings.json_path)
        return report


def _report_head(settings: GlueSettings, served: ServedTriton, frame: Image) -> GlueReport:
    """Return the report's head: the machine, the source, and the settings with their meaning."""
    assert served.server is not None
    return {
        'machine': machine_description(served.server.profile, served.version),
        'source': source_version(),
        'settings': {'camera_counts': list(settings.camera_counts),
                     'layouts': list(settings.layouts), 'window_s': settings.window_s,
                     'warmup_s': settings.warmup_s, 'rate_hz': RATE_HZ,
                     'frame': (frame.width, frame.height, frame.encoding),
                     'video': str(settings.video), 'graphs': 'constant (bench.constant_graphs)',
                     'floor': 'one floor_node process per camera',
                     'floor_serialized': 'the same, taking the Image serialized',
                     'groups_of_2': 'one perception_process per 2 cameras '
                                    '(cameras_per_process:=2)',
                     'per_camera': 'one perception_process per camera '
                                   '(cameras_per_process:=1)'},
        'cases': {},
    }
