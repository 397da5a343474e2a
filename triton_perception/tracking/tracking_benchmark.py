"""
The tracker's cost per frame: one update with 50 objects (the issue's target: under 1 ms).

Measured in-process on synthetic boxes (no server, no ROS), printed by `triton-perception
bench` and kept in its JSON; never asserted, since a shared CI machine's timing says little.
Here rather than under bench/ so that it imports neither rclpy nor tritonclient.
"""
from __future__ import annotations

import time
from typing import TypedDict

import numpy as np
from numpy.typing import NDArray

from triton_perception.ground import GroundCamera, Intrinsics, Mounting
from triton_perception.tracking.camera_tracking import CameraTracking

OBJECTS = 50
FRAMES = 300
WARMUP_FRAMES = 30
RATE_HZ = 30.0


def synthetic_frames(objects: int, frames: int,
                     seed: int = 0) -> list[NDArray[np.float64]]:
    """
    Make DETECTIONS per frame: `objects` boxes on straight image paths with pixel noise.

    They are spread over the lower half of a 1280x720 image, where boxes meet the ground.
    """
    random = np.random.default_rng(seed)
    start = np.column_stack([random.uniform(0, 1200, objects), random.uniform(380, 650, objects)])
    velocity = random.normal(0.0, 30.0, (objects, 2))
    size = random.uniform(20.0, 80.0, (objects, 1))
    boxes = []
    for index in range(frames):
        corner = start + velocity * index / RATE_HZ + random.normal(0.0, 1.0, (objects, 2))
        rows = np.column_stack([corner, corner + size, np.full(objects, 0.9),
                                np.full(objects, 2.0)])
        boxes.append(rows)
    return boxes


class TrackingTiming(TypedDict):
    """One tracker update's median and p95 ms, in the image and with ground motion."""

    objects: int
    frames: int
    image_ms: dict[str, float]
    with_ground_ms: dict[str, float]


def tracking_update_ms(objects: int = OBJECTS, frames: int = FRAMES) -> TrackingTiming:
    """
    Measure the median and p95 ms of one `CameraTracking.update`.

    Image tracks only, and with the ground motion of every box (the node's path when the
    camera geometry is known).
    """
    camera = GroundCamera(
        Intrinsics(np.array([[1000.0, 0.0, 640.0], [0.0, 1000.0, 360.0], [0.0, 0.0, 1.0]]),
                   np.zeros(0), 'plumb_bob', 1280, 720),
        Mounting.from_camera_pose([1.5, 0.0, 1.4, 0.0, 0.05, 0.0]))
    detections = synthetic_frames(objects, frames)
    timings: list[dict[str, float]] = []
    for geometry in (None, camera):
        tracking = CameraTracking()
        times = []
        for index, rows in enumerate(detections):
            began = time.perf_counter()
            tracking.update(1000.0 + index / RATE_HZ, rows, geometry)
            if index >= WARMUP_FRAMES:
                times.append((time.perf_counter() - began) * 1000.0)
        timings.append({'median': round(float(np.median(times)), 3),
                        'p95': round(float(np.percentile(times, 95)), 3)})
    return {'objects': objects, 'frames': frames - WARMUP_FRAMES, 'image_ms': timings[0],
            'with_ground_ms': timings[1]}


def tracking_line(figures: TrackingTiming) -> str:
    """One line for the bench's printout."""
    return (f"tracking: one update with {figures['objects']} objects: "
            f"{figures['image_ms']['median']:g} ms median / {figures['image_ms']['p95']:g} ms "
            f"p95 in the image, {figures['with_ground_ms']['median']:g} / "
            f"{figures['with_ground_ms']['p95']:g} ms with ground motion (target < 1 ms)")
