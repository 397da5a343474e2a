"""
Tracking accuracy against MOTChallenge labels: CLEAR MOT and IDF1 by py-motmetrics.

HOTA is not given: its maintained implementation on PyPI (trackeval 1.3.0) needs NumPy 2, and
the package stays on NumPy 1.x (dev/requirements.txt).
"""
from __future__ import annotations

from typing import Mapping, TypedDict

# py-motmetrics ships no type information.
import motmetrics  # type: ignore[import-untyped]
import numpy as np
from numpy.typing import NDArray

from triton_perception.scoring.detection import check_rows, fraction, Rows
from triton_perception.scoring.labels import TrackLabels

# Boxes match when their IoU is at least this (motmetrics' distance 1 - IoU <= 1 - this).
MATCH_IOU = 0.5
METRICS = ('mota', 'motp', 'idf1', 'idp', 'idr', 'num_switches', 'num_fragmentations',
           'num_misses', 'num_false_positives', 'num_objects', 'num_predictions', 'num_matches',
           'num_unique_objects', 'mostly_tracked', 'mostly_lost', 'precision', 'recall')


class TrackingFigures(TypedDict):
    """A replay's tracking accuracy (CLEAR MOT, IDF1 and their counts), as report.json lists it."""

    MOTA: float
    MOTP: float
    IDF1: float
    IDP: float
    IDR: float
    id_switches: int
    fragmentations: int
    misses: int
    false_positives: int
    matches: int
    labelled_boxes: int
    published_boxes: int
    labelled_tracks: int
    mostly_tracked: int
    mostly_lost: int
    precision: float
    recall: float
    frames: int
    frames_without_output: int
    match_iou: float


def corner_boxes_to_xywh(rows: NDArray[np.float64]) -> NDArray[np.float64]:
    """Return [x1, y1, x2, y2] rows as motmetrics' [left, top, width, height]."""
    return np.stack([rows[:, 0], rows[:, 1], rows[:, 2] - rows[:, 0], rows[:, 3] - rows[:, 1]],
                    axis=1)


def track_accumulator(labels: Mapping[int, Rows], predictions: Mapping[int, Rows],
                      match_iou: float = MATCH_IOU) -> motmetrics.MOTAccumulator:
    """Return motmetrics' accumulator over the labelled frames, in frame order."""
    accumulator = motmetrics.MOTAccumulator(auto_id=False)
    for frame in sorted(labels):
        truth = check_rows(labels[frame], 6, f'labels of frame {frame}')
        published = predictions.get(frame)
        tracks = check_rows(published if published is not None else np.zeros((0, 7)), 7,
                            f'tracks of frame {frame}')
        distances = motmetrics.distances.iou_matrix(corner_boxes_to_xywh(truth),
                                                    corner_boxes_to_xywh(tracks),
                                                    max_iou=1.0 - match_iou)
        accumulator.update(truth[:, 5].astype(np.int64), tracks[:, 6].astype(np.int64),
                           distances, frameid=frame)
    return accumulator


def score_tracks(labels: TrackLabels | Mapping[int, Rows],
                 predictions: Mapping[int, Rows],
                 match_iou: float = MATCH_IOU) -> TrackingFigures:
    """
    Score published tracks against labelled tracks, class-agnostic, matching at IoU >= 0.5.

    `labels` maps each labelled frame to rows [x1, y1, x2, y2, class, track_id, ...] (or is
    TrackLabels); `predictions` maps frames to the published rows [x1, y1, x2, y2, score,
    class_id, track_id]. Every labelled frame is scored in frame order; one missing from
    `predictions` had no output (counted in `frames_without_output`) and its objects are all
    misses. Returns MOTA, MOTP (the mean IoU of matched pairs, higher is better: 1 minus
    motmetrics' distance), IDF1, IDP, IDR, id_switches, fragmentations and the counts behind
    them. MOTA is 1 - (misses + false positives + switches) / labelled boxes, so it falls below
    0 when the errors outnumber the boxes. Raises ValueError on malformed rows.
    """
    if isinstance(labels, TrackLabels):
        labels = labels.frames
    frames = sorted(labels)
    accumulator = track_accumulator(labels, predictions, match_iou)
    result = motmetrics.metrics.create().compute(accumulator, metrics=list(METRICS),
                                                 return_dataframe=False)

    def count(name: str) -> int:
        return int(result[name])
    matches = count('num_matches')
    return {
        'MOTA': float(result['mota']) if count('num_objects') else 0.0,
        'MOTP': float(1.0 - result['motp']) if matches else 0.0,
        'IDF1': float(np.nan_to_num(result['idf1'])),
        'IDP': float(np.nan_to_num(result['idp'])),
        'IDR': float(np.nan_to_num(result['idr'])),
        'id_switches': count('num_switches'),
        'fragmentations': count('num_fragmentations'),
        'misses': count('num_misses'),
        'false_positives': count('num_false_positives'),
        'matches': matches,
        'labelled_boxes': count('num_objects'),
        'published_boxes': count('num_predictions'),
        'labelled_tracks': count('num_unique_objects'),
        'mostly_tracked': count('mostly_tracked'),
        'mostly_lost': count('mostly_lost'),
        'precision': fraction(matches, count('num_predictions')),
        'recall': fraction(matches, count('num_objects')),
        'frames': len(frames),
        'frames_without_output': sum(1 for frame in frames if frame not in predictions),
        'match_iou': match_iou,
    }
