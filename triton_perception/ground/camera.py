"""
A calibrated, mounted camera looking at flat ground: pixels <-> points on z = 0.

Frames (REP 103 / REP 105):
- `target_frame` (e.g. base_link): x forward, y left, z up; the ground is the plane z = 0.
- the camera's *body* frame: x forward (along the optical axis), y left, z up. `camera_pose`
  `[x, y, z, roll, pitch, yaw]` places it in `target_frame` (rotation R = Rz(yaw) Ry(pitch)
  Rx(roll), so a positive pitch looks down).
- the camera's *optical* frame, the one named by Image/CameraInfo `frame_id`: z forward, x right,
  y down, at the body frame's origin. A transform from TF is taken to be of the optical frame,
  as sensor_msgs/CameraInfo defines `frame_id`.

Flat-ground limits: every pixel is assumed to see the plane z = 0 of `target_frame`. Pitching
under braking or acceleration, road slopes and banking move the true ground, and the error
grows with distance (at 1.5 m height, 0.5 degree of unmodelled pitch moves a point seen at 20 m
by about 2 m). Pixels whose rays do not meet the ground ahead (at or above the horizon) or
meet it beyond `max_range` are dropped.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import cast, TYPE_CHECKING

import cv2
import numpy as np
from numpy.typing import NDArray

from triton_perception.errors import TritonPerceptionError

if TYPE_CHECKING:
    from sensor_msgs.msg import CameraInfo

# Optical axes expressed in the body frame: x_opt = -y_body, y_opt = -z_body, z_opt = x_body.
BODY_FROM_OPTICAL = np.array([[0.0, 0.0, 1.0],
                              [-1.0, 0.0, 0.0],
                              [0.0, -1.0, 0.0]])
PINHOLE_MODELS = ('plumb_bob', 'rational_polynomial', '')
FISHEYE_MODELS = ('equidistant',)


class CameraModelError(TritonPerceptionError, ValueError):
    """A CameraInfo or pose that cannot be used; the message says what is wrong."""


def rotation_rpy(roll: float, pitch: float, yaw: float) -> NDArray[np.float64]:
    """R = Rz(yaw) Ry(pitch) Rx(roll), the fixed-axis roll-pitch-yaw of REP 103."""
    cr, sr, cp, sp, cy, sy = (np.cos(roll), np.sin(roll), np.cos(pitch), np.sin(pitch),
                              np.cos(yaw), np.sin(yaw))
    return np.array([[cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
                     [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
                     [-sp, cp * sr, cp * cr]])


def quaternion_matrix(x: float, y: float, z: float, w: float) -> NDArray[np.float64]:
    """Return the rotation of a (normalised) quaternion, as in geometry_msgs/Quaternion."""
    norm = np.sqrt(x * x + y * y + z * z + w * w)
    if norm < 1e-9:
        raise CameraModelError('the transform has a zero quaternion')
    x, y, z, w = x / norm, y / norm, z / norm, w / norm
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                     [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                     [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])


@dataclass(frozen=True)
class Intrinsics:
    """What the ground projection needs from a sensor_msgs/CameraInfo."""

    k: NDArray[np.float64]  # 3x3
    d: NDArray[np.float64]  # distortion coefficients (may be empty)
    model: str = 'plumb_bob'
    width: int = 0
    height: int = 0

    @classmethod
    def from_camera_info(cls, info: CameraInfo) -> 'Intrinsics':
        """From a CameraInfo (rclpy or rosbags message); raises CameraModelError if unusable."""
        k = np.array(info.k, dtype=np.float64).reshape(3, 3)
        if not (k[0, 0] > 0 and k[1, 1] > 0 and np.all(np.isfinite(k))):
            raise CameraModelError(f'CameraInfo K has no positive focal lengths (fx={k[0, 0]:g}, '
                                   f'fy={k[1, 1]:g}): the camera is not calibrated')
        d = np.array(info.d, dtype=np.float64)
        model = str(info.distortion_model)
        if model not in PINHOLE_MODELS + FISHEYE_MODELS:
            raise CameraModelError(f"CameraInfo distortion_model '{model}' is not supported "
                                   '(plumb_bob, rational_polynomial, equidistant)')
        return cls(k, d, model, int(info.width), int(info.height))

    @property
    def distorted(self) -> bool:
        """Whether any distortion coefficient is non-zero (pixels then need undistorting)."""
        return self.d.size > 0 and bool(np.any(self.d != 0.0))

    def normalised(self, pixels: NDArray[np.float32 | np.float64]) -> NDArray[np.float64]:
        """Pixels [N, 2] -> undistorted normalised coordinates [N, 2] (x/z, y/z, optical)."""
        pixels = np.asarray(pixels, dtype=np.float64).reshape(-1, 1, 2)
        if pixels.shape[0] == 0:
            return np.zeros((0, 2))
        if not self.distorted:
            k = self.k
            y = (pixels[:, 0, 1] - k[1, 2]) / k[1, 1]
            x = (pixels[:, 0, 0] - k[0, 2] - k[0, 1] * y) / k[0, 0]
            return np.stack([x, y], axis=1)
        if self.model in FISHEYE_MODELS:
            # OpenCV's stubs return any integer or float array; float64 points stay float64.
            fisheye = cast(NDArray[np.float64], cv2.fisheye.undistortPoints(
                pixels, self.k, self.d[:4]))
            return fisheye.reshape(-1, 2)
        # OpenCV's iterative undistortion; more iterations than its default 5 keep strong
        # barrel distortion accurate at the image corners.
        criteria = (cv2.TERM_CRITERIA_COUNT | cv2.TERM_CRITERIA_EPS, 40, 1e-10)
        # OpenCV's stubs leave out None (no rectification, no new matrix), which it accepts.
        undistorted: NDArray[np.float64] = cv2.undistortPointsIter(
            pixels, self.k, self.d, None, None, criteria)  # type: ignore[call-overload]
        return undistorted.reshape(-1, 2)

    def project(self, points_optical: NDArray[np.float64]) -> NDArray[np.float64]:
        """Points [N, 3] in the optical frame (z > 0) -> pixels [N, 2], with distortion."""
        points = np.asarray(points_optical, dtype=np.float64).reshape(-1, 1, 3)
        if points.shape[0] == 0:
            return np.zeros((0, 2))
        zero = np.zeros(3)
        if self.model in FISHEYE_MODELS and self.distorted:
            # OpenCV's stubs return any integer or float array; float64 points stay float64.
            projected = cast(NDArray[np.float64], cv2.fisheye.projectPoints(
                points, zero, zero, self.k, self.d[:4])[0])
            return projected.reshape(-1, 2)
        # OpenCV's stubs leave out None (no distortion), which the function accepts.
        projected = cast(NDArray[np.float64], cv2.projectPoints(
            points, zero, zero, self.k,
            self.d if self.distorted else None)[0])  # type: ignore[arg-type]
        return projected.reshape(-1, 2)


@dataclass(frozen=True)
class Mounting:
    """The optical frame's pose in target_frame: p_target = rotation @ p_optical + origin."""

    rotation: NDArray[np.float64]
    origin: NDArray[np.float64]

    @classmethod
    def from_camera_pose(cls, pose: list[float] | tuple[float, ...]) -> 'Mounting':
        """From `camera_pose` [x, y, z, roll, pitch, yaw] of the camera's body frame."""
        x, y, z, roll, pitch, yaw = (float(value) for value in pose)
        return cls(rotation_rpy(roll, pitch, yaw) @ BODY_FROM_OPTICAL, np.array([x, y, z]))

    @classmethod
    def from_matrix(cls, matrix: NDArray[np.float64]) -> 'Mounting':
        """From a 4x4 transform target <- optical frame (e.g. looked up in TF)."""
        return cls(np.asarray(matrix[:3, :3], dtype=np.float64),
                   np.asarray(matrix[:3, 3], dtype=np.float64))

    def check(self) -> None:
        """Raise CameraModelError unless the camera is above the ground plane (origin z > 0 m)."""
        if not self.origin[2] > 0.0:
            raise CameraModelError(f'the camera is at z = {self.origin[2]:g} m in the target '
                                   'frame: it must be above the ground plane z = 0')


@dataclass(frozen=True)
class GroundCamera:
    """Intrinsics + mounting: the pure geometry behind every ground output."""

    intrinsics: Intrinsics
    mounting: Mounting
    max_range: float = 100.0
    _cache: dict[str, object] = field(default_factory=dict, compare=False, repr=False)

    def rays(self, pixels: NDArray[np.float32 | np.float64]) -> NDArray[np.float64]:
        """Pixels [N, 2] -> ray directions [N, 3] in target_frame (not normalised)."""
        normalised = self.intrinsics.normalised(pixels)
        optical = np.concatenate([normalised, np.ones((len(normalised), 1))], axis=1)
        rays: NDArray[np.float64] = optical @ self.mounting.rotation.T
        return rays

    def to_ground(self, pixels: NDArray[np.float32 | np.float64]
                  ) -> tuple[NDArray[np.float64], NDArray[np.bool_]]:
        """
        Pixels [N, 2] -> (points [N, 3] on z = 0, valid [N] bool).

        Invalid: the ray does not go down (at or above the horizon) or meets the ground
        farther than max_range (horizontally) from the camera. Invalid points are NaN.
        """
        rays = self.rays(pixels)
        origin = self.mounting.origin
        with np.errstate(divide='ignore', invalid='ignore'):
            scale = -origin[2] / rays[:, 2]
            points = origin + scale[:, None] * rays
        horizontal = np.hypot(points[:, 0] - origin[0], points[:, 1] - origin[1])
        valid = (rays[:, 2] < 0) & np.isfinite(scale) & (horizontal <= self.max_range)
        points[~valid] = np.nan
        points[:, 2] = np.where(valid, 0.0, np.nan)
        return points, valid

    def to_image(self, points: NDArray[np.float64]
                 ) -> tuple[NDArray[np.float64], NDArray[np.bool_]]:
        """Points [N, 3] in target_frame -> (pixels [N, 2], in front of the camera [N])."""
        optical = (np.asarray(points, dtype=np.float64) - self.mounting.origin) @ \
            self.mounting.rotation
        in_front = optical[:, 2] > 1e-6
        pixels = np.full((len(optical), 2), np.nan)
        pixels[in_front] = self.intrinsics.project(optical[in_front])
        return pixels, in_front
