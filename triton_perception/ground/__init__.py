"""
Lanes, drivable area and detections on the ground plane of target_frame.

Owns: the calibrated camera (camera), pixels -> ground (ground_projection), their messages
(ground_messages), the camera's CameraInfo and TF (camera_lookup, static_tf) and the nodes'
ground publishers (ground_publishers).
Imports: `outputs/`, `parameters/`, `qos.py`.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from triton_perception.system.faces import lazy_face

if TYPE_CHECKING:
    from triton_perception.ground.camera import GroundCamera, Intrinsics, Mounting
    from triton_perception.ground.camera_lookup import CameraGeometrySource
    from triton_perception.ground.ground_projection import (ego_lane, ground_boxes,
                                                            GROUND_POINT_DTYPE)
    from triton_perception.ground.ground_publishers import DetectionGroundOutputs, LaneGroundOutputs

__all__ = ['CameraGeometrySource', 'DetectionGroundOutputs', 'ego_lane', 'ground_boxes',
           'GROUND_POINT_DTYPE', 'GroundCamera', 'Intrinsics', 'LaneGroundOutputs', 'Mounting']
__getattr__ = lazy_face(__name__, {
    'camera': ('GroundCamera', 'Intrinsics', 'Mounting'),
    'camera_lookup': ('CameraGeometrySource',),
    'ground_projection': ('ego_lane', 'ground_boxes', 'GROUND_POINT_DTYPE'),
    'ground_publishers': ('DetectionGroundOutputs', 'LaneGroundOutputs'),
})
