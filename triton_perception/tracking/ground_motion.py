"""
Motion of tracked objects on the ground: velocity in a fixed frame and time to collision.

Each track's ground contact point is filtered with a constant-velocity Kalman filter in a frame
fixed to the world (`odom`), not in the vehicle's frame: in the vehicle's frame a parked car
seen from a moving vehicle moves, and its velocity there is the vehicle's, not the car's. When
no fixed frame is known the caller passes the identity pose, and the velocity is relative to
the vehicle (the node says so in /diagnostics).

The measurement covariance of a contact point comes from the camera geometry: a pixel of error
on the box's bottom edge moves a far point much more along the ray than across it.
"""
from __future__ import annotations

from dataclasses import dataclass
import math

import numpy as np
from numpy.typing import NDArray

from triton_perception.ground import GroundCamera
import triton_perception.tracking.kalman as kalman


@dataclass(frozen=True, kw_only=True)
class GroundMotionSettings:
    """Filter noise and the ego path used for the time to collision."""

    acceleration_std: float = 2.0  # m/s^2: white-noise acceleration of objects
    initial_velocity_std: float = 10.0  # m/s: a new track's velocity is unknown
    min_position_std: float = 0.05  # m: floor of a contact point's measurement noise
    lifetime_s: float = 1.0
    ego_half_width_m: float = 1.0  # half the vehicle's width: the ego path's half width
    ego_front_m: float = 0.0  # the vehicle's front in target_frame (x)


@dataclass(frozen=True)
class Pose2D:
    """The vehicle frame's pose in the fixed frame, on the ground plane."""

    rotation: NDArray[np.float64]  # 2x2
    translation: NDArray[np.float64]  # 2

    @classmethod
    def identity(cls) -> 'Pose2D':
        """Return the vehicle frame itself: velocities are then relative to the vehicle."""
        return cls(np.eye(2), np.zeros(2))

    @classmethod
    def from_matrix(cls, matrix: NDArray[np.float64]) -> 'Pose2D':
        """From a 4x4 transform fixed <- vehicle (e.g. odom <- base_link from TF)."""
        yaw = math.atan2(matrix[1, 0], matrix[0, 0])
        return cls.from_xy_yaw(float(matrix[0, 3]), float(matrix[1, 3]), yaw)

    @classmethod
    def from_xy_yaw(cls, x: float, y: float, yaw: float) -> 'Pose2D':
        """From a planar position (m) and heading (rad)."""
        cos, sin = math.cos(yaw), math.sin(yaw)
        return cls(np.array([[cos, -sin], [sin, cos]]), np.array([x, y]))

    @property
    def yaw(self) -> float:
        """Heading (rad) of the vehicle's x axis in the fixed frame."""
        return math.atan2(self.rotation[1, 0], self.rotation[0, 0])


@dataclass(frozen=True)
class GroundTrack:
    """A track's filtered motion at the last update."""

    track_id: str
    position: NDArray[np.float64]  # [2] in the fixed frame
    velocity: NDArray[np.float64]  # [2] in the fixed frame (m/s)
    position_covariance: NDArray[np.float64]  # 2x2
    velocity_covariance: NDArray[np.float64]  # 2x2
    relative_position: NDArray[np.float64]  # [2] in the vehicle frame
    relative_velocity: NDArray[np.float64]  # [2] in the vehicle frame (m/s)
    time_to_collision: float  # s; inf when not closing on the ego path


def contact_covariance(camera: GroundCamera, pixels: NDArray[np.float64],
                       pixel_std: NDArray[np.float64]) -> NDArray[np.float64]:
    """
    Compute the covariance [N, 2, 2] of ground points seen at `pixels` [N, 2].

    In the camera's target frame (x, y), for isotropic pixel noise `pixel_std` [N] (px), by the
    Jacobian of the pixel-to-ground projection (central differences). NaN where the ray misses
    the ground.
    """
    step = 0.5
    offsets = np.array([[step, 0.0], [-step, 0.0], [0.0, step], [0.0, -step]])
    count = len(pixels)
    probes = (pixels[:, None, :] + offsets[None]).reshape(-1, 2)
    points = camera.to_ground(probes)[0][:, :2].reshape(count, 4, 2)
    jacobian = np.stack([(points[:, 0] - points[:, 1]) / (2 * step),
                         (points[:, 2] - points[:, 3]) / (2 * step)], axis=2)
    covariance: NDArray[np.float64] = (pixel_std ** 2)[:, None, None] * (
        jacobian @ jacobian.transpose(0, 2, 1))
    return covariance


def time_to_collision(positions: NDArray[np.float64], velocities: NDArray[np.float64],
                      half_width: float, front: float = 0.0) -> NDArray[np.float64]:
    """
    Compute the seconds [N] until objects reach the vehicle's front in the ego path.

    Objects at `positions` [N, 2] moving at `velocities` [N, 2] (both relative, in the vehicle
    frame: x forward, y left) reach the front x = `front` inside |y| <= `half_width`; inf when
    not closing or passing beside the path. The path is straight ahead and the relative
    velocity constant, which is what a constant-velocity track predicts.
    """
    positions = np.asarray(positions, dtype=np.float64).reshape(-1, 2)
    velocities = np.asarray(velocities, dtype=np.float64).reshape(-1, 2)
    gap = positions[:, 0] - front
    closing = -velocities[:, 0]
    approaching = (gap > 0.0) & (closing > 0.0)
    seconds = np.zeros(len(gap))
    seconds[approaching] = gap[approaching] / closing[approaching]
    lateral = positions[:, 1] + velocities[:, 1] * seconds
    reaches = approaching | (gap <= 0.0)
    return np.where(reaches & (np.abs(lateral) <= half_width), seconds, math.inf)


class GroundMotion:
    """Fixed-frame constant-velocity filters of tracks' contact points, keyed by track id."""

    def __init__(self, settings: GroundMotionSettings = GroundMotionSettings()) -> None:
        """Start with no tracks and no ego motion."""
        self.settings = settings
        self._ids: list[str] = []
        self._mean = np.zeros((0, 4))
        self._covariance = np.zeros((0, 4, 4))
        self._last_seen = np.zeros(0)
        self._stamp: float | None = None
        self._ego: tuple[float, Pose2D] | None = None
        self._ego_velocity = np.zeros(2)
        self._ego_yaw_rate = 0.0

    def reset(self) -> None:
        """Forget every track and the vehicle's motion (time went backwards)."""
        self.__init__(self.settings)  # type: ignore[misc]

    def update(self, stamp: float, track_ids: list[str], points: NDArray[np.float64],
               covariances: NDArray[np.float64], vehicle: Pose2D) -> list[GroundTrack]:
        """
        Filter one frame's contact points; return the measured tracks.

        Contact `points` [N, 2] and their `covariances` [N, 2, 2], both in the vehicle frame,
        for `track_ids` (N, distinct, non-empty); `vehicle` is the vehicle frame's pose in the
        fixed frame at `stamp` (s).
        """
        if self._stamp is not None and stamp < self._stamp:
            self.reset()
        dt = 0.0 if self._stamp is None else stamp - self._stamp
        self._stamp = stamp
        self._ego_motion(stamp, vehicle)
        keep = stamp - self._last_seen <= self.settings.lifetime_s
        self._ids = [track_id for track_id, kept in zip(self._ids, keep.tolist()) if kept]
        self._mean, self._covariance = kalman.predict(
            self._mean[keep], self._covariance[keep], dt,
            np.full((len(self._ids), 2), self.settings.acceleration_std))
        self._last_seen = self._last_seen[keep]

        fixed_points = np.asarray(points, dtype=np.float64).reshape(-1, 2) @ \
            vehicle.rotation.T + vehicle.translation
        noise = np.eye(2) * self.settings.min_position_std ** 2
        fixed_covariances = vehicle.rotation @ np.asarray(covariances).reshape(-1, 2, 2) @ \
            vehicle.rotation.T + noise
        rows = self._rows(track_ids)
        known = np.flatnonzero(rows >= 0)
        self._mean[rows[known]], self._covariance[rows[known]] = kalman.update(
            self._mean[rows[known]], self._covariance[rows[known]], fixed_points[known],
            fixed_covariances[known])
        self._add(track_ids, np.flatnonzero(rows < 0), fixed_points, fixed_covariances, stamp)
        index = {track_id: row for row, track_id in enumerate(self._ids)}
        rows = np.array([index[track_id] for track_id in track_ids], dtype=np.int64)
        self._last_seen[rows] = stamp
        return self._tracks(rows, vehicle)

    def _rows(self, track_ids: list[str]) -> NDArray[np.int64]:
        index = {track_id: row for row, track_id in enumerate(self._ids)}
        return np.array([index.get(track_id, -1) for track_id in track_ids], dtype=np.int64)

    def _add(self, track_ids: list[str], new: NDArray[np.intp], points: NDArray[np.float64],
             covariances: NDArray[np.float64], stamp: float) -> None:
        if len(new) == 0:
            return
        mean, covariance = kalman.initial_state(
            points[new], np.ones((len(new), 2)),
            np.full((len(new), 2), self.settings.initial_velocity_std))
        covariance[:, :2, :2] = covariances[new]
        self._ids.extend(track_ids[row] for row in new.tolist())
        self._mean = np.concatenate([self._mean, mean])
        self._covariance = np.concatenate([self._covariance, covariance])
        self._last_seen = np.concatenate([self._last_seen, np.full(len(new), stamp)])

    def _ego_motion(self, stamp: float, vehicle: Pose2D) -> None:
        """Update the vehicle's velocity and yaw rate in the fixed frame from its poses."""
        if self._ego is not None and stamp > self._ego[0]:
            previous_stamp, previous = self._ego
            dt = stamp - previous_stamp
            self._ego_velocity = (vehicle.translation - previous.translation) / dt
            turn = vehicle.yaw - previous.yaw
            self._ego_yaw_rate = math.atan2(math.sin(turn), math.cos(turn)) / dt
        self._ego = (stamp, vehicle)

    def _tracks(self, rows: NDArray[np.int64], vehicle: Pose2D) -> list[GroundTrack]:
        positions, velocities = self._mean[rows, :2], self._mean[rows, 2:]
        relative_positions = (positions - vehicle.translation) @ vehicle.rotation
        # d/dt of R^T (p - t): the vehicle frame turns with the yaw rate.
        rate = self._ego_yaw_rate
        relative_velocities = (velocities - self._ego_velocity) @ vehicle.rotation + \
            rate * np.stack([relative_positions[:, 1], -relative_positions[:, 0]], axis=1)
        collisions = time_to_collision(relative_positions, relative_velocities,
                                       self.settings.ego_half_width_m, self.settings.ego_front_m)
        covariances = self._covariance[rows]
        return [GroundTrack(self._ids[row], positions[index], velocities[index],
                            covariances[index, :2, :2], covariances[index, 2:, 2:],
                            relative_positions[index], relative_velocities[index],
                            float(collisions[index]))
                for index, row in enumerate(rows.tolist())]
