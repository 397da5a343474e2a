"""
Frames taken serialized by running nodes: unreadable bytes are counted by reason, the rest served.

Real Fast DDS and tritonserver. The probe publishes serialized bytes (rclpy's publish of
``bytes``), so it can send what no rclpy message could be: big-endian CDR, a message cut short,
a lying length, a string without its NUL. A detection_node of its own and a perception_process
(whose camera subscription reads a frame once for both its nodes) each count every such frame
as rejected with its reason, and then serve a good frame with its header unchanged.
"""
from __future__ import annotations

from typing import Any, Iterator

from diagnostic_msgs.msg import DiagnosticArray
import numpy as np
import pytest
from rclpy.serialization import serialize_message
from sensor_msgs.msg import Image
from vision_msgs.msg import Detection2DArray

from support.perception_nodes import image_message, latest_diagnostics
from support.ros_helpers import BEST_EFFORT, Probe, wait_until
from triton_perception.system.processes import NodeProcess, ros_arguments

pytestmark = [pytest.mark.ros, pytest.mark.server]


def unreadable(good: bytes) -> dict[str, bytes]:
    """Return damaged copies of `good` (frame_id 'cam': its NUL is byte 19), by reason."""
    return {'big_endian': b'\x00\x00' + good[2:], 'truncated': good[:10],
            'bad_length': good[:-1], 'bad_string': good[:19] + b'X' + good[20:],
            'trailing_bytes': good + bytes(8)}


@pytest.fixture(scope='module', params=['detection_node', 'perception_process'])
def serving(request: Any, triton_server: Any,
            tmp_path_factory: Any) -> Iterator[tuple[str, list[str]]]:
    """Start one layout in a namespace of its own; yield it and its detection nodes' names."""
    namespace = f'/serialized_{request.param}'
    parameters = {'triton_url': triton_server.grpc_url, 'qos_reliability': 'reliable',
                  'qos_depth': 20, 'diagnostics_period_s': 0.2}
    if request.param == 'detection_node':
        process = NodeProcess('detection_node', ros_arguments(parameters, namespace=namespace),
                              tmp_path_factory.mktemp('detection_node'))
        nodes = [f'{namespace}/detection_node']
    else:
        process = NodeProcess(
            'perception_process', [f'--camera={namespace}={namespace}/image', '--no-overlay',
                                   *ros_arguments(parameters)],
            tmp_path_factory.mktemp('perception_process'))
        nodes = [f'{namespace}/detection_node', f'{namespace}/lane_node']
    yield namespace, nodes
    assert process.stop() == 0, process.output()


def test_unreadable_frames_are_rejected_by_reason_and_good_ones_served(
        probe: Probe, serving: tuple[str, list[str]], road_rgb: np.ndarray) -> None:
    """Each unreadable message is one rejection per node, by its reason; a good frame is served."""
    namespace, nodes = serving
    diagnostics = probe.received.get('/diagnostics') or probe.record(DiagnosticArray,
                                                                     '/diagnostics')
    detections = probe.record(Detection2DArray, f'{namespace}/detections')
    publisher = probe.publisher(Image, f'{namespace}/image')
    probe.wait_for_subscribers(publisher, timeout_s=120.0)
    before = {node: wait_until(lambda node=node: latest_diagnostics(diagnostics, node), 60.0,
                               f'diagnostics of {node}') for node in nodes}
    good = image_message(road_rgb, 'bgr8', 'cam', 7000)
    damaged = unreadable(serialize_message(good))
    for raw in damaged.values():
        publisher.publish(raw)

    def rejected_all(node: str) -> dict[str, str] | None:
        values = latest_diagnostics(diagnostics, node)
        delta = int(values['rejected']) - int(before[node]['rejected'])
        return values if delta >= len(damaged) else None
    for node in nodes:
        after = wait_until(lambda node=node: rejected_all(node), 20.0, f'rejections by {node}')
        for reason in damaged:
            counted = int(after.get(f'count rejected: {reason}', 0))
            assert counted - int(before[node].get(f'count rejected: {reason}', 0)) == 1, (
                node, reason, after)
    publisher.publish(serialize_message(good))
    wait_until(lambda: any(found.header == good.header for found in list(detections)), 30.0,
               'the good frame after the unreadable ones, with its header')


def test_overlay_node_draws_frames_taken_serialized_and_skips_unreadable_ones(
        probe: Probe, road_rgb: np.ndarray, tmp_path_factory: Any) -> None:
    """
    overlay_node takes its camera serialized too: unreadable bytes are skipped, a frame drawn.

    With no results expected it draws each frame at once, so the overlay is the frame itself in
    rgb8, with the frame's header.
    """
    namespace = '/serialized_overlay'
    process = NodeProcess('overlay_node', ros_arguments(
        {'expect_detections': False, 'expect_lanes': False, 'qos_reliability': 'reliable'},
        namespace=namespace), tmp_path_factory.mktemp('overlay_node'))
    try:
        overlays = probe.record(Image, f'{namespace}/overlay', BEST_EFFORT)
        publisher = probe.publisher(Image, f'{namespace}/image')
        probe.wait_for_subscribers(publisher, timeout_s=60.0)  # it subscribes once watched
        good = image_message(road_rgb, 'bgr8', 'cam', 7100)
        for raw in unreadable(serialize_message(good)).values():
            publisher.publish(raw)
        publisher.publish(good)
        overlay = wait_until(lambda: next((o for o in list(overlays)
                                           if o.header == good.header), None),
                             20.0, 'the overlay of the good frame')
        assert (overlay.width, overlay.height, overlay.encoding) == (960, 540, 'rgb8')
        drawn = np.frombuffer(bytes(overlay.data), np.uint8).reshape(540, 960, 3)
        np.testing.assert_array_equal(drawn, road_rgb)
        assert len(overlays) == 1, 'an unreadable frame was drawn'
    finally:
        assert process.stop() == 0, process.output()
