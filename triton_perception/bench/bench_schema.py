"""
The shape of the bench's JSON reports (`bench --json`, `bench --glue --json`), as TypedDicts.

They are the JSON shape itself, so that what each phase measures is checked by mypy where it
is built and read. report.write_report is their one writer and puts `schema_version` first.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, TypedDict

from triton_perception.frames import NodeCounts
from triton_perception.tracking import TrackingTiming

# measures.summary: median and p95 (ms) and the frames timed, None without frames; some phases
# add a count of their own (lost, client CPU ms per frame).
Summary = dict[str, float | int | None]
# budget.percentiles: median and p90 (ms), None without frames.
Percentiles = dict[str, float | None]
# triton_side.step_breakdown: per model, its requests and the mean ms of each Triton timer.
StepTimers = dict[str, dict[str, float | int]]


class Machine(TypedDict, total=False):
    """What the figures were measured on; load_average_end is added after each case."""

    cpu_model: str
    architecture: str
    cores: int | None
    usable_cores: int
    memory_gb: float
    kernel: str
    python: str
    onnxruntime: str
    triton: str
    profile: str
    load_average_start: list[float]
    load_average_end: list[float]
    ros_domain_id: int  # the bench's own (system.private_domain): it hears no other publisher


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


class NodeAccounting(NodeCounts, total=False):
    """
    One node's frame accounting in `bench --glue`, from its last status, against the frames sent.

    Without a status: sent, status (None), lost and without_result (None) and balanced.
    """

    sent: int
    status: None
    unseen: int
    stage_ms_mean: dict[str, float]
    lost: int | None
    without_result: int | None
    balanced: bool


class GlueWindow(TypedDict):
    """A glue case's measured window: CPU, memory, Triton's time, latency, the share served."""

    frames_published: int
    publish_span_s: float
    health_check_cpu_ms_per_frame: float | None
    health_check_cpu_share: float | None
    input_hz_per_camera: float
    served_share: float
    cpu_ms_per_frame: float
    cpu_ms_per_frame_by_executable: dict[str, float]
    server_cpu_ms_per_frame: float
    bench_cpu_ms_per_frame: float
    rss_mib: float
    rss_per_camera_mib: float
    triton_request_ms: dict[str, float]
    e2e_latency_ms: Percentiles
    added_latency_ms: Percentiles
    results_timed: int
    triton_steps_ms: StepTimers


class GlueAccounting(TypedDict):
    """Every node's accounting by camera (None for the floor), and the frames lost or unserved."""

    accounting: dict[str, dict[str, NodeAccounting]] | None
    frames_lost: int | None
    frames_without_result: int | None
    accounted: bool | None
    results_missing_at_bench: int


class GlueCaseFigures(GlueWindow, GlueAccounting):
    """One glue case: its window and accounting, and what ran (layout, models, cameras, frame)."""

    frames_sent: int
    layout: str
    models: str
    cameras: int
    frame: str
    processes: int
    load_average_1min: list[float]


class CpuTarget(TypedDict):
    """Both models on one camera: CPU per frame against both floors, and the limit."""

    frame: str
    ratio_to_floor: float | None
    ratio_to_floor_serialized: float | None
    limit: float  # against the serialized floor
    goal: float
    met: bool


class RssTarget(TypedDict):
    """The single process's RSS with four cameras against its limit."""

    rss_mb: float
    limit_mb: float
    met: bool


class ServedTarget(TypedDict):
    """Four cameras in one layout: the share served, frames lost, accounting and RSS."""

    frame: str
    served: float
    limit: float
    lost: int | None
    accounted: bool | None
    rss_mb: float
    limit_mb: float
    met: bool


class GlueSettingsRecord(TypedDict):
    """What `bench --glue` ran: camera counts, layouts, window, frame, and the layouts' meaning."""

    camera_counts: list[int]
    layouts: list[str]
    window_s: float
    warmup_s: float
    rate_hz: float
    frame: tuple[int, int, str]
    video: str
    graphs: str
    floor: str
    floor_serialized: str
    groups_of_2: str
    per_camera: str


class GlueReport(TypedDict, total=False):
    """bench-glue.json: the machine, the source, the settings, each case and the targets."""

    schema_version: int
    machine: Machine
    source: str | None
    settings: GlueSettingsRecord
    cases: dict[str, GlueCaseFigures]
    targets: dict[str, CpuTarget | RssTarget | ServedTarget]
