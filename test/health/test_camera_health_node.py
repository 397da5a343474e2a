"""
A live detection_node publishes its camera's health on /diagnostics (real node, real DDS, Triton).

Clean clip frames keep the camera OK; a covered lens turns it ERROR `blocked` while detections
keep being published; the clean frames bring it back to OK.
"""
from __future__ import annotations

import time
from typing import Any, Iterator

import cv2
from diagnostic_msgs.msg import DiagnosticArray
import numpy as np
import pytest
from sensor_msgs.msg import Image
from std_msgs.msg import Header
from vision_msgs.msg import Detection2DArray

from support.checkout import shared_path
from support.published_messages import image_message
from support.ros_helpers import Probe, RELIABLE, wait_until
from triton_perception.frames.diagnostics import find_camera_status, NodeStatus
from triton_perception.health.degradation import cover, video_frames
from triton_perception.system.processes import NodeProcess, ros_arguments

pytestmark = [pytest.mark.ros, pytest.mark.server]

NAMESPACE = '/health'
TOPIC = f'{NAMESPACE}/image'
PERIOD_S = 1.0 / 30.0


@pytest.fixture(scope='module')
def frames() -> list[np.ndarray]:
    """Return the first 90 frames of the clip at 480x270 (3 s at 30 Hz)."""
    clip = video_frames(str(shared_path('data', 'videos', 'solidWhiteRight.mp4')))[:90]
    return [cv2.resize(frame, (480, 270), interpolation=cv2.INTER_AREA) for frame in clip]


@pytest.fixture(scope='module')
def node(triton_server: Any, tmp_path_factory: Any) -> Iterator[NodeProcess]:
    """Start a reliable detection_node in /health, reporting every 0.2 s, clearing after 0.5 s."""
    process = NodeProcess('detection_node', ros_arguments(
        {'triton_url': triton_server.grpc_url, 'qos_reliability': 'reliable',
         'diagnostics_period_s': 0.2, 'health_clear_hold_s': 0.5}, namespace=NAMESPACE),
        tmp_path_factory.mktemp('health_node'))
    yield process
    assert process.stop() == 0, process.output()


def play(probe: Probe, frames: list[np.ndarray], start_stamp: float) -> None:
    """Publish `frames` at 30 Hz with header stamps from `start_stamp` on."""
    publisher = probe.publisher(Image, TOPIC, RELIABLE)
    for index, frame in enumerate(frames):
        stamp = start_stamp + index * PERIOD_S
        header = Header(frame_id='camera')
        header.stamp.sec, header.stamp.nanosec = int(stamp), int(stamp % 1.0 * 1e9)
        publisher.publish(image_message(frame, header, 'rgb8'))
        time.sleep(PERIOD_S)


def newest(diagnostics: list[DiagnosticArray], since: int) -> NodeStatus | None:
    """Return the camera's newest status among the arrays recorded from index `since` on."""
    return find_camera_status(diagnostics[since:], TOPIC)


def test_the_camera_status_follows_a_covered_lens(probe: Probe, node: NodeProcess,
                                                  frames: list[np.ndarray]) -> None:
    """OK on the clean clip, ERROR blocked while covered (results still published), OK after."""
    diagnostics = probe.record(DiagnosticArray, '/diagnostics')
    detections = probe.record(Detection2DArray, f'{NAMESPACE}/detections')
    wait_until(lambda: probe.node.count_subscribers(TOPIC) >= 1, 30.0, 'the node subscribed')
    play(probe, frames, 100.0)
    start = len(diagnostics)
    clean = wait_until(lambda: newest(diagnostics, start), 10.0, 'a camera status')
    assert clean.level == 0, (clean.message, clean.values)
    assert int(clean.values['frames']) >= len(frames) * 0.9, clean.values

    published = len(detections)
    play(probe, [cover(frame, 1.0) for frame in frames[:30]], 104.0)
    start = len(diagnostics)
    covered = wait_until(lambda: (status := newest(diagnostics, start)) is not None
                         and status.level == 2 and status, 10.0, 'an ERROR camera status')
    assert covered.values['blocked'] == 'ERROR', (covered.message, covered.values)
    assert 'blocked' in covered.message
    assert len(detections) > published, 'results must keep coming while the camera is ERROR'

    play(probe, frames[:45], 106.0)
    start = len(diagnostics)
    recovered = wait_until(lambda: (status := newest(diagnostics, start)) is not None
                           and status.level == 0 and status, 10.0, 'the camera back to OK')
    assert recovered.values['blocked'] == 'OK'
