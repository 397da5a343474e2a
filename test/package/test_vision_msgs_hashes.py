"""
Check that the installed vision_msgs is wire-compatible with upstream vision_msgs 4.x.

On development machines vision_msgs is the dev-only copy built by ``dev/build_interfaces.sh``;
on a deployment it is the distro package. Either way the RIHS01 type hashes must equal the
upstream ones (table in the shared dev-environment notes), or DDS peers refuse to match.
"""

from __future__ import annotations

from collections.abc import Iterator
import json
import os
from pathlib import Path
import sys
import time
from typing import Any
import uuid

import pytest

# Upstream vision_msgs 4.x (ROS 2) RIHS01 hashes.
UPSTREAM_RIHS01: dict[str, str] = {
    'Detection2DArray': '214274120007f4a683866481336b70310268cfa107aebe9d594a6acf75bda968',
    'Detection2D': '0d12b69df5c593b3455b7346fac8205437a7d4bcb09b9e0e0b2dde787ded38ea',
    'ObjectHypothesisWithPose': '41c12344c0396c48b81df12467c192d99b2a0eb1463c5c37194e4223251c80bc',
    'ObjectHypothesis': '51da43cec11c01957a64d1e05a24acd18aae7745ec30b74348ad5f6d634f7f90',
    'BoundingBox2D': '008eacbb0cf8f26e83795547bed013eec3675485ef386ec056d80eaaf1c1ce2f',
    'Pose2D': 'b0b5d1d7b4c20dd4fcde3ed1d4b289a919290572007d67a97043814db25d3648',
    'Point2D': 'eab0e83f44ab4de92ceaf76dd7d0e7638f2bdd1d16ffbe16c7a136c48e407247',
    'LabelInfo': '3d37df4015cdf660cc851c51897f2acd957e1ca6205ba0a99aebffb9406b0783',
    'VisionClass': '1e4a11f0fed50b5623cb8ff26ca0e37952a48a9c074d16f804b44e9164c2037a',
}
TYPE_NAMES = sorted(UPSTREAM_RIHS01)

# Upper bound for discovery/delivery on one host; the waits return as soon as the condition holds.
TIMEOUT_S = 15.0

import vision_msgs.msg as vision_msgs_msg  # noqa: E402 (make setup builds dev/vision_msgs)


def expected(type_name: str) -> str:
    """Return the upstream hash of ``type_name`` in its ``RIHS01_<hex>`` string form."""
    return f'RIHS01_{UPSTREAM_RIHS01[type_name]}'


@pytest.fixture(scope='module', autouse=True)
def ament_index() -> Iterator[None]:
    """
    Point the ament index at the wheels' venv, the ROS underlay, when nothing was sourced.

    Point the ament index at it when the environment does not, before any node of this module
    starts.
    """
    with pytest.MonkeyPatch.context() as patch:
        if not os.environ.get('AMENT_PREFIX_PATH'):
            patch.setenv('AMENT_PREFIX_PATH', sys.prefix)
        yield


def spin_until(node: Any, condition: Any, timeout_s: float = TIMEOUT_S) -> bool:
    """Spin ``node`` until ``condition()`` is true or ``timeout_s`` elapses; return the result."""
    from rclpy.executors import SingleThreadedExecutor

    executor = SingleThreadedExecutor(context=node.context)
    executor.add_node(node)
    try:
        deadline = time.monotonic() + timeout_s
        while not condition():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return bool(condition())
            executor.spin_once(timeout_sec=min(0.1, remaining))
        return True
    finally:
        executor.remove_node(node)
        executor.shutdown()


@pytest.mark.parametrize('type_name', TYPE_NAMES)
def test_installed_interface_hash_matches_upstream(type_name: str) -> None:
    """The hash generated at build time (share/vision_msgs/msg/<Type>.json) equals upstream."""
    from ament_index_python.packages import get_package_share_directory

    share = Path(get_package_share_directory('vision_msgs'))
    description = json.loads((share / 'msg' / f'{type_name}.json').read_text())
    hashes = description['type_hashes']
    assert hashes[0]['type_name'] == f'vision_msgs/msg/{type_name}'
    assert hashes[0]['hash_string'] == expected(type_name)


@pytest.mark.ros
@pytest.mark.parametrize('type_name', TYPE_NAMES)
def test_runtime_type_support_hash_matches_upstream(ros_node: Any, type_name: str) -> None:
    """
    The hash the compiled type support announces over DDS equals upstream.

    rclpy has no direct accessor for a message class's hash; the graph API reports the hash
    the middleware got from the loaded type support, which is what remote peers compare.
    """
    msg_type = getattr(vision_msgs_msg, type_name)
    topic = f'/vision_msgs_hash_test/{type_name}_{uuid.uuid4().hex[:8]}'
    publisher = ros_node.create_publisher(msg_type, topic, 1)
    try:
        assert spin_until(ros_node, lambda: len(ros_node.get_publishers_info_by_topic(topic)) > 0)
        (info,) = ros_node.get_publishers_info_by_topic(topic)
        assert info.topic_type == f'vision_msgs/msg/{type_name}'
        assert str(info.topic_type_hash) == expected(type_name)
    finally:
        ros_node.destroy_publisher(publisher)


@pytest.mark.ros
def test_detection2d_array_round_trip(ros_node: Any) -> None:
    """A Detection2DArray published on a real topic arrives intact in the same process."""
    from vision_msgs.msg import Detection2D, Detection2DArray, ObjectHypothesisWithPose

    topic = f'/vision_msgs_hash_test/detections_{uuid.uuid4().hex[:8]}'
    received: list[Detection2DArray] = []
    subscription = ros_node.create_subscription(Detection2DArray, topic, received.append, 10)
    publisher = ros_node.create_publisher(Detection2DArray, topic, 10)
    try:
        assert spin_until(ros_node, lambda: publisher.get_subscription_count() > 0), \
            'subscription never matched the publisher'

        hypothesis = ObjectHypothesisWithPose()
        hypothesis.hypothesis.class_id = 'person'
        hypothesis.hypothesis.score = 0.875
        detection = Detection2D()
        detection.id = 'track-7'
        detection.results = [hypothesis]
        detection.bbox.center.position.x = 320.5
        detection.bbox.center.position.y = 240.25
        detection.bbox.center.theta = 0.5
        detection.bbox.size_x = 64.0
        detection.bbox.size_y = 128.0
        sent = Detection2DArray()
        sent.header.frame_id = 'camera_optical'
        sent.header.stamp.sec = 1234
        sent.header.stamp.nanosec = 5678
        sent.detections = [detection]

        publisher.publish(sent)
        assert spin_until(ros_node, lambda: len(received) > 0), 'message never arrived'
        assert received[0] == sent
    finally:
        ros_node.destroy_publisher(publisher)
        ros_node.destroy_subscription(subscription)
