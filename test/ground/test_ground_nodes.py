"""
Ground outputs of the real nodes, from no geometry to all four topics.

Nothing and a reason in /diagnostics without CameraInfo or a transform; the four ground topics once
both are known.
"""
from __future__ import annotations

import itertools
import math
from typing import Any, Iterator

from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import TransformStamped
from nav_msgs.msg import OccupancyGrid
import numpy as np
import pytest
from sensor_msgs.msg import CameraInfo, PointCloud2
from tf2_msgs.msg import TFMessage
from vision_msgs.msg import Detection2DArray, Detection3DArray
from visualization_msgs.msg import MarkerArray
import yaml

from support.highway_clip import CALIBRATION
from support.perception_nodes import (camera_info, image_message, latest_diagnostics,
                                      send_and_receive, start_node)
from support.ros_helpers import LATCHED, Probe, wait_until
from triton_perception.ground.ground_messages import read_ground_points
from triton_perception.system.processes import NodeProcess

pytestmark = [pytest.mark.ros, pytest.mark.server]
NS, FRAME = '/ground', 'front_optical'
GROUND_TOPICS = ('/ground/lanes/ground', '/ground/lanes/markers', '/ground/drivable_area/grid',
                 '/ground/detections/ground')


@pytest.fixture(scope='module')
def nodes(triton_server: Any, tmp_path_factory: Any) -> Iterator[list[NodeProcess]]:
    """Start lane_node and detection_node in /ground for the module; each must exit with 0."""
    started = [start_node(name, NS, triton_server, tmp_path_factory, diagnostics_period_s=0.2,
                          qos_reliability='reliable', qos_depth=5)
               for name in ('lane_node', 'detection_node')]
    yield started
    for node in started:
        assert node.stop() == 0, node.output()


def mounting() -> TFMessage:
    """base_link -> front_link (the clip's camera_pose, roll 0) -> front_optical (REP 103)."""
    pose = yaml.safe_load((CALIBRATION / 'camera_pose.yaml').read_text())
    x, y, z, _roll, pitch, yaw = pose['/**']['ros__parameters']['camera_pose']
    body = TransformStamped(child_frame_id='front_link')
    body.header.frame_id = 'base_link'
    body.transform.translation.x, body.transform.translation.y = x, y
    body.transform.translation.z = z
    sy, cy, sp, cp = (math.sin(yaw / 2), math.cos(yaw / 2), math.sin(pitch / 2),
                      math.cos(pitch / 2))
    rotation = body.transform.rotation
    rotation.x, rotation.y, rotation.z, rotation.w = -sy * sp, cy * sp, sy * cp, cy * cp
    optical = TransformStamped(child_frame_id=FRAME)
    optical.header.frame_id = 'front_link'
    rotation = optical.transform.rotation
    rotation.x, rotation.y, rotation.z, rotation.w = -0.5, 0.5, -0.5, 0.5
    return TFMessage(transforms=[body, optical])


def ground_reasons(diagnostics: list, contains: str) -> dict[str, str] | None:
    """Return both nodes' ground reasons once each contains `contains`, else None."""
    reasons = {node: (latest_diagnostics(diagnostics, f'{NS}/{node}') or {}).get('ground', '')
               for node in ('lane_node', 'detection_node')}
    return reasons if all(contains in reason for reason in reasons.values()) else None


def test_ground_outputs_follow_the_geometry(probe: Probe, nodes: list[NodeProcess],
                                            road_rgb: np.ndarray) -> None:  # noqa: F811
    """
    The nodes publish ground outputs only once they know the camera's calibration and mounting.

    Without CameraInfo and then without a transform, /diagnostics says why there are none; with
    both, all four ground topics arrive in base_link with a plausible lane width, grid and cars.
    """
    diagnostics = probe.received.get('/diagnostics') or probe.record(DiagnosticArray,
                                                                     '/diagnostics')
    ground = {topic: probe.record(kind, topic) for topic, kind in zip(
        GROUND_TOPICS, (PointCloud2, MarkerArray, OccupancyGrid, Detection3DArray))}
    detections = probe.record(Detection2DArray, f'{NS}/detections')
    clouds = probe.record(PointCloud2, f'{NS}/lanes')

    sent = []  # every frame's stamp: a node answers whichever frame it last took

    def frame_through_both(stamp: int) -> Any:
        """
        Both results of one frame.

        send_and_receive sends it again until each arrives (a node that has not yet matched the
        probe's publisher would never see it).
        """
        message = image_message(road_rgb, 'bgr8', FRAME, stamp)
        sent.append(message.header.stamp)
        send_and_receive(probe, f'{NS}/image', message, f'{NS}/lanes', PointCloud2, clouds)
        send_and_receive(probe, f'{NS}/image', message, f'{NS}/detections', Detection2DArray,
                         detections)
        return message

    # No CameraInfo: no ground outputs, and /diagnostics says why.
    frame_through_both(1)
    reasons = wait_until(lambda: ground_reasons(diagnostics, f'no CameraInfo on {NS}/camera_info'),
                         10.0, 'the missing CameraInfo in /diagnostics')
    assert all(not ground[topic] for topic in GROUND_TOPICS), reasons

    # CameraInfo but no transform (camera_pose unset): still nothing, another reason.
    info_publisher = probe.publisher(CameraInfo, f'{NS}/camera_info')
    probe.wait_for_subscribers(info_publisher, count=2)

    def with_camera_info(stamp: int) -> Any:
        """
        Publish CameraInfo again before each frame.

        A reader that has not matched the probe's writer yet misses a sample, as camera drivers'
        subscribers do.
        """
        info_publisher.publish(camera_info())
        return frame_through_both(stamp)
    stamps = itertools.count(2)  # a new stamp each time: an old result must not answer
    wait_until(lambda: (with_camera_info(next(stamps)), ground_reasons(
        diagnostics, f'no transform base_link <- {FRAME}'))[1], 40.0,
        'the missing transform in /diagnostics')
    assert all(not ground[topic] for topic in GROUND_TOPICS)

    # The mounting on /tf_static: all four ground outputs, stamped in base_link.
    tf_publisher = probe.publisher(TFMessage, '/tf_static', LATCHED)
    tf_publisher.publish(mounting())
    wait_until(lambda: (with_camera_info(next(stamps)), ground[GROUND_TOPICS[0]])[1], 40.0,
               'ground lanes')
    wait_until(lambda: all(ground[topic] for topic in GROUND_TOPICS), 10.0,
               'every ground output')
    for topic in GROUND_TOPICS:
        latest = ground[topic][-1]
        header = latest.markers[0].header if topic.endswith('markers') else latest.header
        # The input's stamp (of whichever frame each node last answered: one sent before the
        # mounting may be taken after it), in target_frame.
        assert header.frame_id == 'base_link' and header.stamp in sent, topic
    points = read_ground_points(ground[GROUND_TOPICS[0]][-1])
    left, right = points[points['side'] == -1], points[points['side'] == 1]
    width = np.median(left['y']) - np.median(right['y'])
    assert 3.0 <= width <= 4.4, width  # the clip's calibration makes the ego lane 3.7 m wide
    cells = np.frombuffer(bytes(ground[GROUND_TOPICS[2]][-1].data), dtype=np.int8)
    assert {0, 100, -1} <= set(np.unique(cells).tolist())
    cars = [d for d in ground[GROUND_TOPICS[3]][-1].detections
            if d.results[0].hypothesis.class_id == '2']  # car: LabelInfo names the id
    assert cars and all(5.0 < d.bbox.center.position.x < 100.0 for d in cars)
    wait_until(lambda: ground_reasons(diagnostics, f'on (TF base_link <- {FRAME})'), 10.0,
               'ground outputs on in /diagnostics')
