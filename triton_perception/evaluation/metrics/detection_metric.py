"""
Detection accuracy of a replay: COCO AP, precision and recall against COCO box labels.

Its per-frame figure is each labelled frame's recall. Over several drives, AP is computed once
over every drive's frames (COCO AP is no sum of the drives' APs), each drive's frames keyed apart.
"""
from __future__ import annotations

from pathlib import Path

from triton_perception.evaluation.metrics.metric import (AccuracySection, Metric, MetricScore,
                                                         ReplayToScore, ScoredDrive)
from triton_perception.evaluation.metrics.replay_outputs import read_outputs
from triton_perception.scoring import DetectionFigures, DetectionLabels, read_label_sets
from triton_perception.scoring import score_detections

DRIVE_KEY_OFFSET = 10 ** 20  # above any stamp in ns: keeps the frames of two drives apart


def score(labels: object, replay: ReplayToScore) -> MetricScore | None:
    """Score the published boxes against COCO labels (None for other labels)."""
    if not isinstance(labels, DetectionLabels):
        return None
    scores = score_detections(labels, replay.outputs.detections, replay.class_names)
    per_frame = scores.pop('per_frame_recall', {})
    figures: DetectionFigures = scores
    return MetricScore(figures, per_frame)


def combine(drives: list[ScoredDrive]) -> AccuracySection:
    """Return COCO's figures over the labelled frames of every drive at once."""
    labels, predictions = {}, {}
    class_names: list[str] = []
    for number, drive in enumerate(drives):
        class_names = drive.class_names
        boxes = next(labels for labels in read_label_sets(Path(str(drive.section['labels'])),
                                                          class_names)
                     if isinstance(labels, DetectionLabels))  # the file scored in the drive
        outputs = read_outputs(drive.outputs_bag, class_names)
        offset = number * DRIVE_KEY_OFFSET
        labels.update({offset + stamp: rows for stamp, rows in boxes.frames.items()})
        predictions.update({offset + stamp: rows for stamp, rows in outputs.detections.items()
                            if stamp in boxes.frames})
    scores = score_detections(labels, predictions, class_names)
    scores.pop('per_frame_recall', None)
    figures: DetectionFigures = scores
    return figures


DETECTION = Metric(kind='detection', score=score, combine=combine,
                   headlines=('AP', 'AP50', 'AP75', 'precision', 'recall'), summary=('AP50',),
                   frame_figure='detection_recall')
