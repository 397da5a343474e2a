"""
detection_node with tracking, end to end.

Stable ids in detections and detections/ground, and autoware_perception_msgs/TrackedObjects with the
input's header, from the real node on the real tritonserver.
"""
from __future__ import annotations

import time
from typing import Any, Iterator

from autoware_perception_msgs.msg import TrackedObjects
from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import TransformStamped
import numpy as np
import pytest
from sensor_msgs.msg import CameraInfo
from tf2_msgs.msg import TFMessage
from vision_msgs.msg import Detection2DArray, Detection3DArray
import yaml

from support.highway_clip import CALIBRATION
from support.perception_nodes import (camera_info, image_message, latest_diagnostics,
                                      send_and_receive, start_node)
from support.ros_helpers import Probe, wait_until
from triton_perception.system.processes import NodeProcess

EGO_SPEED = 10.0  # m/s along odom x in the odometry test

pytestmark = [pytest.mark.ros, pytest.mark.server]
NS, FRAME = '/tracking', 'front_optical'
FRAMES = 8
RATE_HZ = 10


@pytest.fixture(scope='module')
def node(triton_server: Any, tmp_path_factory: Any) -> Iterator[NodeProcess]:
    """Start a detection_node in /tracking with the clip's camera_pose; it must exit with 0."""
    pose = yaml.safe_load((CALIBRATION / 'camera_pose.yaml').read_text())
    started = start_node('detection_node', NS, triton_server, tmp_path_factory,
                         diagnostics_period_s=0.2, qos_reliability='reliable', qos_depth=5,
                         camera_pose=pose['/**']['ros__parameters']['camera_pose'])
    yield started
    assert started.stop() == 0, started.output()


def test_tracking_publishes_stable_ids_and_tracked_objects(
        probe: Probe, node: NodeProcess, road_rgb: np.ndarray) -> None:  # noqa: F811
    """
    detection_node gives cars stable ids and publishes them as TrackedObjects.

    Ground detections carry the same ids; without odometry the objects are in base_link,
    relative to the vehicle, and /diagnostics says so.
    """
    detections = probe.record(Detection2DArray, f'{NS}/detections')
    ground = probe.record(Detection3DArray, f'{NS}/detections/ground')
    tracks = probe.record(TrackedObjects, f'{NS}/detections/tracks')
    diagnostics = probe.received.get('/diagnostics') or probe.record(DiagnosticArray,
                                                                     '/diagnostics')
    info_publisher = probe.publisher(CameraInfo, f'{NS}/camera_info')
    probe.wait_for_subscribers(info_publisher)
    answers = []
    for index in range(FRAMES):
        # The same road frame at 10 Hz: every box stays where it is.
        message = image_message(road_rgb, 'bgr8', FRAME, 100 + index // RATE_HZ)
        message.header.stamp.nanosec = (index % RATE_HZ) * (1_000_000_000 // RATE_HZ)
        info_publisher.publish(camera_info())
        answers.append(send_and_receive(probe, f'{NS}/image', message, f'{NS}/detections',
                                        Detection2DArray, detections))
    # Cars scoring enough to start a track (tracking_new_track_score, 0.45) all have an id.
    cars = [[d.id for d in answer.detections if d.results[0].hypothesis.class_id == '2'
             and d.results[0].hypothesis.score >= 0.45] for answer in answers]
    assert cars[-1] and all(cars[-1]), cars
    # Stable: the last frames carry the same ids (unconfirmed tracks publish none).
    assert all(sorted(ids) == sorted(cars[-1]) for ids in cars[-4:]), cars

    last = answers[-1]
    published = {d.id for d in last.detections if d.id}
    in_ground = wait_until(lambda: next((m for m in list(ground) if m.header.stamp ==
                                         last.header.stamp), None), 10.0, 'ground detections')
    assert {d.id for d in in_ground.detections if d.id} <= published
    assert {d.id for d in in_ground.detections if d.id}, 'no tracked car meets the ground'
    objects = wait_until(lambda: next((m for m in list(tracks) if m.header.stamp ==
                                       last.header.stamp), None), 10.0, 'tracked objects')
    # The input's stamp; no odometry in TF here, so in target_frame, relative to the vehicle.
    assert objects.header.frame_id == 'base_link'
    track_numbers = {int.from_bytes(bytes(o.object_id.uuid)[8:], 'big') for o in objects.objects}
    assert track_numbers == {int(d.id) for d in in_ground.detections if d.id}
    for tracked in objects.objects:
        twist = tracked.kinematics.twist_with_covariance
        assert np.hypot(twist.twist.linear.x, twist.twist.linear.y) < 1.0  # a still frame
        assert twist.covariance[0] > 0 and tracked.kinematics.pose_with_covariance.pose.\
            position.x > 3.0
    values = wait_until(lambda: (values := latest_diagnostics(
        diagnostics, f'{NS}/detection_node') or {}) and 'relative to the vehicle' in values.get(
        'tracking', '') and values, 10.0, 'relative velocities in /diagnostics')
    # Each frame was answered before the next was sent: none finished after a later one.
    assert values['tracking_late_frames'] == '0', values


def test_with_odometry_velocities_are_in_odom(
        probe: Probe, node: NodeProcess, road_rgb: np.ndarray) -> None:  # noqa: F811
    """
    The vehicle drives at 10 m/s (odom -> base_link on /tf) and the camera sees the same frame.

    Every car moves with the vehicle, so in odom at 10 m/s forward.
    """
    tracks = probe.record(TrackedObjects, f'{NS}/detections/tracks')
    detections = probe.record(Detection2DArray, f'{NS}/detections')
    diagnostics = probe.received.get('/diagnostics') or probe.record(DiagnosticArray,
                                                                     '/diagnostics')
    info_publisher = probe.publisher(CameraInfo, f'{NS}/camera_info')
    tf_publisher = probe.publisher(TFMessage, '/tf')
    probe.wait_for_subscribers(tf_publisher)
    last = None
    for index in range(20):
        message = image_message(road_rgb, 'bgr8', FRAME, 200 + index // RATE_HZ)
        message.header.stamp.nanosec = (index % RATE_HZ) * (1_000_000_000 // RATE_HZ)
        odometry = TransformStamped(child_frame_id='base_link')
        odometry.header.frame_id, odometry.header.stamp = 'odom', message.header.stamp
        odometry.transform.translation.x = EGO_SPEED * index / RATE_HZ
        odometry.transform.rotation.w = 1.0
        tf_publisher.publish(TFMessage(transforms=[odometry]))
        info_publisher.publish(camera_info())
        time.sleep(0.05)  # the pose first: without tf2_ros the node takes the latest
        last = send_and_receive(probe, f'{NS}/image', message, f'{NS}/detections',
                                Detection2DArray, detections)
    objects = wait_until(lambda: next((m for m in list(tracks) if m.header.stamp ==
                                       last.header.stamp), None), 10.0, 'tracked objects')
    assert objects.header.frame_id == 'odom' and objects.objects
    for tracked in objects.objects:
        linear = tracked.kinematics.twist_with_covariance.twist.linear
        assert abs(linear.x - EGO_SPEED) < 1.5 and abs(linear.y) < 1.0, linear
        assert not tracked.kinematics.is_stationary
    wait_until(lambda: 'velocities in odom' in (
        latest_diagnostics(diagnostics, f'{NS}/detection_node') or {}).get('tracking', ''),
        10.0, 'velocities in odom in /diagnostics')
