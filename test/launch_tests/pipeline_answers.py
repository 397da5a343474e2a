"""
pipeline.launch.py tested the ROS-standard way, with launch_testing.

Launch the whole pipeline (tritonserver, readiness gate, detection_node, lane_node), check that a
camera frame gets detections and lanes, then that every process exited cleanly.

    launch_test test/launch_tests/pipeline_answers.py

Needs the package in the ament index (colcon install space, or the development venv:
AMENT_PREFIX_PATH=.venv) and the model weights installed; test_ros2_cli.py runs it.
"""
from __future__ import annotations

from pathlib import Path
import time
import unittest

import cv2
from diagnostic_msgs.msg import DiagnosticArray
from launch import LaunchDescription
from launch.actions import IncludeLaunchDescription
from launch.launch_description_sources import PythonLaunchDescriptionSource
import launch_testing
import launch_testing.actions
import launch_testing.asserts
import pytest
import rclpy
from rclpy.serialization import deserialize_message
from sensor_msgs.msg import Image, PointCloud2
from std_msgs.msg import Header
from vision_msgs.msg import Detection2DArray

from triton_perception.frames.diagnostics import find_status
from triton_perception.outputs import image_cdr
from triton_perception.system.paths import DEFAULT_CLIP
from triton_perception.system.processes import free_ports

REPO = Path(__file__).resolve().parents[2]
NAMESPACE = '/launch_test'
NODES = (f'{NAMESPACE}/detection_node', f'{NAMESPACE}/lane_node')
VIDEO = DEFAULT_CLIP


@pytest.mark.launch_test
def generate_test_description() -> LaunchDescription:
    """
    Launch pipeline.launch.py with the CPU profile on free ports, in the test namespace.

    The tests are ready at once: the first waits for the nodes itself.
    """
    http_port, grpc_port, metrics_port = free_ports(3)
    pipeline = IncludeLaunchDescription(
        PythonLaunchDescriptionSource(str(REPO / 'launch' / 'pipeline.launch.py')),
        launch_arguments={'profile': 'cpu', 'namespace': NAMESPACE,
                          'camera_topic': f'{NAMESPACE}/camera/image_raw',
                          'enable_overlay': 'false', 'grpc_port': str(grpc_port),
                          'http_port': str(http_port), 'metrics_port': str(metrics_port)}.items())
    return LaunchDescription([pipeline, launch_testing.actions.ReadyToTest()])


def spin_until(node: rclpy.node.Node, condition, timeout_s: float, what: str) -> None:
    """Spin `node` until `condition()` holds; fail naming `what` after `timeout_s`."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        rclpy.spin_once(node, timeout_sec=0.1)
        if condition():
            return
    raise AssertionError(f'timed out after {timeout_s:g} s waiting for {what}')


class TestPipelineAnswers(unittest.TestCase):
    """The launched pipeline, seen from a probe node while it runs."""

    @classmethod
    def setUpClass(cls) -> None:
        """Create the probe node (rclpy's default context)."""
        rclpy.init()
        cls.node = rclpy.create_node('pipeline_launch_test_probe')

    @classmethod
    def tearDownClass(cls) -> None:
        """Destroy the probe node and shut rclpy down."""
        cls.node.destroy_node()
        rclpy.shutdown()

    def test_a_camera_frame_gets_detections_and_lanes(self, proc_output) -> None:
        """
        A camera frame gets detections and lanes once both nodes report Triton ready.

        The launch file alone wires server, gate and nodes into a pipeline that answers.
        """
        reports, detections, lanes = [], [], []
        self.node.create_subscription(DiagnosticArray, '/diagnostics', reports.append, 50)
        self.node.create_subscription(Detection2DArray, f'{NAMESPACE}/detections',
                                      detections.append, 10)
        self.node.create_subscription(PointCloud2, f'{NAMESPACE}/lanes', lanes.append, 10)
        camera = self.node.create_publisher(Image, f'{NAMESPACE}/camera/image_raw', 10)
        spin_until(self.node, lambda: all(
            (status := find_status(reports, node)) is not None and status.triton_ready
            for node in NODES), 240.0, 'both nodes active with Triton ready')
        capture = cv2.VideoCapture(str(VIDEO))
        ok, bgr = capture.read()
        capture.release()
        self.assertTrue(ok, f'cannot read {VIDEO}')
        # The Image as the camera driver would publish it (launch_test runs this file alone,
        # without the suite's test/support on its path).
        frame = deserialize_message(image_cdr(bgr, Header(frame_id='camera'), 'bgr8'), Image)

        def answered() -> bool:
            camera.publish(frame)
            return bool(detections) and bool(lanes)
        spin_until(self.node, answered, 60.0, 'detections and lanes')
        proc_output.assertWaitFor('active: subscribed to', timeout=5, stream='stderr')


@launch_testing.post_shutdown_test()
class TestCleanShutdown(unittest.TestCase):
    """The launched processes after the launch has shut down."""

    def test_every_process_exited_cleanly(self, proc_info) -> None:
        """Every launched process exits with 0 once the launch shuts down: none crashed."""
        launch_testing.asserts.assertExitCodes(proc_info)
