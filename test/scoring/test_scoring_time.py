"""The scoring benchmark (triton_perception.scoring.scoring_time) runs; its time is not asserted."""
from __future__ import annotations

from triton_perception.scoring.detection import score_detections
from triton_perception.scoring.lanes import score_culane
from triton_perception.scoring.scoring_time import (CLASS_NAMES, FRAME_SIZE, scoring_benchmark,
                                                    synthetic_frames)
from triton_perception.scoring.tracking import score_tracks


def test_benchmark_returns_seconds() -> None:
    """The scoring benchmark runs and returns a positive time."""
    assert scoring_benchmark(frames=20) > 0.0


def test_synthetic_frames_exercise_every_outcome() -> None:
    """
    The benchmark's synthetic frames give hits, misses and false positives in every scorer.

    A benchmark that only scored perfect frames would time the easy path.
    """
    data = synthetic_frames(30)
    detections = score_detections(data['boxes'], data['detections'], CLASS_NAMES)
    assert 0 < detections['precision'] < 1 and 0 < detections['recall'] < 1
    tracks = score_tracks(data['tracks'], data['published_tracks'])
    assert tracks['misses'] > 0 and tracks['false_positives'] > 0
    lanes = score_culane(data['lanes'], data['published_lanes'], FRAME_SIZE)
    # One labelled lane in four is never published; the jitter loses a few more.
    assert lanes['precision'] > 0.9 and 0.6 < lanes['recall'] <= 0.75
