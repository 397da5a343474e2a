"""
Frames lost before the node against the image subscription's depth (development measurement).

Starts a real tritonserver (CPU profile) and detection_node, keeps one core busy with a CPU hog,
publishes 1280x720 rgb8 frames best-effort at 25 Hz for a while per depth, and prints what the
node's /diagnostics say: received and lost before the node (sequence gaps).

    .venv/bin/python dev/measure_reader_depth.py --depths 1 3 10 --seconds 60
"""
from __future__ import annotations

import argparse
import os
from pathlib import Path
import subprocess
import sys
import tempfile
import time

REPO = Path(__file__).resolve().parents[1]
os.environ.setdefault('ROS_DOMAIN_ID', str(os.getpid() % 100))
os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
os.environ.setdefault('ROS_LOG_DIR', tempfile.mkdtemp(prefix='reader-depth-log-'))

from diagnostic_msgs.msg import DiagnosticArray  # noqa: E402
import numpy as np  # noqa: E402
import rclpy  # noqa: E402
from rclpy.qos import QoSProfile, ReliabilityPolicy  # noqa: E402
from sensor_msgs.msg import Image  # noqa: E402
from std_msgs.msg import Header  # noqa: E402

from triton_perception.frames.diagnostics import find_status  # noqa: E402
from triton_perception.outputs.result_messages import image_message  # noqa: E402
from triton_perception.serving.server.server_config import ServerConfig  # noqa: E402
from triton_perception.serving.server.triton_server import TritonServer  # noqa: E402
from triton_perception.system.paths import dds_profile_environment  # noqa: E402
from triton_perception.system.processes import free_ports, NodeProcess, ros_arguments  # noqa: E402

os.environ.update(dds_profile_environment())


def spin_for(node, seconds: float) -> None:
    """Spin `node` for `seconds` s, in 10 ms steps."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        rclpy.spin_once(node, timeout_sec=0.01)


def measure(depth: int, seconds: float, triton_url: str, logs: Path, node) -> dict:
    """
    Run detection_node with image subscription depth `depth` under 25 Hz 720p frames.

    Frames go out best-effort for `seconds` s; the node's /diagnostics then say how many it
    received, lost before its callback, published and dropped.

    Returns the figures for this depth, with frames the node never saw (`unseen`).
    """
    namespace = f'/depth{depth}'
    detection = NodeProcess('detection_node', ros_arguments(
        {'triton_url': triton_url, 'qos_depth': depth, 'diagnostics_period_s': 0.5},
        namespace=namespace), logs)
    reports: list = []
    node.create_subscription(DiagnosticArray, '/diagnostics', reports.append, 50)
    publisher = node.create_publisher(Image, f'{namespace}/image', QoSProfile(
        depth=1, reliability=ReliabilityPolicy.BEST_EFFORT))
    fqn = f'{namespace}/detection_node'
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not (
                publisher.get_subscription_count() and (status := find_status(reports, fqn))
                and status.triton_ready):
            spin_for(node, 0.1)
        frame = np.random.default_rng(0).integers(0, 255, (720, 1280, 3), dtype=np.uint8)
        start, sent = time.monotonic(), 0
        while (target := start + sent / 25.0) < start + seconds:
            if (delay := target - time.monotonic()) > 0:
                spin_for(node, delay)
            message = image_message(frame, Header(frame_id='camera'), 'rgb8')
            publisher.publish(message)
            sent += 1
        spin_for(node, 3.0)
        status = find_status(reports, fqn)
        return {'depth': depth, 'sent': sent, 'received': status.count('received'),
                'lost_before_node': status.count('lost_before_node'),
                'unseen': sent - status.seen, 'published': status.count('published'),
                'dropped': status.count('dropped'), 'method': status.values.get('loss_counting')}
    finally:
        node.destroy_publisher(publisher)
        detection.stop()


def main() -> int:
    """Measure each `--depths` value against a CPU-profile Triton, with a busy-loop CPU hog."""
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument('--depths', type=int, nargs='+', default=[1, 3, 10])
    parser.add_argument('--seconds', type=float, default=60.0)
    parser.add_argument('--no-hog', action='store_true')
    arguments = parser.parse_args()
    logs = Path(tempfile.mkdtemp(prefix='reader-depth-'))
    http, grpc, metrics = free_ports(3)
    hog = None if arguments.no_hog else subprocess.Popen(['sh', '-c', 'while :; do :; done'])
    try:
        with TritonServer(ServerConfig(model_repository=REPO / 'model_repository', profile='cpu',
                                       http_port=http, grpc_port=grpc, metrics_port=metrics,
                                       ready_timeout_s=300), log=lambda _line: None,
                          show_server_log=False) as server:
            rclpy.init()
            node = rclpy.create_node('reader_depth_publisher')
            for depth in arguments.depths:
                print(measure(depth, arguments.seconds, server.grpc_url, logs, node), flush=True)
            node.destroy_node()
            rclpy.shutdown()
    finally:
        if hog is not None:
            hog.kill()
    return 0


if __name__ == '__main__':
    sys.exit(main())
