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
    from triton_perception.scoring.detection import (DetectionFigures, fraction,
                                                     score_detections)
    from triton_perception.scoring.label_sets import Labels
    from triton_perception.scoring.labels import (DetectionLabels, LabelError, LaneLabels,
                                                  read_labels, resolve_frames, TrackLabels)
    from triton_perception.scoring.lanes import (culane_lane_width, culane_pairs, CulaneFigures,
                                                 f1_of, score_culane, score_tusimple,
                                                 TusimpleFigures)
    from triton_perception.scoring.tracking import score_tracks, TrackingFigures

__all__ = ['culane_lane_width', 'culane_pairs', 'CulaneFigures', 'DetectionFigures',
           'DetectionLabels', 'f1_of', 'fraction', 'LabelError', 'Labels', 'LaneLabels',
           'read_labels', 'resolve_frames', 'score_culane', 'score_detections', 'score_tracks',
           'score_tusimple', 'scoring_benchmark', 'TrackingFigures', 'TrackLabels',
           'TusimpleFigures']
__getattr__ = lazy_face(__name__, {
    'benchmark': ('scoring_benchmark',),
    'detection': ('DetectionFigures', 'fraction', 'score_detections'),
    'label_sets': ('Labels',),
    'labels': ('DetectionLabels', 'LabelError', 'LaneLabels', 'read_labels', 'resolve_frames',
               'TrackLabels'),
    'lanes': ('culane_lane_width', 'culane_pairs', 'CulaneFigures', 'f1_of', 'score_culane',
              'score_tusimple', 'TusimpleFigures'),
    'tracking': ('score_tracks', 'TrackingFigures'),
})
