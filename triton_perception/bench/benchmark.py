"""
One case of `bench`: its nodes started, the latency phase, the throughput phase, its figures.

run.py sets up what every case shares (the server, the clip, the ROS side) and hands it to
Benchmark, which measures one case at a time: each frame through the in-process reference,
Triton and ROS in turn, then the clip at camera rate, then CPU and memory per result.
"""
from __future__ import annotations

from collections import defaultdict
import os
from pathlib import Path
import time
from typing import Callable, Sequence

import numpy as np
from numpy.typing import NDArray
from sensor_msgs.msg import Image

from triton_perception.bench.bench_schema import (CaseFigures, CpuOutsideGraph, LatencyFigures,
                                                  NodeThroughput, PhaseFigures, StepTimers,
                                                  ThroughputFigures, ThroughputPhase)
from triton_perception.bench.budget import cpu_outside_graph, CpuSplit, stage_means
from triton_perception.bench.frame_budgets import FrameBudgets
from triton_perception.bench.references import REFERENCES
from triton_perception.bench.session import (BenchError, BenchSettings, CASES, CaseWiring,
                                             check_alive, DIAGNOSTICS_PERIOD_S, DRAIN_TIMEOUT_S,
                                             ensemble_steps, EnsembleRequests, FRAME_TIMEOUT_S,
                                             inference_statistics, NodeKind, NODES, p95,
                                             PROGRESS_PERIOD_S, RATE_HZ, ratio, READY_TIMEOUT_S,
                                             ResultTracker, rgb_view, RosSide,
                                             server_cpu_by_process, Stamp, step_breakdown, summary,
                                             transfer_bytes, TreeRssPeak, WARMUP_FRAMES, WINDOW_S)
from triton_perception.frames import NodeStatus
from triton_perception.system import NodeProcess, ros_arguments, status_kib, tree_cpu_s


class Benchmark:
    """One run: the server (started or found), the clip, the ROS side and the cases."""

    def __init__(self, settings: BenchSettings, repository: Path, triton_url: str,
                 server_pid: int | None, ros: RosSide, messages: list[Image], log_directory: Path,
                 log: Callable[[str], None]) -> None:
        """Keep what every case uses; the clip is looped to warm-up frames + `frames`."""
        self.settings = settings
        self.repository = repository
        self.triton_url = triton_url
        self.server_pid = server_pid
        self.ros = ros
        self.messages = messages
        self.log_directory = log_directory
        self.log = log
        count = WARMUP_FRAMES + settings.frames
        self.measured = [messages[index % len(messages)] for index in range(count)]

    def run_case(self, case: str) -> CaseFigures:
        """
        Run one case (its nodes started for it) and return its figures.

        Latency is measured one frame at a time, then throughput at camera rate; the peak RSS of
        the server is sampled throughout. Ratios compare the ROS path with the in-process reference.
        """
        kinds = [NODES[name] for name in CASES[case]]
        load_before = os.getloadavg()[0]
        with TreeRssPeak(self.server_pid) as server_rss:
            figures = self.ros_phases(case, kinds)
        reference = figures['reference_ms']
        capacity = 1000.0 / reference['median'] if reference['median'] else None
        return {
            'nodes_run': [kind.executable for kind in kinds],
            'reference_ms': reference,
            'reference_cpu_ms_per_frame': figures['reference_cpu_ms_per_frame'],
            'triton_ms': figures['triton_ms'],
            'ros_e2e_ms': figures['ros_e2e_ms'],
            'triton_steps_ms': figures['triton_steps_ms'],
            'bytes_per_frame': {kind.model: transfer_bytes(
                self.repository, kind.model, rgb_view(self.measured[0]),
                sum(tensor.nbytes for tensor in kind.request_inputs().values()))
                for kind in kinds},
            'ratio': ratio(figures['ros_e2e_ms']['median'], reference['median']),
            'capacity_fps': round(capacity, 2) if capacity else None,
            'throughput_fps': figures['throughput_fps'],
            'throughput_ratio': ratio(figures['throughput_fps'], capacity),
            'p95_first_10s_ms': figures['p95_first_10s_ms'],
            'p95_last_10s_ms': figures['p95_last_10s_ms'],
            'node_cpu_ms_per_frame': figures['node_cpu_ms_per_frame'],
            'server_cpu_ms_per_frame': figures['server_cpu_ms_per_frame'],
            'node_peak_rss_mb': figures['node_peak_rss_mb'],
            'server_peak_rss_mb': server_rss.peak_mb,
            'cpu_outside_graph_ms_per_frame': figures['cpu_outside_graph_ms_per_frame'],
            'budget': figures['budget'],
            'throughput': figures['throughput'],
            'per_node': figures['per_node'],
            'load_average_1min': [round(load_before, 2), round(os.getloadavg()[0], 2)],
        }

    def ros_phases(self, case: str, kinds: Sequence[NodeKind]) -> PhaseFigures:
        """
        Start the case's nodes in a namespace of their own, measure them, and stop them.

        Raises BenchError if a node exits or the nodes are not ready in time.
        """
        namespace = f'/triton_perception_bench_{os.getpid()}/{case}'
        nodes: list[NodeProcess] = []
        wiring = CaseWiring(self.ros, namespace, kinds)
        try:
            for kind in kinds:
                nodes.append(NodeProcess(
                    kind.executable, ros_arguments(
                        {'triton_url': self.triton_url, **self.settings.node_parameters()},
                        namespace=namespace), self.log_directory))
            self.log(f'{case}: started {", ".join(node.name for node in nodes)} in {namespace}; '
                     'waiting for discovery and Triton readiness')
            self.wait_until_ready(wiring, nodes)
            latencies = self.latencies(case, kinds, wiring, nodes)
            throughput = self.throughput(case, kinds, wiring, nodes)
            return {**latencies, **throughput, 'node_peak_rss_mb': round(sum(
                throughput['per_node'][node.name]['peak_rss_mb'] for node in nodes), 1)}
        finally:
            for node in nodes:
                code = node.stop()
                if code not in (0, None):
                    self.log(f'{node.name} exited with code {code}:\n{node.output_tail()}')
            wiring.close()

    def latencies(self, case: str, kinds: Sequence[NodeKind], wiring: CaseWiring,
                  nodes: Sequence[NodeProcess]) -> LatencyFigures:
        """
        Each frame through the reference, Triton and ROS in turn, one at a time.

        On a shared machine, load that comes and goes then weighs on all three alike.
        """
        self.log(f'{case}: latency, {self.settings.frames} frames (after {WARMUP_FRAMES} '
                 'warm-up), each through the reference (in-process, no ROS, no Triton), '
                 'Triton gRPC and ROS in turn')
        pipelines = [REFERENCES[kind.executable](
            self.repository, self.settings.precision) for kind in kinds]

        def reference(rgb: NDArray[np.uint8]) -> None:
            """For `both`, both sessions live at once, as in the server, and run in turn."""
            for pipeline in pipelines:
                pipeline(rgb)
        requests = EnsembleRequests(self.triton_url, kinds)
        statistics_before = inference_statistics(self.triton_url)
        budget = FrameBudgets(self.triton_url, wiring, self.repository, kinds)
        try:
            times, cpu_ms, lost = self.time_frames(reference, requests, budget, wiring, nodes)
        finally:
            requests.close()
            budget.close()
        frames = self.settings.frames
        figures: LatencyFigures = {
            'reference_ms': summary(times['reference']),
            'reference_cpu_ms_per_frame': round(cpu_ms['reference'] / frames, 2),
            'triton_ms': {**summary(times['triton']),
                          'client_cpu_ms_per_frame': round(cpu_ms['triton'] / frames, 2)},
            'ros_e2e_ms': {**summary(times['ros']), 'lost': lost},
            'triton_steps_ms': step_breakdown(statistics_before,
                                              inference_statistics(self.triton_url)),
            'budget': budget.summary(summary(times['reference'])['median']),
        }
        self.log(f'{case}: median (p95) reference {figures["reference_ms"]["median"]} '
                 f'({figures["reference_ms"]["p95"]}) ms, Triton {figures["triton_ms"]["median"]} '
                 f'({figures["triton_ms"]["p95"]}) ms, ROS {figures["ros_e2e_ms"]["median"]} '
                 f'({figures["ros_e2e_ms"]["p95"]}) ms'
                 + (f', {lost} frame(s) without a result' if lost else ''))
        return figures

    def time_frames(self, reference: Callable[[NDArray[np.uint8]], None],
                    requests: EnsembleRequests, budget: FrameBudgets, wiring: CaseWiring,
                    nodes: Sequence[NodeProcess]
                    ) -> tuple[dict[str, list[float]], dict[str, float], int]:
        """
        Time each measured frame through the reference, Triton and ROS, one after the other.

        Returns the times (ms) and the CPU (ms in all) of each path, and the frames ROS gave no
        result for; warm-up frames run the same way but are not counted.
        """
        times: dict[str, list[float]] = defaultdict(list)
        cpu_ms: dict[str, float] = defaultdict(float)
        lost = 0
        for index, message in enumerate(self.measured):
            rgb = rgb_view(message)
            # The reference runs once untimed first: the ROS path's model step runs right
            # after the bench's own request to the same step, warm, so the reference is
            # timed warm too (cold, after the other processes ran, it measured 4-11 ms
            # slower than the same graph inside Triton).
            reference(rgb)
            for name, process in (('reference', reference), ('triton', requests)):
                cpu_start, start = time.process_time(), time.perf_counter()
                process(rgb)
                if index >= WARMUP_FRAMES:
                    times[name].append((time.perf_counter() - start) * 1e3)
                    cpu_ms[name] += (time.process_time() - cpu_start) * 1e3
            budget.before_frame()
            stamp = wiring.publish(message)
            latency = wiring.tracker.wait(stamp, FRAME_TIMEOUT_S)
            if latency is None:
                for node in nodes:
                    check_alive(node)
                lost += index >= WARMUP_FRAMES
            elif index >= WARMUP_FRAMES:
                times['ros'].append(latency)
            budget.after_frame(stamp, latency, index >= WARMUP_FRAMES)
        return times, cpu_ms, lost

    def wait_until_ready(self, wiring: CaseWiring, nodes: Sequence[NodeProcess]) -> None:
        """Poll matching and /diagnostics (never a fixed sleep); fail early if a node died."""
        deadline = time.monotonic() + READY_TIMEOUT_S
        while not wiring.ready():
            for node in nodes:
                check_alive(node)
            if time.monotonic() > deadline:
                raise BenchError(f'nodes not ready within {READY_TIMEOUT_S:g} s (discovery or '
                                 'Triton):\n' + '\n'.join(node.output_tail() for node in nodes))
            time.sleep(0.02)

    def throughput(self, case: str, kinds: Sequence[NodeKind], wiring: CaseWiring,
                   nodes: Sequence[NodeProcess]) -> ThroughputFigures:
        """
        Publish the clip at RATE_HZ for `duration_s` s and measure results, CPU and memory.

        Throughput counts each node's results separately (each drops frames on its own); CPU is
        given per result, in ms, for the nodes and the server.
        """
        duration_s = self.settings.duration_s
        self.log(f'{case}: throughput, clip looped at {RATE_HZ:g} Hz for {duration_s:g} s')
        node_cpu_before = {node.name: tree_cpu_s(node.pid) for node in nodes}
        server_cpu_before = tree_cpu_s(self.server_pid) if self.server_pid else None
        split_before = server_cpu_by_process(self.server_pid) if self.server_pid else None
        statistics_before = inference_statistics(self.triton_url)
        statuses_before = {node.name: wiring.statuses.get(node.name) for node in nodes}
        bench_cpu_before = time.process_time()
        stamps, start = self.publish_clip(case, wiring, nodes)
        node_cpu = {node.name: tree_cpu_s(node.pid) - node_cpu_before[node.name]
                    for node in nodes}
        server_cpu = (tree_cpu_s(self.server_pid) - server_cpu_before
                      if self.server_pid and server_cpu_before is not None else None)
        bench_cpu = time.process_time() - bench_cpu_before
        split_after = server_cpu_by_process(self.server_pid) if self.server_pid else None
        statistics_after = inference_statistics(self.triton_url)
        time.sleep(2 * DIAGNOSTICS_PERIOD_S)  # a status that counts the last results
        node_stages_ms = {node.name: stage_means(statuses_before[node.name],
                                                 wiring.statuses.get(node.name))
                          for node in nodes}

        tracker = wiring.tracker
        latencies = _node_latencies(tracker, stamps, start, nodes)
        counts = {name: len(pairs) for name, pairs in latencies.items()}
        pooled = [pair for pairs in latencies.values() for pair in pairs]
        frame_equivalents = sum(counts.values()) / len(nodes)
        per_node = _per_node(wiring, nodes, counts, node_cpu, duration_s)
        figures: ThroughputFigures = {
            'throughput_fps': round(min(counts.values()) / duration_s, 2),
            'p95_first_10s_ms': p95([latency for offset, latency in pooled if offset < WINDOW_S]),
            'p95_last_10s_ms': p95([latency for offset, latency in pooled
                                    if offset >= duration_s - WINDOW_S]),
            'node_cpu_ms_per_frame': (round(sum(node['cpu_ms_per_frame'] or 0.0
                                                for node in per_node.values()), 2)
                                      if all(counts.values()) else None),
            'server_cpu_ms_per_frame': (round(server_cpu * 1e3 / frame_equivalents, 2)
                                        if frame_equivalents and server_cpu is not None
                                        else None),
            'cpu_outside_graph_ms_per_frame': self.cpu_outside_graph(
                kinds, sum(node_cpu.values()), split_before, split_after, frame_equivalents),
            'throughput': _phase(tracker, stamps, counts, pooled, duration_s, bench_cpu,
                                 node_stages_ms,
                                 step_breakdown(statistics_before, statistics_after)),
            'per_node': per_node,
        }
        self.log(f'{case}: results {counts} of {len(stamps)} frames '
                 f'({figures["throughput_fps"]} fps), p95 first/last {WINDOW_S:g} s '
                 f'{figures["p95_first_10s_ms"]}/{figures["p95_last_10s_ms"]} ms')
        return figures

    def publish_clip(self, case: str, wiring: CaseWiring,
                     nodes: Sequence[NodeProcess]) -> tuple[list[Stamp], float]:
        """
        Publish the clip, looped, at RATE_HZ for `duration_s` s, then wait for the last results.

        Returns the stamps published and when publishing began (time.monotonic()).
        """
        duration_s = self.settings.duration_s
        stamps: list[Stamp] = []
        start = time.monotonic()
        next_progress = start + PROGRESS_PERIOD_S
        while (target := start + len(stamps) / RATE_HZ) < start + duration_s:
            if (delay := target - time.monotonic()) > 0:
                time.sleep(delay)  # pacing at camera rate
            stamps.append(wiring.publish(self.messages[len(stamps) % len(self.messages)]))
            if time.monotonic() >= next_progress:
                done = sum(wiring.tracker.latency_ms(stamp) is not None for stamp in stamps)
                self.log(f'{case}: {time.monotonic() - start:.0f}/{duration_s:g} s, '
                         f'{len(stamps)} published, {done} with every result')
                next_progress += PROGRESS_PERIOD_S
            for node in nodes:
                check_alive(node)
        wiring.tracker.wait(stamps[-1], DRAIN_TIMEOUT_S)
        return stamps, start

    def cpu_outside_graph(self, kinds: Sequence[NodeKind], node_cpu_s: float,
                          before: tuple[float, dict[str, float]] | None,
                          after: tuple[float, dict[str, float]] | None,
                          frames: float) -> CpuOutsideGraph | None:
        """CPU ms per result outside the model graph (one node only: its graph is one step)."""
        if before is None or after is None or len(kinds) != 1:
            return None
        steps = ensemble_steps(self.repository, kinds[0].model)
        split = CpuSplit(node_cpu_s, after[0] - before[0], {
            model: seconds - before[1].get(model, 0.0) for model, seconds in after[1].items()})
        return cpu_outside_graph(split, steps, steps[-1], frames)


def _node_latencies(tracker: ResultTracker, stamps: Sequence[Stamp], start: float,
                    nodes: Sequence[NodeProcess]) -> dict[str, list[tuple[float, float]]]:
    """
    Return each node's results as (seconds after `start` sent, latency in ms).

    The nodes drop frames independently (latest-frame slots), so with both nodes few frames get
    both results even when both keep up: each node's results are counted and timed on their own.
    """
    return {node.name: [(tracker.sent[stamp] - start, latency) for stamp in stamps
                        if (latency := tracker.latency_ms(stamp, (node.name,))) is not None]
            for node in nodes}


def _per_node(wiring: CaseWiring, nodes: Sequence[NodeProcess], counts: dict[str, int],
              node_cpu: dict[str, float], duration_s: float) -> dict[str, NodeThroughput]:
    """Each node's results, rate, CPU per result and peak memory over the throughput phase."""
    return {node.name: {
        'results': counts[node.name],
        'throughput_fps': round(counts[node.name] / duration_s, 2),
        'cpu_ms_per_frame': (round(node_cpu[node.name] * 1e3 / counts[node.name], 2)
                             if counts[node.name] else None),
        'peak_rss_mb': round(status_kib(node.pid, 'VmHWM') / 1024, 1),
        # From the node's own /diagnostics (cumulative over the case's phases).
        'lost_before_node': wiring.statuses.get(node.name, NodeStatus({})).count(
            'lost_before_node'),
    } for node in nodes}


def _phase(tracker: ResultTracker, stamps: Sequence[Stamp], counts: dict[str, int],
           pooled: Sequence[tuple[float, float]], duration_s: float, bench_cpu_s: float,
           node_stages_ms: dict[str, dict[str, float] | None],
           triton_steps_ms: StepTimers) -> ThroughputPhase:
    """Return the throughput phase: what was published and answered, where the time went."""
    return {
        'duration_s': duration_s, 'rate_hz': RATE_HZ, 'published': len(stamps),
        'results_per_node': counts,
        'frames_with_every_result': sum(tracker.latency_ms(stamp) is not None
                                        for stamp in stamps),
        'latency_ms': summary([latency for _, latency in pooled]),
        'bench_process_cpu_ms_per_frame': round(bench_cpu_s * 1e3 / len(stamps), 2),
        # Under load: where the node's time and Triton's go, means per request.
        'node_stages_ms': node_stages_ms,
        'triton_steps_ms': triton_steps_ms,
    }
