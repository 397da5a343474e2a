"""
Accuracy against labels: label files read into arrays, and detection, tracking and lane scores.

Owns: COCO, MOTChallenge, CULane and TuSimple label readers (labels, with lane_labels, the label
sets and the fields they parse) and their scores (detection, tracking, lanes, benchmark). No
rclpy, no ROS messages.
Imports: nothing of the package.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from triton_perception.system.faces import lazy_face

if TYPE_CHECKING:
    from triton_perception.scoring.benchmark import scoring_benchmark
    from triton_perception.scoring.detection import score_detections
    from triton_perception.scoring.labels import (DetectionLabels, LabelError, LaneLabels,
                                                  read_labels, resolve_frames, TrackLabels)
    from triton_perception.scoring.lanes import score_culane, score_tusimple
    from triton_perception.scoring.tracking import score_tracks

__all__ = ['DetectionLabels', 'LabelError', 'LaneLabels', 'read_labels', 'resolve_frames',
           'score_culane', 'score_detections', 'score_tracks', 'score_tusimple',
           'scoring_benchmark', 'TrackLabels']
__getattr__ = lazy_face(__name__, {
    'benchmark': ('scoring_benchmark',),
    'detection': ('score_detections',),
    'labels': ('DetectionLabels', 'LabelError', 'LaneLabels', 'read_labels', 'resolve_frames',
               'TrackLabels'),
    'lanes': ('score_culane', 'score_tusimple'),
    'tracking': ('score_tracks',),
})
