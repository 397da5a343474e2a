"""
A running overlay_node sent results it cannot draw: each is counted, the node lives on.

Any publisher may send overlay_node valid messages it cannot draw: a Detection2D without results
(valid in vision_msgs) and a lanes cloud whose width disagrees with its data. Each frame they
belong to is counted as rejected with its reason in the overlay's /diagnostics, no overlay of it
is published, the process lives, and the next frame's overlay is published. Real Fast DDS and a
real overlay_node; no server.
"""
from __future__ import annotations

import time
from typing import Any, Iterator

from diagnostic_msgs.msg import DiagnosticArray
import numpy as np
import pytest
from sensor_msgs.msg import Image, PointCloud2
from std_msgs.msg import Header
from vision_msgs.msg import Detection2D, Detection2DArray

from support.perception_nodes import image_message as frame_message, latest_diagnostics
from support.published_messages import detection_array_message, image_message
from support.ros_helpers import BEST_EFFORT, Probe, wait_until
from triton_perception.outputs.result_messages import lanes_cloud_message
from triton_perception.system.processes import NodeProcess, ros_arguments

pytestmark = [pytest.mark.ros]
NAMESPACE = '/overlay_faults'
BOX = np.array([[100, 100, 300, 250, 0.9, 2]], dtype=np.float32)
LANE = np.array([[[200, 500], [300, 400], [400, 300]]], dtype=np.float32)


@pytest.fixture(scope='module')
def overlay(tmp_path_factory: Any) -> Iterator[NodeProcess]:
    """Start an overlay_node that waits for detections, lanes and the drivable area."""
    process = NodeProcess('overlay_node', ros_arguments(
        {'expect_detections': True, 'expect_lanes': True, 'qos_reliability': 'reliable',
         'diagnostics_period_s': 0.2}, namespace=NAMESPACE),
        tmp_path_factory.mktemp('overlay_node'))
    yield process
    assert process.stop() == 0, process.output()


def results(stamp_s: int, shape: tuple[int, int]) -> dict[str, Any]:
    """Return drawable detections, lanes and drivable area for the frame stamped `stamp_s`."""
    header = Header(frame_id='cam')
    header.stamp.sec, header.stamp.nanosec = stamp_s, 123456789  # as frame_message stamps
    mask = np.zeros(shape, np.uint8)
    mask[shape[0] // 2:] = 255
    return {'detections': detection_array_message(BOX, header),
            'lanes': lanes_cloud_message(LANE, np.array([0.9], np.float32),
                                         np.array([-1], np.int8), header),
            'drivable_area': image_message(mask, header, 'mono8')}


def test_results_it_cannot_draw_are_counted_and_the_next_frame_is_drawn(
        probe: Probe, overlay: NodeProcess, road_rgb: np.ndarray) -> None:
    """An empty Detection2D and a too-wide lanes cloud: two rejections, then an overlay."""
    overlays = probe.record(Image, f'{NAMESPACE}/overlay', BEST_EFFORT)
    diagnostics = probe.received.get('/diagnostics') or probe.record(DiagnosticArray,
                                                                     '/diagnostics')
    camera = probe.publisher(Image, f'{NAMESPACE}/image')
    publishers = {'detections': probe.publisher(Detection2DArray, f'{NAMESPACE}/detections'),
                  'lanes': probe.publisher(PointCloud2, f'{NAMESPACE}/lanes'),
                  'drivable_area': probe.publisher(Image, f'{NAMESPACE}/drivable_area')}
    for publisher in (camera, *publishers.values()):  # it subscribes once watched
        probe.wait_for_subscribers(publisher, timeout_s=60.0)
    shape = road_rgb.shape[:2]
    empty = results(1, shape)
    empty['detections'].detections.append(Detection2D(header=empty['detections'].header))
    wide = results(2, shape)
    wide['lanes'].width += 5
    good = results(3, shape)
    for stamp, messages in ((1, empty), (2, wide), (3, good)):
        for topic, message in messages.items():
            publishers[topic].publish(message)
        time.sleep(0.3)  # the results wait for their frame
        camera.publish(frame_message(road_rgb, 'rgb8', 'cam', stamp))
        time.sleep(0.3)
    drawn = wait_until(lambda: [o.header.stamp.sec for o in list(overlays)], 20.0,
                       'the overlay of the drawable frame')
    counted = wait_until(
        lambda: (values := latest_diagnostics(diagnostics, f'{NAMESPACE}/overlay_node'))
        and values.get('count rejected: lanes_size') == '1' and values,
        20.0, 'the overlay to count both rejections')
    assert overlay.alive(), overlay.output()
    assert drawn == [3], drawn
    assert counted['count rejected: detection_without_results'] == '1', counted
    assert (counted['rejected'], counted['failed'], counted['overlays_published']) == \
        ('2', '0', '1'), counted
