"""
The pipeline under a rate search: its processes started, fed at a rate, and each run's figures.

The pipeline as launched (the plan's processes) or stand-in nodes of known capacity are fed
the frames held in memory at a publisher rate, every camera at that rate; a frame is delivered
when every output of it reached the bench. A run's figures take ros2_benchmark's names where
they mean the same (rate_search_schema).
"""
from __future__ import annotations

import os
from pathlib import Path
import time
from typing import Callable, Sequence

import numpy as np
from sensor_msgs.msg import Image

from triton_perception.bench.rate_search.rate_search_schema import (CpuFigures, LatencySplit,
                                                                    RateFigures, RunMemory)
from triton_perception.bench.rate_search.rate_settings import (MODELS, RateSearchSettings,
                                                               STAND_IN_KIND, sustained)
from triton_perception.bench.rate_search.stand_in_node import MODULE as STAND_IN_MODULE
from triton_perception.bench.rate_search.stand_in_node import NODE_NAME as STAND_IN_NODE
from triton_perception.bench.session import (BenchError, camera_namespaces, CaseWiring,
                                             check_alive, DETECTIONS, DRAIN_TIMEOUT_S, GlueCase,
                                             inference_statistics, Percentiles, publish_paced,
                                             RosSide, Stamp, start_processes, step_breakdown,
                                             wait_ready)
from triton_perception.frames import NodeStatus
from triton_perception.system import NodeProcess, ros_arguments, tree_cpu_s, tree_rss_mb


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


def cpu_figures(cpu_s: float, server_s: float | None, span_s: float, frames: int) -> CpuFigures:
    """Return the nodes' and the server's CPU over a run: share of a core and ms per frame."""
    return {'nodes_percent_of_core': round(cpu_s / span_s * 100, 1),
            'server_percent_of_core': (round(server_s / span_s * 100, 1)
                                       if server_s is not None else None),
            'nodes_ms_per_frame': round(cpu_s * 1e3 / frames, 2),
            'server_ms_per_frame': (round(server_s * 1e3 / frames, 2)
                                    if server_s is not None else None)}


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
        """Return one run's figures from the stamps sent and the readings before and after."""
        sent = sum(len(camera) for camera in stamps)
        latencies, jitters, ends = self._arrivals(stamps)
        delivered = len(latencies)
        if delivered == 0:
            raise BenchError(
                f'the pipeline answered none of the {sent} frames sent at {rate_hz:g} Hz '
                f'({", ".join(self.outputs())} on {", ".join(self.cameras)}) within the run and '
                f'{DRAIN_TIMEOUT_S:g} s after it')
        missed = sent - delivered
        first_sent, last_sent = self._sent_span(stamps)
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
            'results_per_output': self._results_per_output(stamps),
            'cpu': cpu_figures(cpu_s, server_s, span_s, frames),
            'memory_mib': self._memory(),
            'latency_split_ms': self._split(stamps, statistics, statuses),
            'triton_steps_ms': step_breakdown(*statistics),
        }
        self.log(f'{phase} {rate_hz:g} Hz: {sent} sent, {missed} missed '
                 f'({missed / frames:.1%}), output '
                 f"{figures['BasicPerformanceMetrics.MEAN_FRAME_RATE']} Hz, latency p50/p99 "
                 f"{figures['latency_ms']['p50']}/{figures['latency_ms']['p99']} ms: "
                 + ('sustained' if figures['sustained'] else 'NOT sustained'))
        return figures

    def _arrivals(self, stamps: list[list[Stamp]]
                  ) -> tuple[list[float], list[float], list[float]]:
        """Return the latencies (ms), the jitters (ms) and the arrival times of every result."""
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
        return latencies, jitters, ends

    def _sent_span(self, stamps: list[list[Stamp]]) -> tuple[float, float]:
        """Return when the run's first and last frames were sent, over every camera."""
        return (min(wiring.tracker.sent[camera[0]] for wiring, camera in
                    zip(self.wirings, stamps)),
                max(wiring.tracker.sent[camera[-1]] for wiring, camera in
                    zip(self.wirings, stamps)))

    def _results_per_output(self, stamps: list[list[Stamp]]) -> dict[str, int]:
        """Return how many of the frames sent brought each output's result."""
        return {kind.executable: sum(wiring.tracker.latency_ms(stamp, (kind.executable,))
                                     is not None for wiring, camera in zip(self.wirings, stamps)
                                     for stamp in camera) for kind in self.kinds}

    def _memory(self) -> RunMemory:
        """Return the node processes' and the server's summed RSS now, MiB."""
        return {'nodes': round(sum(tree_rss_mb(process.pid) for process in self.processes), 1),
                'server': (round(tree_rss_mb(self.server_pid), 1)
                           if self.server_pid else None)}

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
