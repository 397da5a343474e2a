"""
A replay metric: the one definition a new accuracy figure needs (docs/architecture.md).

A metric scores the label files of its kind against a replay's outputs and returns its section
of report.json's `accuracy`. It names the figures report.md shows (`headlines`) and the few the
several-drive summary shows (`summary`), and says how the sections of several drives add up to
one over all their frames (`combine`). A metric with a per-frame figure (`frame_figure`) is
also held to `--criteria` `frames:` thresholds and compared frame by frame by `--expected`.
Every place that reads metrics reads metric_registry.py, so a metric is one module and one
line there.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Mapping

from triton_perception.evaluation.metrics.replay_outputs import ReplayedFrames, ReplayOutputs

# One accuracy section of report.json, as it reads back from JSON: figure name -> value.
AccuracySection = Mapping[str, object]


@dataclass(frozen=True)
class ScoringOptions:
    """
    Departures from a benchmark's protocol that a user chose; the report says which.

    `lanes_scored` 'ego' scores only the ego lane's two lines; `lane_rows_from_labels` crops
    each lane to the rows its frame's labels span; `sparse_tracks` scores tracks only on the
    frames the MOTChallenge file has rows for.
    """

    lanes_scored: str = 'all'
    lane_rows_from_labels: bool = False
    sparse_tracks: bool = False


@dataclass(frozen=True)
class ReplayToScore:
    """A replay's outputs, the replayed camera's frames, the class names and the options."""

    camera: ReplayedFrames
    outputs: ReplayOutputs
    class_names: list[str]
    options: ScoringOptions = ScoringOptions()


@dataclass(frozen=True)
class MetricScore:
    """A metric's section of `accuracy` and its per-frame figure (header stamp -> value)."""

    section: AccuracySection
    per_frame: dict[int, float] = field(default_factory=dict)


@dataclass(frozen=True)
class ScoredDrive:
    """One drive's section of this metric, where its outputs are, and the class names."""

    section: AccuracySection
    outputs_bag: Path
    class_names: list[str]


@dataclass(frozen=True)
class Metric:
    """
    One accuracy figure family of a replay (see the module docstring).

    `score` returns None for label files that are not of its kind, so each label file is
    scored by the one metric that knows it.
    """

    kind: str  # the section of report.json's `accuracy`: 'detection', 'tracking', 'lanes'
    score: Callable[[object, ReplayToScore], MetricScore | None]
    combine: Callable[[list[ScoredDrive]], AccuracySection]
    headlines: tuple[str, ...]
    summary: tuple[str, ...]
    frame_figure: str = ''  # its per-frame figure's name, '' without one
    counts: tuple[str, ...] = ()  # headlines that count events (no accuracy tolerance applies)


def figure(section: AccuracySection, name: str) -> float:
    """Return a number of an accuracy section as float (0.0 when it is missing or not a number)."""
    return number(section.get(name, 0.0))


def number(value: object) -> float:
    """Return a figure read back from a report as float, 0.0 when it is not a number."""
    return float(value) if isinstance(value, (int, float)) else 0.0
