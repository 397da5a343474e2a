"""
The shape of `bench --glue --json` (bench-glue.json), as TypedDicts.

They are the JSON shape itself, so that what each case measures is checked by mypy where it is
built and read; session.run_record.write_report writes it.
"""
from __future__ import annotations

from typing import TypedDict

from triton_perception.bench.session import Machine, Percentiles, StepTimers
from triton_perception.frames import NodeCounts


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
