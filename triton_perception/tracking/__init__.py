"""
Multi-object tracking: ByteTrack association in the image, motion on the ground.

The tracker (tracker, association, kalman, ground_motion, camera_tracking) is pure numpy/scipy:
the nodes hand in arrays and stamps in seconds, so every behaviour is tested on synthetic scenes
with known truth (test/test_tracking.py). Only the tracks' messages (track_messages) and their
publishers (track_publishers) touch ROS.
Imports: `ground/`, `outputs/`, `parameters/`.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from triton_perception.system.faces import lazy_face

if TYPE_CHECKING:
    from triton_perception.tracking.association import iou_matrix, match
    from triton_perception.tracking.track_publishers import DetectionTracking
    from triton_perception.tracking.tracking_benchmark import (tracking_line, tracking_update_ms,
                                                               TrackingTiming)

__all__ = ['DetectionTracking', 'iou_matrix', 'match', 'tracking_line', 'tracking_update_ms',
           'TrackingTiming']
__getattr__ = lazy_face(__name__, {
    'association': ('iou_matrix', 'match'),
    'track_publishers': ('DetectionTracking',),
    'tracking_benchmark': ('tracking_line', 'tracking_update_ms', 'TrackingTiming'),
})
