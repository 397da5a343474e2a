"""
Tracks -> autoware_perception_msgs/TrackedObjects, for planners (markers: track_markers.py).

Why TrackedObjects rather than radar_msgs/RadarTracks: it is what Autoware's prediction and
planning read (and its rviz plugin draws), it carries an existence probability and a
classification with the classes a camera detector knows (car, truck, bus, bicycle, pedestrian,
...), where RadarTrack's classification is a bare number, and its twist comes with a 6x6
covariance like the rest of geometry_msgs. Both carry a UUID and position/velocity covariances.

Conventions (docs/tracking.md):
- the header is the input frame's stamp in the fixed frame the velocities are in (odom_frame,
  or target_frame when TF has no odom: then the twist is relative to the vehicle);
- the pose is the ground contact point, orientation unknown (UNAVAILABLE, identity), so the
  object's frame has the header frame's axes and the twist (vx, vy) is in those axes;
- object_id: 8 random bytes per node start, then the track number (big-endian), so the UUID is
  unique across restarts and its last 8 bytes give Detection2D.id back.
"""
from __future__ import annotations

import math

from autoware_perception_msgs.msg import (ObjectClassification, Shape, TrackedObject,
                                          TrackedObjectKinematics, TrackedObjects)
import numpy as np
from numpy.typing import NDArray
from std_msgs.msg import Header
from unique_identifier_msgs.msg import UUID

from triton_perception.tracking.ground_motion import GroundTrack

# COCO (and most detectors') class names -> Autoware's labels; anything else is UNKNOWN.
AUTOWARE_LABELS = {
    'car': ObjectClassification.CAR, 'truck': ObjectClassification.TRUCK,
    'bus': ObjectClassification.BUS, 'motorcycle': ObjectClassification.MOTORCYCLE,
    'bicycle': ObjectClassification.BICYCLE, 'person': ObjectClassification.PEDESTRIAN,
    **{animal: ObjectClassification.ANIMAL for animal in (
        'bird', 'cat', 'dog', 'horse', 'sheep', 'cow', 'elephant', 'bear', 'zebra', 'giraffe')},
}
# Below this speed (m/s, in a fixed frame) an object counts as stationary.
STATIONARY_SPEED = 0.5
# Variance (rad^2) of an orientation that is not estimated.
UNKNOWN_ANGLE_VARIANCE = math.pi ** 2


def track_uuid(session: bytes, track_id: str) -> UUID:
    """16 bytes: the node's 8 session bytes, then the track number."""
    return UUID(uuid=list(session[:8] + int(track_id).to_bytes(8, 'big')))


def planar_covariance(block: NDArray[np.float64],
                      rotation_variance: float = 0.0) -> NDArray[np.float64]:
    """
    Make a 6x6 row-major covariance (x, y, z, rotations) holding a 2x2 (x, y) block.

    Flat [36] float64: the message field takes such an array as it is, where a list of floats
    would be checked value by value.
    """
    covariance = np.zeros((6, 6))
    covariance[:2, :2] = block
    covariance[5, 5] = rotation_variance
    return covariance.reshape(-1)


def tracked_object(session: bytes, track_id: str, class_name: str, score: float,
                   track: GroundTrack, width: float, height: float,
                   absolute: bool) -> TrackedObject:
    """One TrackedObject; `absolute` says the velocity is in a fixed frame (not relative)."""
    tracked = TrackedObject(
        object_id=track_uuid(session, track_id), existence_probability=float(score),
        classification=[ObjectClassification(
            label=AUTOWARE_LABELS.get(class_name, ObjectClassification.UNKNOWN),
            probability=float(score))])
    # Filled in place: the constructor builds default kinematics and shape even when given
    # ones, and they cost more than the rest of the message.
    kinematics = tracked.kinematics
    kinematics.orientation_availability = TrackedObjectKinematics.UNAVAILABLE
    pose = kinematics.pose_with_covariance
    pose.pose.position.x, pose.pose.position.y = (float(value) for value in track.position)
    pose.pose.orientation.w = 1.0
    pose.covariance = planar_covariance(track.position_covariance, UNKNOWN_ANGLE_VARIANCE)
    twist = kinematics.twist_with_covariance
    twist.twist.linear.x, twist.twist.linear.y = (float(value) for value in track.velocity)
    twist.covariance = planar_covariance(track.velocity_covariance)
    kinematics.is_stationary = bool(absolute and
                                    np.linalg.norm(track.velocity) < STATIONARY_SPEED)
    shape = tracked.shape
    shape.type = Shape.BOUNDING_BOX
    known_width = float(width) if np.isfinite(width) else 0.0
    # The depth is not observable from one camera: the footprint is taken square.
    shape.dimensions.x = shape.dimensions.y = known_width
    shape.dimensions.z = float(height) if np.isfinite(height) and height > 0 else 0.0
    return tracked


def tracked_objects_message(header: Header, objects: list[TrackedObject]) -> TrackedObjects:
    """Gather the frame's tracked objects, stamped in the fixed frame (input frame's stamp)."""
    return TrackedObjects(header=header, objects=objects)
