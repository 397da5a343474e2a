"""
detection_node's tracking, its ids in the detection messages, and its track topics.

One CameraTracking per camera frame_id, the ids it hands to the detection messages, and
`detections/tracks` + `detections/tracks/markers`. Runs on the node's request threads, after
the detections of a frame are known and before they are published, so that Detection2D.id and
Detection3D.id carry the track id. One lock keeps the threads' frames apart, and a frame that
finishes after one that arrived later is published without ids (camera_tracking).
"""
from __future__ import annotations

import importlib
import itertools
import math
import os
import threading
from types import ModuleType

import numpy as np
from numpy.typing import NDArray
from rclpy.node import Node
from rclpy.qos import QoSProfile
from std_msgs.msg import Header
from visualization_msgs.msg import MarkerArray

from triton_perception.ground import CameraGeometrySource
from triton_perception.outputs import class_name
from triton_perception.parameters import DetectionSettings, LiveSettings
from triton_perception.tracking.camera_tracking import (CameraTracking, FrameTracks,
                                                        motion_settings, tracker_settings)
from triton_perception.tracking.ground_motion import Pose2D
from triton_perception.tracking.track_markers import track_markers_message

OFF = 'off (tracking is false)'
NO_TRACK_MESSAGES = (
    'detections/tracks is off: autoware_perception_msgs is not installed (sudo apt install '
    'ros-$ROS_DISTRO-autoware-perception-msgs); track ids, detections/tracks/markers and '
    'everything else are published')


def track_messages() -> ModuleType | None:
    """
    Return the TrackedObjects builders (tracking/track_messages.py), or None.

    None where autoware_perception_msgs is not installed: it is the one message package a
    planner needs and nothing else in the node does, so a machine without it still tracks.
    """
    try:
        return importlib.import_module('triton_perception.tracking.track_messages')
    except ModuleNotFoundError as error:
        if (error.name or '').split('.')[0] != 'autoware_perception_msgs':
            raise
        return None


def stamp_seconds(header: Header) -> float:
    """Convert a header stamp to seconds: every tracking duration is measured in these."""
    return float(header.stamp.sec + header.stamp.nanosec * 1e-9)


class DetectionTracking:
    """Tracks per camera; `process` once per frame on the worker thread."""

    def __init__(self, node: Node, settings: LiveSettings[DetectionSettings],
                 geometry: CameraGeometrySource, labels: list[str],
                 qos: QoSProfile) -> None:
        """
        Create the track publishers on `node`, unless the `tracking` parameter is false.

        `settings` returns the node's settings of the moment.
        `geometry` gives each camera's ground geometry, `labels` the class names for the messages.
        Track ids are numbered from 1 across this node's cameras, and a random 8-byte session
        prefix keeps their uuids apart from those of another node or an earlier run.
        """
        self._settings = settings
        self._geometry = geometry
        self._labels = labels
        self.enabled = settings().tracking
        self.reason = OFF if not self.enabled else 'on (no frame yet)'
        self.nearest_collision = 'none'
        self._lock = threading.Lock()
        self._cameras: dict[str, CameraTracking] = {}
        if not self.enabled:
            return
        self._fixed_frames: dict[str, str] = {}
        self._ids = itertools.count(1)
        self._session = os.urandom(8)
        self._messages = track_messages()
        self._tracks = None if self._messages is None else node.create_publisher(
            self._messages.TrackedObjects, 'detections/tracks', qos)
        if self._messages is None:
            node.get_logger().warning(NO_TRACK_MESSAGES)
        self._markers = node.create_publisher(MarkerArray, 'detections/tracks/markers', qos)

    @property
    def late_frames(self) -> int:
        """Return the frames published untracked since they finished after a later one."""
        with self._lock:
            return sum(tracking.late_frames for tracking in self._cameras.values())

    def process(self, header: Header, detections: NDArray[np.float32],
                arrival: float) -> list[str] | None:
        """
        Track one frame's DETECTIONS, publish the tracks, and return each row's id.

        `arrival` is when the frame reached the node (Frame.received_at). The ids are those to
        publish ('' for none, and for every row of a late frame); None when tracking is off.
        """
        if not self.enabled:
            return None
        with self._lock:
            return self._process(header, detections, arrival)

    def _process(self, header: Header, detections: NDArray[np.float32],
                 arrival: float) -> list[str]:
        camera_tracking = self._cameras.get(header.frame_id)
        if camera_tracking is None:
            camera_tracking = self._cameras[header.frame_id] = CameraTracking(
                tracker_settings(self._settings()), motion_settings(self._settings()), self._ids)
        if not camera_tracking.admits(arrival):
            return [''] * len(detections)
        camera = self._geometry.camera(header.frame_id)
        fixed_frame, vehicle = self._vehicle_pose(header, camera is not None)
        if self._fixed_frames.get(header.frame_id, fixed_frame) != fixed_frame:
            # The filters hold positions in the other frame: start them again (ids stay).
            camera_tracking.motion.reset()
        self._fixed_frames[header.frame_id] = fixed_frame
        tracks = camera_tracking.update(stamp_seconds(header), detections, camera, vehicle)
        include_unconfirmed = self._settings().tracking_publish_unconfirmed
        ids = tracks.published_ids(include_unconfirmed)
        if camera is not None:
            self._publish(Header(stamp=header.stamp, frame_id=fixed_frame), detections, tracks,
                          ids, absolute=fixed_frame != self._settings().target_frame)
        else:
            self.nearest_collision = 'none'
        self._describe(camera is not None, fixed_frame, camera_tracking)
        return ids

    def _vehicle_pose(self, header: Header, geometry_known: bool) -> tuple[str, Pose2D | None]:
        """Find the fixed frame and target_frame's pose in it: odom_frame via TF, else None."""
        target, odom = self._settings().target_frame, self._settings().odom_frame
        if geometry_known and odom:
            matrix = self._geometry.transform_at(odom, target, header.stamp)
            if matrix is not None:
                return odom, Pose2D.from_matrix(matrix)
        return target, None

    def _publish(self, header: Header, detections: NDArray[np.float32], tracks: FrameTracks,
                 ids: list[str], absolute: bool) -> None:
        """
        Publish the tracks and their markers to whoever subscribes; note the nearest collision.

        A message nobody subscribes to is not built: with 8 tracks the two cost about 0.9 ms
        to build and 0.5 ms to serialize per frame (docs/performance.md), and the markers are
        for rviz only.
        """
        messages, publisher = self._messages, self._tracks
        if publisher is not None and publisher.get_subscription_count() == 0:
            publisher = None
        want_markers = self._markers.get_subscription_count() > 0
        objects, marked = [], []
        nearest = (math.inf, '')
        for row, (track_id, ground) in enumerate(zip(ids, tracks.ground)):
            if not track_id or ground is None:
                continue
            nearest = min(nearest, (ground.time_to_collision, track_id))
            if publisher is None and not want_markers:
                continue
            name = class_name(self._labels, int(detections[row, 5]))
            if publisher is not None and messages is not None:
                objects.append(messages.tracked_object(
                    self._session, track_id, name, float(detections[row, 4]), ground,
                    tracks.widths[row], tracks.heights[row], absolute))
            marked.append((track_id, name, ground))
        if publisher is not None and messages is not None:
            publisher.publish(messages.tracked_objects_message(header, objects))
        if want_markers:
            self._markers.publish(track_markers_message(header, marked))
        self.nearest_collision = (f'{nearest[0]:.2f} s (track {nearest[1]})'
                                  if math.isfinite(nearest[0]) else 'none')

    def _describe(self, geometry_known: bool, fixed_frame: str,
                  camera_tracking: CameraTracking) -> None:
        """/diagnostics: what the velocities are relative to, or why there are none."""
        count = camera_tracking.tracker.track_count
        if not geometry_known:
            self.reason = (f'on: {count} tracks in the image; no ground velocities (ground: '
                           f'{self._geometry.reason})')
        elif fixed_frame == self._settings().target_frame:
            odom = self._settings().odom_frame
            why = (f'no transform {odom} <- {fixed_frame} (TF: {self._geometry.tf_source})'
                   if odom else 'odom_frame is empty')
            self.reason = (f'on: {count} tracks; velocities are relative to the vehicle '
                           f'({fixed_frame}): {why}')
        else:
            self.reason = f'on: {count} tracks; velocities in {fixed_frame}'
