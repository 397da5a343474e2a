"""
How right a replay was: its outputs bag scored against labels, and the pass/fail criteria.

The outputs of `bag evaluate` (detections with their track ids, lanes with their sides) are
read per input frame, keyed by the frame's header stamp, and scored with scoring/ against every
`--labels` file: COCO boxes, MOTChallenge tracks, CULane or TuSimple lanes. A labelled frame
without an output (dropped, failed) counts as all misses, and the figures say how many.
`--criteria` states floors on the figures and per-frame thresholds with a pass rate.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml

from triton_perception.evaluation.metrics import (AccuracySection, Criteria, CriteriaResult,
                                                  frame_figures, LANES_SCORED, registered,
                                                  ReplayedFrames, ReplayOutputs, ReplayToScore,
                                                  ScoringOptions)
from triton_perception.scoring import LabelError, Labels, read_label_sets, resolve_frames

WORST_FRAMES = 5


@dataclass(frozen=True)
class ScoredReplay:
    """A replay's accuracy sections, per-frame figures (name -> stamp -> value) and labels."""

    accuracy: dict[str, AccuracySection]
    per_frame: dict[str, dict[int, float]]
    labels: dict[str, Labels]  # by label set type: DetectionLabels, TrackLabels, LaneLabels


def score_replay(camera: ReplayedFrames, outputs: ReplayOutputs, label_paths: list[Path],
                 class_names: list[str],
                 options: ScoringOptions = ScoringOptions()) -> ScoredReplay:
    """
    Score `outputs` against each label file with every metric that scores its kind.

    `options` are the departures from the benchmarks' protocols a user chose (the result says
    which). Raises LabelError for a label file that is malformed, names a frame the bag lacks,
    no metric scores, or is a second file of one kind.
    """
    if options.lanes_scored not in LANES_SCORED:
        raise LabelError(f'lanes scored {options.lanes_scored!r}: expected one of '
                         f'{LANES_SCORED}')
    accuracy: dict[str, AccuracySection] = {}
    per_frame: dict[str, dict[int, float]] = {}
    read: dict[str, Labels] = {}
    replay = ReplayToScore(camera, outputs, class_names, options)
    for path in label_paths:
        for labels in read_label_sets(path, class_names):
            read[type(labels).__name__] = labels
            resolve_frames(labels, None, camera.frames)  # LabelError for a frame the bag lacks
            scored_by = [(metric, scored) for metric in registered()
                         if (scored := metric.score(labels, replay)) is not None]
            if not scored_by:
                raise LabelError(f'{path}: no metric scores {type(labels).__name__}')
            for metric, scored in scored_by:
                if metric.kind in accuracy:
                    raise LabelError(f'{path}: a second {metric.kind} label file; give one per '
                                     'kind')
                accuracy[metric.kind] = {**scored.section, 'labels': str(path)}
                if metric.frame_figure:
                    per_frame[metric.frame_figure] = dict(scored.per_frame)
    return ScoredReplay(accuracy, per_frame, read)


# --- criteria ---------------------------------------------------------------------------------

def read_criteria(path: Path) -> Criteria:
    """
    Read a criteria YAML file.

    `floors` maps the report's dotted names to minimums; `frames` holds per-frame thresholds
    (each metric's per-frame figure: lane_F1, detection_recall) and the pass_rate of frames
    that must reach them.

    Raises LabelError naming the file and the entry that is wrong.
    """
    try:
        document = yaml.safe_load(Path(path).read_text(encoding='utf-8')) or {}
    except (OSError, yaml.YAMLError) as error:
        raise LabelError(f'{path}: cannot read the criteria: {error}') from None
    if not isinstance(document, dict) or set(document) - {'floors', 'frames'}:
        raise LabelError(f"{path}: expected a mapping with 'floors' and/or 'frames'")
    floors = document.get('floors') or {}
    frames = document.get('frames') or {}
    for name, value in {**floors, **frames}.items():
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            raise LabelError(f'{path}: {name}: {value!r} is not a number')
    known = tuple(frame_figures())
    unknown = set(frames) - {*known, 'pass_rate'}
    if unknown:
        raise LabelError(f'{path}: frames: unknown {sorted(unknown)}; known: '
                         f"{', '.join(known)}, pass_rate")
    if frames and 'pass_rate' not in frames:
        raise LabelError(f'{path}: frames: pass_rate (the share of frames that must pass) is '
                         'missing')
    return {'floors': dict(floors), 'frames': dict(frames)}


def check_criteria(accuracy: dict[str, AccuracySection], per_frame: dict[str, dict[int, float]],
                   criteria: Criteria) -> CriteriaResult:
    """Return `passed`, the failing floors and the failing frames (stamps) of a scored replay."""
    failing = []
    for name, floor in criteria['floors'].items():
        value = _dotted(accuracy, name)
        if value is None:
            failing.append(f'{name}: not in the report (no labels of that kind?)')
        elif value < floor:
            failing.append(f'{name} = {value:.4g} < {floor:g}')
    frames = criteria['frames']
    failing_frames: list[int] = []
    if frames:
        thresholds = {name: frames[name] for name in frame_figures() if name in frames}
        stamps = sorted(set().union(*(per_frame.get(name, {}) for name in thresholds)))
        for stamp in stamps:
            if any(per_frame.get(name, {}).get(stamp, 1.0) < threshold
                   for name, threshold in thresholds.items()):
                failing_frames.append(stamp)
        rate = 1 - len(failing_frames) / len(stamps) if stamps else 0.0
        if rate < frames['pass_rate']:
            failing.append(f'frames passing: {rate:.1%} < {frames["pass_rate"]:.1%} '
                           f'({len(failing_frames)} of {len(stamps)} frames fail)')
    return {'passed': not failing, 'failing': failing, 'failing_frames': failing_frames}


def _dotted(accuracy: dict[str, AccuracySection], name: str) -> float | None:
    value: object = accuracy
    for part in name.split('.'):
        if not isinstance(value, dict) or part not in value:
            return None
        value = value[part]
    return float(value) if isinstance(value, (int, float)) else None


def worst_frames(per_frame: dict[str, dict[int, float]]) -> dict[str, list[tuple[int, float]]]:
    """Return the frames (stamp, figure) with the lowest value of each per-frame figure."""
    return {name: sorted(values.items(), key=lambda item: (item[1], item[0]))[:WORST_FRAMES]
            for name, values in per_frame.items()}
