"""
Frames that finish out of order, as with `max_in_flight: 4`, keep the ids of frames in order.

A frame may finish after up to three that arrived after it. A late frame is not tracked (its ids
are empty, and it is counted); the frames tracked see the same ids as a tracker fed every frame
in order. First the camera's tracking alone, then detection_node's DetectionTracking called
from four threads at once, as its request threads call it (an rclpy node, no server).
"""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
import time
from typing import Any

import numpy as np
import pytest
from std_msgs.msg import Header

from support.tracking_scenes import Ego, Frame, render, WorldObject
from triton_perception.parameters import DETECTION, DetectionSettings
from triton_perception.tracking.camera_tracking import CameraTracking
from triton_perception.tracking.track_publishers import DetectionTracking

IN_FLIGHT = 4
RATE_HZ = 30.0


def scene() -> list[Frame]:
    """Return 3 s of three cars ahead at 30 Hz, seen clearly (no misses, no false positives)."""
    stamps = 1000.0 + np.arange(int(3 * RATE_HZ)) / RATE_HZ
    return render([WorldObject('lead', (30.0, 0.0), (8.0, 0.0)),
                   WorldObject('left', (15.0, 3.5), (13.0, 0.0)),
                   WorldObject('parked', (55.0, -3.5), (0.0, 0.0))], Ego(10.0), stamps, seed=4)


def finishing_order(count: int, seed: int) -> list[int]:
    """Return the order in which frames 0..count-1 finish when IN_FLIGHT are sent at once."""
    delays = np.random.default_rng(seed).uniform(0.0, IN_FLIGHT - 1, count)
    return sorted(range(count), key=lambda index: index + delays[index])


def tracked_ids(frames: list[Frame], order: list[int]) -> tuple[dict[int, list[str]], int]:
    """Track `frames` as they finish in `order` (arrival = index); return ids and late frames."""
    tracking = CameraTracking()
    ids = {}
    for index in order:
        frame = frames[index]
        ids[index] = (tracking.update(frame.stamp, frame.detections).published_ids(False)
                      if tracking.admits(float(index)) else [''] * len(frame.detections))
    return ids, tracking.late_frames


def assert_same_ids(in_order: dict[int, list[str]], out_of_order: dict[int, list[str]]) -> None:
    """Every id of a tracked frame is the one in order; no id is new; late frames have none."""
    assert {i for ids in out_of_order.values() for i in ids if i} == \
        {i for ids in in_order.values() for i in ids if i}
    for index, ids in out_of_order.items():
        for row, track_id in enumerate(ids):
            if track_id and in_order[index][row]:
                assert track_id == in_order[index][row], (index, ids, in_order[index])


@pytest.mark.parametrize('seed', range(5))
def test_frames_finishing_out_of_order_keep_the_ids_in_order(seed: int) -> None:
    """Late frames are counted and untracked; the others carry the in-order ids."""
    frames = scene()
    in_order, late_in_order = tracked_ids(frames, list(range(len(frames))))
    order = finishing_order(len(frames), seed)
    out_of_order, late = tracked_ids(frames, order)
    finished_after_a_later_one = sum(index < max(order[:position], default=-1)
                                     for position, index in enumerate(order))
    assert late_in_order == 0 and late == finished_after_a_later_one > 0
    assert_same_ids(in_order, out_of_order)
    assert sum(not any(ids) for ids in out_of_order.values()) <= late + 2  # + confirmation


def test_a_looped_bag_still_starts_the_tracks_again() -> None:
    """A frame that arrives after the others with an earlier stamp is tracked: time went back."""
    frames = scene()[:10]
    tracking = CameraTracking()
    first = [tracking.update(frame.stamp, frame.detections).boxes.ids
             for index, frame in enumerate(frames) if tracking.admits(float(index))]
    again = [tracking.update(frame.stamp, frame.detections).boxes.ids
             for index, frame in enumerate(frames) if tracking.admits(100.0 + index)]
    assert len(first) == len(again) == 10 and tracking.late_frames == 0
    assert not set(first[-1]) & set(again[-1])


class NoGeometry:
    """A camera geometry source that knows no camera: tracks stay in the image."""

    reason = 'no camera_info (test)'

    def camera(self, _frame_id: str) -> None:
        """Know no camera."""
        return None


def node_tracking(node: Any) -> DetectionTracking:
    """Return detection_node's tracking with default parameters on `node`."""
    settings = DetectionSettings.from_values(DETECTION, {})
    return DetectionTracking(node, lambda: settings, NoGeometry(),  # type: ignore[arg-type]
                             ['person', 'bicycle', 'car'], 10)


@pytest.mark.ros
def test_request_threads_finishing_out_of_order_keep_the_ids(ros_node: Any) -> None:
    """Four threads deliver as requests finish; the ids are those of frames in order."""
    frames = scene()
    delays = np.random.default_rng(7).uniform(0.0, 0.03, len(frames))

    def deliver(tracking: DetectionTracking, index: int, delay: float) -> list[str]:
        time.sleep(delay)  # the request's round trip
        header = Header(frame_id='cam')
        header.stamp.sec = int(frames[index].stamp)
        header.stamp.nanosec = int(round((frames[index].stamp % 1) * 1e9))
        ids = tracking.process(header, frames[index].detections.astype(np.float32),
                               float(index))
        assert ids is not None
        return ids

    in_order_tracking = node_tracking(ros_node)
    in_order = {index: deliver(in_order_tracking, index, 0.0) for index in range(len(frames))}
    tracking = node_tracking(ros_node)
    with ThreadPoolExecutor(IN_FLIGHT) as pool:
        futures = {index: pool.submit(deliver, tracking, index, delays[index])
                   for index in range(len(frames))}
        out_of_order = {index: future.result() for index, future in futures.items()}
    assert tracking.late_frames > 0
    assert_same_ids(in_order, out_of_order)
