"""
Tracking accuracy of a replay: CLEAR MOT and IDF1 against MOTChallenge labels.

Over several drives the counts are summed and the ratios computed again from them (MOTA and
IDF1 are ratios of counts; MOTP is weighted by the matches).
"""
from __future__ import annotations

from typing import cast

from triton_perception.evaluation.metrics.metric import (AccuracySection, Metric, MetricScore,
                                                         ReplayToScore, ScoredDrive)
from triton_perception.scoring import fraction, score_tracks, TrackingFigures, TrackLabels


class TrackingAccuracy(TrackingFigures):
    """The tracking figures and whether only the frames with label rows were scored."""

    sparse_labels: bool


def score(labels: object, replay: ReplayToScore) -> MetricScore | None:
    """Score the published tracks against MOTChallenge labels (None for other labels)."""
    if not isinstance(labels, TrackLabels):
        return None
    frames = {index: rows for index, rows in labels.frames.items()
              if len(rows) or not replay.options.sparse_tracks}
    predictions = {index: replay.outputs.tracks[stamp] for index, stamp in replay.camera.frames
                   if stamp in replay.outputs.tracks and index in frames}
    section: TrackingAccuracy = {**score_tracks(frames, predictions),
                                 'sparse_labels': replay.options.sparse_tracks}
    return MetricScore(section)


def combine(drives: list[ScoredDrive]) -> AccuracySection:
    """Return MOTA, MOTP, IDF1 and the event counts over every drive's frames."""
    tracks = [cast(TrackingAccuracy, drive.section) for drive in drives]
    objects = sum(track['labelled_boxes'] for track in tracks)
    published = sum(track['published_boxes'] for track in tracks)
    errors = sum(track['misses'] + track['false_positives'] + track['id_switches']
                 for track in tracks)
    id_true = sum(track['IDR'] * track['labelled_boxes'] for track in tracks)
    matches = sum(track['matches'] for track in tracks)
    return {'MOTA': 1 - errors / objects if objects else 0.0,
            'MOTP': fraction(sum(track['MOTP'] * track['matches'] for track in tracks), matches),
            'IDF1': fraction(2 * id_true, objects + published),
            'id_switches': sum(track['id_switches'] for track in tracks),
            'fragmentations': sum(track['fragmentations'] for track in tracks)}


TRACKING = Metric(kind='tracking', score=score, combine=combine,
                  headlines=('MOTA', 'MOTP', 'IDF1', 'id_switches', 'fragmentations'),
                  summary=('MOTA', 'IDF1'), counts=('id_switches', 'fragmentations'))
