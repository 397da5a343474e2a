"""
The shape of `bench --json` (bench.json) and of `bench --memory`'s figures, as TypedDicts.

They are the JSON shape itself, so that what each phase measures is checked by mypy where it
is built and read; session.run_record.write_report is their one writer.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, TypedDict

from triton_perception.bench.session import Machine, Percentiles, StepTimers, Summary
from triton_perception.tracking import TrackingTiming


class BudgetSummary(TypedDict):
    """Per stage of a frame's way the median and p90 over frames, and the end-to-end time's."""

    frames: int
    stages_ms: dict[str, Percentiles]
    e2e_ms: Percentiles
    reference_ms: float | None
    beyond_reference_ms: float | None
    beyond_triton_compute_ms: float | None


class FrameBudgetSummary(BudgetSummary):
    """The budget, the frames it skipped and why, and the ensemble and steps it split."""

    skipped_frames: int
    skipped_why: dict[str, int]
    ensemble: str
    steps: list[str]


class CpuOutsideGraph(TypedDict, total=False):
    """CPU ms per frame of the node, tritonserver and each step's stub, and outside the graph."""

    node_ms: float
    server_main_ms: float
    server_steps_ms: dict[str, float]
    server_other_models_ms: float
    graph_step: str
    graph_ms: float | None
    outside_graph_ms: float | None


class NodeThroughput(TypedDict):
    """One node's results, rate, CPU and memory over the throughput phase."""

    results: int
    throughput_fps: float
    cpu_ms_per_frame: float | None
    peak_rss_mb: float
    lost_before_node: int


class ThroughputPhase(TypedDict):
    """The throughput phase: what was published and answered, and where the time went."""

    duration_s: float
    rate_hz: float
    published: int
    results_per_node: dict[str, int]
    frames_with_every_result: int
    latency_ms: Summary
    bench_process_cpu_ms_per_frame: float
    node_stages_ms: dict[str, dict[str, float] | None]
    triton_steps_ms: StepTimers


class LatencyFigures(TypedDict):
    """The latency phase: frames one at a time through the reference, Triton and ROS."""

    reference_ms: Summary
    reference_cpu_ms_per_frame: float
    triton_ms: Summary
    ros_e2e_ms: Summary
    triton_steps_ms: StepTimers
    budget: FrameBudgetSummary | None


class ThroughputFigures(TypedDict):
    """The throughput phase's headline figures, the phase itself and each node's share."""

    throughput_fps: float
    p95_first_10s_ms: float | None
    p95_last_10s_ms: float | None
    node_cpu_ms_per_frame: float | None
    server_cpu_ms_per_frame: float | None
    cpu_outside_graph_ms_per_frame: CpuOutsideGraph | None
    throughput: ThroughputPhase
    per_node: dict[str, NodeThroughput]


class PhaseFigures(LatencyFigures, ThroughputFigures):
    """Both phases of a case, and the nodes' summed peak RSS."""

    node_peak_rss_mb: float


class CaseFigures(TypedDict):
    """One case of `bench` (detection, lanes or both): every figure report.METHOD explains."""

    nodes_run: list[str]
    reference_ms: Summary
    reference_cpu_ms_per_frame: float
    triton_ms: Summary
    ros_e2e_ms: Summary
    triton_steps_ms: StepTimers
    bytes_per_frame: dict[str, dict[str, int]]
    ratio: float | None
    capacity_fps: float | None
    throughput_fps: float
    throughput_ratio: float | None
    p95_first_10s_ms: float | None
    p95_last_10s_ms: float | None
    node_cpu_ms_per_frame: float | None
    server_cpu_ms_per_frame: float | None
    node_peak_rss_mb: float
    server_peak_rss_mb: float | None
    cpu_outside_graph_ms_per_frame: CpuOutsideGraph | None
    budget: FrameBudgetSummary | None
    throughput: ThroughputPhase
    per_node: dict[str, NodeThroughput]
    load_average_1min: list[float]


class BenchReport(TypedDict, total=False):
    """
    bench.json's head: the machine, the source and settings, the method, the tracking timing.

    Each case's CaseFigures follow under the case's name (detection, lanes, both).
    """

    schema_version: int
    machine: Machine
    source: str | None
    settings: Mapping[str, object]
    method: dict[str, str]
    tracking: TrackingTiming


@dataclass(frozen=True)
class BenchRun:
    """A `bench` run: the report's head and each case's figures, in the order they ran."""

    head: BenchReport
    cases: dict[str, CaseFigures]

    def report(self) -> dict[str, object]:
        """Return bench.json's content: the head, then each case under its name."""
        return {**self.head, **self.cases}


class MemoryFigures(TypedDict):
    """`bench --memory`: one layout's node processes for some cameras and their settled RSS."""

    cameras: int
    layout: str
    processes: int
    rss_mib: float
    rss_per_camera_mib: float
