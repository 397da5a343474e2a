"""
Lane accuracy of a replay: CULane's F1 against CULane or TuSimple labels, and TuSimple's own.

Its per-frame figure is each labelled frame's F1. Over several drives the true and false
positives and false negatives are summed and F1, precision and recall computed from them.
"""
from __future__ import annotations

from typing import cast

import numpy as np
from numpy.typing import NDArray

from triton_perception.evaluation.metrics.metric import AccuracySection, figure, Metric, MetricScore
from triton_perception.evaluation.metrics.metric import ReplayToScore, ScoredDrive
from triton_perception.evaluation.metrics.replay_outputs import ReplayOutputs
from triton_perception.scoring import CulaneFigures, fraction, LabelError, LaneLabels
from triton_perception.scoring import score_culane, score_tusimple, TusimpleFigures

LANES_SCORED = ('all', 'ego')  # every published lane, or the ego lane's two lines
EGO_SIDES = (-1, 1)


class LaneAccuracy(CulaneFigures, total=False):
    """CULane's figures, the options they were scored with and, for TuSimple labels, its own."""

    lanes_scored: str
    lane_rows_from_labels: bool
    tusimple_accuracy: float
    FP: float
    FN: float


def score(labels: object, replay: ReplayToScore) -> MetricScore | None:
    """Score the published lanes against CULane or TuSimple labels (None for other labels)."""
    if not isinstance(labels, LaneLabels):
        return None
    options = replay.options
    lanes = scored_lanes(replay.outputs, options.lanes_scored)
    if options.lane_rows_from_labels:
        lanes = cropped_to_labels(lanes, labels)
    tusimple: TusimpleFigures | None = None
    if labels.form == 'tusimple':
        tusimple_scores = score_tusimple(labels, lanes)
        tusimple_scores.pop('per_frame_accuracy', None)
        tusimple = tusimple_scores
    size = replay.camera.size if replay.camera.size != (0, 0) else unknown_frame_size(labels)
    scores = score_culane(labels, lanes, size)
    per_frame = scores.pop('per_frame_F1', {})
    figures: CulaneFigures = scores
    section: LaneAccuracy = {**figures, 'lanes_scored': options.lanes_scored,
                             'lane_rows_from_labels': options.lane_rows_from_labels}
    if tusimple is not None:
        section['tusimple_accuracy'] = tusimple['tusimple_accuracy']
        section['FP'] = tusimple['FP']
        section['FN'] = tusimple['FN']
    return MetricScore(section, per_frame)


def scored_lanes(outputs: ReplayOutputs, lanes_scored: str) -> dict[int, list[NDArray[np.float64]]]:
    """Return the lanes scored per frame: all of them, or the ego lane's two lines."""
    if lanes_scored == 'all':
        return outputs.lanes
    return {stamp: [lane for lane, side in zip(lanes, outputs.lane_sides[stamp])
                    if side in EGO_SIDES] for stamp, lanes in outputs.lanes.items()}


def cropped_to_labels(lanes: dict[int, list[NDArray[np.float64]]],
                      labels: LaneLabels) -> dict[int, list[NDArray[np.float64]]]:
    """Return each frame's lanes cropped to the rows its labelled lanes span."""
    cropped = {}
    for stamp, frame_lanes in lanes.items():
        truth = labels.frames.get(stamp)
        if not truth:
            cropped[stamp] = frame_lanes
            continue
        rows = np.concatenate([lane[:, 1] for lane in truth])
        top, bottom = float(rows.min()), float(rows.max())
        kept = [lane[(lane[:, 1] >= top) & (lane[:, 1] <= bottom)] for lane in frame_lanes]
        cropped[stamp] = [lane for lane in kept if len(lane) >= 2]
    return cropped


def unknown_frame_size(labels: LaneLabels) -> tuple[int, int]:
    """Raise: CULane scoring needs the frame size, which compressed frames do not say."""
    raise LabelError(f'{labels.source}: the frame size is unknown (compressed frames): '
                     'CULane scoring draws lanes on an image of the frame size')


def combine(drives: list[ScoredDrive]) -> AccuracySection:
    """Return F1, precision and recall from the true and false positives of every drive."""
    sections = [cast(LaneAccuracy, drive.section) for drive in drives]
    tp, fp, fn = (sum(int(figure(section, key)) for section in sections)
                  for key in ('true_positives', 'false_positives', 'false_negatives'))
    return {'F1': 2 * tp / (2 * tp + fp + fn) if tp else 0.0,
            'precision': fraction(tp, tp + fp), 'recall': fraction(tp, tp + fn),
            'true_positives': tp, 'false_positives': fp, 'false_negatives': fn}


LANES = Metric(kind='lanes', score=score, combine=combine,
               headlines=('F1', 'precision', 'recall', 'tusimple_accuracy'), summary=('F1',),
               frame_figure='lane_F1')
