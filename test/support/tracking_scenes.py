"""
Synthetic traffic with known truth for the tracker tests.

Objects move in a fixed frame (odom), the ego vehicle drives, a calibrated camera mounted on it sees
them as boxes.

Boxes are the image bounds of each object's 3D box, so perspective, scale change and
occlusion are those of a real camera; detector noise, misses and false positives are added
with a seeded generator, so every run sees the same scene.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from triton_perception.ground.camera import GroundCamera, Intrinsics, Mounting
from triton_perception.tracking.ground_motion import Pose2D

WIDTH, HEIGHT = 1280, 720
# A 1280x720 camera of about 65 degrees horizontal field of view, 1.4 m up at the
# windscreen, pitched down 3 degrees.
CAMERA = GroundCamera(
    Intrinsics(np.array([[1000.0, 0.0, 640.0], [0.0, 1000.0, 360.0], [0.0, 0.0, 1.0]]),
               np.zeros(0), 'plumb_bob', WIDTH, HEIGHT),
    Mounting.from_camera_pose([1.5, 0.0, 1.4, 0.0, np.radians(3.0), 0.0]), 150.0)
CAR = (4.5, 1.8, 1.5)  # length, width, height (m)
PEDESTRIAN = (0.5, 0.6, 1.75)
# Objects hidden behind nearer ones beyond this fraction of their box are not detected and not
# in the truth (MOT benchmarks likewise leave mostly occluded objects out).
OCCLUDED = 0.5


@dataclass(frozen=True)
class WorldObject:
    """An object moving at constant velocity on the ground of odom, from t = 0."""

    name: str
    start: tuple[float, float]  # x, y (m) in odom at t = 0: the centre of its footprint
    velocity: tuple[float, float]  # m/s in odom
    size: tuple[float, float, float] = CAR
    class_id: int = 2  # COCO car

    def position(self, t: float) -> np.ndarray:
        """Return the footprint centre in odom at time t (s)."""
        return np.array(self.start) + np.array(self.velocity) * t


@dataclass(frozen=True)
class Ego:
    """The vehicle: straight along odom x at constant speed from the origin."""

    speed: float = 0.0

    def pose(self, t: float) -> Pose2D:
        """base_link in odom at time t (s)."""
        return Pose2D.from_xy_yaw(self.speed * t, 0.0, 0.0)


@dataclass
class Frame:
    """One camera frame: stamp, true boxes by object name, detections, ego pose."""

    stamp: float
    truth: dict[str, np.ndarray] = field(default_factory=dict)  # name -> (x1, y1, x2, y2)
    detections: np.ndarray = field(default_factory=lambda: np.zeros((0, 6)))
    ego: Pose2D = field(default_factory=Pose2D.identity)


def project(obj: WorldObject, t: float, ego: Pose2D) -> tuple[np.ndarray, float] | None:
    """Return the object's image box and distance (m) from the camera, or None when out of view."""
    length, width, height = obj.size
    centre = obj.position(t)
    corners = np.array([[dx, dy, dz] for dx in (-length / 2, length / 2)
                        for dy in (-width / 2, width / 2) for dz in (0.0, height)])
    corners[:, :2] += centre
    corners[:, :2] = (corners[:, :2] - ego.translation) @ ego.rotation
    pixels, in_front = CAMERA.to_image(corners)
    if not in_front.all():
        return None
    box = np.array([pixels[:, 0].min(), pixels[:, 1].min(), pixels[:, 0].max(),
                    pixels[:, 1].max()])
    clipped = np.clip(box, [0, 0, 0, 0], [WIDTH, HEIGHT, WIDTH, HEIGHT])
    area = (box[2] - box[0]) * (box[3] - box[1])
    clipped_area = (clipped[2] - clipped[0]) * (clipped[3] - clipped[1])
    if clipped_area < 0.7 * area or clipped[3] - clipped[1] < 8:
        return None
    distance = float(np.linalg.norm(corners[:, :2].mean(axis=0) - CAMERA.mounting.origin[:2]))
    return clipped, distance


def covered_fraction(box: np.ndarray, nearer: list[np.ndarray]) -> float:
    """Return the largest fraction of `box` any one nearer box covers."""
    area = (box[2] - box[0]) * (box[3] - box[1])
    best = 0.0
    for other in nearer:
        width = min(box[2], other[2]) - max(box[0], other[0])
        height = min(box[3], other[3]) - max(box[1], other[1])
        if width > 0 and height > 0:
            best = max(best, width * height / area)
    return best


def render(objects: list[WorldObject], ego: Ego, stamps: np.ndarray, seed: int = 0,
           pixel_noise: float = 0.02, miss_rate: float = 0.0,
           false_positives_per_frame: float = 0.0) -> list[Frame]:
    """
    Frames at `stamps` (s; the scene's t = 0 is the first stamp).

    Boxes jittered by `pixel_noise` x box height (each edge), each visible object missed with
    `miss_rate`, Poisson false positives of low-to-mid score.
    """
    random = np.random.default_rng(seed)
    frames = []
    for stamp in stamps:
        t = float(stamp - stamps[0])
        pose = ego.pose(t)
        seen = [(obj, *result) for obj in objects
                if (result := project(obj, t, pose)) is not None]
        seen.sort(key=lambda item: item[2])
        frame = Frame(float(stamp), ego=pose)
        rows, nearer = [], []
        for obj, box, _distance in seen:
            occluded = covered_fraction(box, nearer) > OCCLUDED
            nearer.append(box)
            if occluded:
                continue
            frame.truth[obj.name] = box
            if random.random() < miss_rate:
                continue
            jitter = random.normal(0.0, pixel_noise * (box[3] - box[1]), 4)
            score = float(np.clip(random.normal(0.8, 0.1), 0.3, 0.99))
            rows.append([*(box + jitter), score, obj.class_id])
        for _ in range(random.poisson(false_positives_per_frame)):
            x, y = random.uniform(0, WIDTH - 80), random.uniform(HEIGHT / 2, HEIGHT - 80)
            size = random.uniform(20, 80)
            rows.append([x, y, x + size, y + size, random.uniform(0.1, 0.65), 2])
        frame.detections = np.array(rows, dtype=np.float64).reshape(-1, 6)
        frames.append(frame)
    return frames
