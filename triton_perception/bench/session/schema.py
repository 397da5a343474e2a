"""
The shapes every bench's JSON shares: the machine, a summary, percentiles, Triton's timers.

TypedDicts and aliases for mypy; each bench's own shapes live in its room.
"""
from __future__ import annotations

from typing import TypedDict

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
