"""
What a node needs to know before it can put pixels on the ground.

The latest CameraInfo of the frame and the camera's mounting in target_frame (TF, else the
camera_pose parameter).

Shared by lane_node and detection_node. Subscription callbacks only store messages; the
worker thread asks `camera(frame_id)` per frame and gets a GroundCamera, or None with `reason`
saying why (reported in /diagnostics).
"""
from __future__ import annotations

import threading
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray
from rclpy.duration import Duration
from rclpy.node import Node
from rclpy.time import Time
from sensor_msgs.msg import CameraInfo

from triton_perception.ground.camera import CameraModelError, GroundCamera, Intrinsics, Mounting
from triton_perception.ground.static_tf import StaticTransforms, transform_matrix
from triton_perception.parameters import GroundSettings, LiveSettings, TrackingSettings
from triton_perception.qos import CAMERA_INFO_QOS, TF_QOS, TF_STATIC_QOS

if TYPE_CHECKING:
    from builtin_interfaces.msg import Time as Stamp

try:  # the full TF (dynamic transforms too) where tf2_ros is installed
    import tf2_ros
except ImportError:
    tf2_ros = None
try:  # else /tf_static directly
    from tf2_msgs.msg import TFMessage
except ImportError:
    TFMessage = None

OFF = 'off (ground_outputs is false)'
# How long the worker waits for a transform at a frame's stamp (odometry lags the camera).
TF_WAIT_S = 0.05
# What a cached GroundCamera was made from: CameraInfo K, D, model, width, height, the mounting
# (origin and rotation bytes) and max_ground_range_m.
CameraKey = tuple[tuple[float, ...], tuple[float, ...], str, int, int, bytes, bytes, float]


def camera_pose_set(pose: list[float]) -> bool:
    """camera_pose all zeros means unset: a camera on the ground sees no ground."""
    return any(value != 0.0 for value in pose)


class CameraGeometrySource:
    """Latest CameraInfo per frame_id and the mounting of each camera frame in target_frame."""

    def __init__(self, node: Node, settings: LiveSettings[GroundSettings]) -> None:
        """
        Subscribe `node` to camera_info and the transforms, unless ground_outputs is off.

        `settings` returns the node's settings of the moment (camera_pose and
        max_ground_range_m change live).

        Transforms come from tf2_ros when it is installed; without it from /tf_static, plus the
        latest /tf when tracking needs the moving odom_frame. `tf_source` says which, and `reason`
        why no camera is available yet.
        """
        self._settings = settings
        self._lock = threading.Lock()
        self._infos: dict[str, CameraInfo] = {}
        self._cache: dict[str, tuple[CameraKey, GroundCamera]] = {}
        self._static = StaticTransforms()
        # Without tf2_ros: the latest transform of every frame, moving ones (/tf) included.
        self._latest = StaticTransforms()
        self._buffer = None
        start = settings()
        self.enabled = start.ground_outputs
        self.reason = OFF if not self.enabled else 'no camera frame received yet'
        if not self.enabled:
            return
        self._info_topic = node.resolve_topic_name('camera_info')
        node.create_subscription(CameraInfo, 'camera_info', self._on_camera_info,
                                 CAMERA_INFO_QOS)
        if tf2_ros is not None:
            self._buffer = tf2_ros.Buffer()
            self._listener = tf2_ros.TransformListener(self._buffer, node, spin_thread=False)
            self.tf_source = 'tf2_ros'
        elif TFMessage is not None:
            node.create_subscription(TFMessage, '/tf_static', self._on_tf_static, TF_STATIC_QOS)
            self.tf_source = '/tf_static'
            if isinstance(start, TrackingSettings) and start.tracking and start.odom_frame:
                # Tracking's odom_frame <- target_frame moves: the latest /tf, not at the stamp.
                node.create_subscription(TFMessage, '/tf', self._on_tf, TF_QOS)
                self.tf_source = '/tf_static and the latest /tf'
        else:
            self.tf_source = 'none (neither tf2_ros nor tf2_msgs is installed)'

    def _on_camera_info(self, message: CameraInfo) -> None:
        with self._lock:
            self._infos[message.header.frame_id] = message

    def _on_tf_static(self, message: TFMessage) -> None:
        with self._lock:
            self._static.add(message)
            self._latest.add(message)

    def _on_tf(self, message: TFMessage) -> None:
        with self._lock:
            self._latest.add(message)

    def _transform(self, target: str, frame: str,
                   stamp: Stamp | None = None) -> NDArray[np.float64] | None:
        """
        4x4 target <- frame: at `stamp` (a header stamp.

        Waits up to TF_WAIT_S for it), or the latest when None. Without tf2_ros only static
        transforms are known.
        """
        if self._buffer is not None:
            try:
                if stamp is None:
                    # The latest transform: a camera mounting is static, or close to it.
                    stamped = self._buffer.lookup_transform(target.lstrip('/'),
                                                            frame.lstrip('/'), Time())
                elif not self._buffer.can_transform(target.lstrip('/'), frame.lstrip('/'),
                                                    Time()):
                    return None  # not connected at all: no reason to wait for it
                else:
                    stamped = self._buffer.lookup_transform(
                        target.lstrip('/'), frame.lstrip('/'), Time.from_msg(stamp),
                        timeout=Duration(seconds=TF_WAIT_S))
            except (tf2_ros.LookupException, tf2_ros.ConnectivityException,
                    tf2_ros.ExtrapolationException):
                return None
            return transform_matrix(stamped.transform)
        with self._lock:
            return self._static.lookup(target, frame)

    def transform_at(self, target: str, frame: str, stamp: Stamp) -> NDArray[np.float64] | None:
        """
        4x4 target <- frame at a header stamp (e.g.

        Odom <- base_link, which moves), or None when TF does not have it. Without tf2_ros: the
        latest transforms received, whatever their stamps (no interpolation).
        """
        if not self.enabled or not target:
            return None
        if self._buffer is None:
            with self._lock:
                return self._latest.lookup(target, frame)
        return self._transform(target, frame, stamp)

    def _mounting(self, frame_id: str) -> tuple[Mounting | None, str]:
        target = self._settings().target_frame
        matrix = self._transform(target, frame_id)
        if matrix is not None:
            return Mounting.from_matrix(matrix), f'TF {target} <- {frame_id}'
        pose = list(self._settings().camera_pose)
        if camera_pose_set(pose):
            return Mounting.from_camera_pose(pose), 'camera_pose'
        return None, (f'no transform {target} <- {frame_id} (TF: {self.tf_source}) and '
                      'camera_pose is not set')

    def camera(self, frame_id: str) -> GroundCamera | None:
        """Return the geometry of this frame, or None (then `reason` says why)."""
        if not self.enabled:
            return None
        with self._lock:
            info = self._infos.get(frame_id)
            frames = sorted(self._infos)
        if info is None:
            self.reason = (f"no CameraInfo for frame '{frame_id}' on {self._info_topic} (it has "
                           f"frames {', '.join(frames)})" if frames else
                           f'no CameraInfo on {self._info_topic}')
            return None
        mounting, source = self._mounting(frame_id)
        if mounting is None:
            self.reason = source
            return None
        # By content: drivers publish CameraInfo with every frame, and a new GroundCamera would
        # make the grid's pixel lookup be computed again.
        key = (tuple(info.k), tuple(info.d), info.distortion_model, info.width, info.height,
               mounting.origin.round(6).tobytes(), mounting.rotation.round(9).tobytes(),
               self._settings().max_ground_range_m)
        cached = self._cache.get(frame_id)
        if cached is not None and cached[0] == key:
            self.reason = f'on ({source})'
            return cached[1]
        try:
            mounting.check()
            camera = GroundCamera(Intrinsics.from_camera_info(info), mounting,
                                  self._settings().max_ground_range_m)
        except CameraModelError as error:
            self.reason = f'{error} ({source}, CameraInfo on {self._info_topic})'
            return None
        self._cache[frame_id] = (key, camera)
        self.reason = f'on ({source})'
        return camera
