"""
detection_node and lane_node as separate processes.

Real Fast DDS, real tritonserver, real weights.
"""
from __future__ import annotations

from pathlib import Path
import signal
import time
from typing import Any, Iterator

import cv2
from diagnostic_msgs.msg import DiagnosticArray
import numpy as np
import pytest
from sensor_msgs.msg import CompressedImage, Image, PointCloud2
from std_msgs.msg import Header
from vision_msgs.msg import Detection2DArray, LabelInfo

from support.perception_nodes import image_message, latest_diagnostics, send_and_receive, start_node
from support.ros_helpers import BEST_EFFORT, LATCHED, Probe, wait_until
from triton_perception.outputs.result_messages import load_labels, read_lane_points
from triton_perception.system.processes import NodeProcess, ros_arguments

pytestmark = [pytest.mark.ros, pytest.mark.server]
# ObjectHypothesis.class_id is the decimal class id; its name is in the node's LabelInfo.
COCO = load_labels()

# ../shared/models/README.md, bus.jpg at conf 0.25, IoU 0.45: (class, score, x1, y1, x2, y2)
BUS_REFERENCE = [('person', 0.823, 219, 408, 349, 863), ('person', 0.816, 52, 399, 207, 895),
                 ('person', 0.676, 681, 377, 810, 870), ('bus', 0.526, 49, 237, 810, 772)]


@pytest.fixture(scope='module')
def detection_node(triton_server: Any, tmp_path_factory: Any) -> Iterator[NodeProcess]:
    """Start the module's reliable detection_node in /det; it must exit with 0."""
    # Reliable with a history as deep as the burst test: frames that DDS overwrites in a
    # shallower history never reach the node, so they could not be accounted for by it.
    node = start_node('detection_node', '/det', triton_server, tmp_path_factory,
                      qos_reliability='reliable', qos_depth=50, diagnostics_period_s=0.2)
    yield node
    assert node.stop() == 0, node.output()


@pytest.fixture(scope='module')
def compressed_detection_node(triton_server: Any, tmp_path_factory: Any) -> Iterator[NodeProcess]:
    """Start a detection_node taking CompressedImage in /det_jpeg; it must exit with 0."""
    node = start_node('detection_node', '/det_jpeg', triton_server, tmp_path_factory,
                      input_transport='compressed')
    yield node
    assert node.stop() == 0, node.output()


@pytest.fixture(scope='module')
def lane_node(triton_server: Any, tmp_path_factory: Any) -> Iterator[NodeProcess]:
    """Start the module's lane_node in /lanes; it must exit with 0."""
    node = start_node('lane_node', '/lanes', triton_server, tmp_path_factory)
    yield node
    assert node.stop() == 0, node.output()


def assert_matches_bus_reference(detections: Detection2DArray) -> None:
    """Assert the detections are bus.jpg's reference, boxes within 3 px and scores within 0.01."""
    found = []
    for detection in detections.detections:
        box = detection.bbox
        hypothesis = detection.results[0].hypothesis
        centre = box.center.position
        found.append((COCO[int(hypothesis.class_id)], hypothesis.score,
                      centre.x - box.size_x / 2, centre.y - box.size_y / 2,
                      centre.x + box.size_x / 2, centre.y + box.size_y / 2))
    assert len(found) == len(BUS_REFERENCE), found
    for expected in BUS_REFERENCE:
        match = [item for item in found if item[0] == expected[0]
                 and all(abs(a - b) <= 3 for a, b in zip(item[2:], expected[2:]))]
        assert match, f'{expected} not in {found}'
        assert abs(match[0][1] - expected[1]) <= 0.01


@pytest.mark.parametrize('encoding,padding', [('rgb8', 0), ('bgr8', 13), ('rgba8', 0),
                                              ('mono8', 0), ('yuv422', 0), ('bayer_rggb8', 0)])
def test_detections_of_bus_match_the_reference(probe: Probe, detection_node: NodeProcess,
                                               bus_rgb: np.ndarray, encoding: str,
                                               padding: int) -> None:
    """
    bus.jpg sent in each encoding gets detections in its frame; the colour ones match the reference.

    Grey and demosaiced frames still show the people and the bus.
    """
    received = probe.received.get('/det/detections') or probe.record(
        Detection2DArray, '/det/detections')
    message = image_message(bus_rgb, encoding, 'camera_optical', 1000 + len(received), padding)
    result = send_and_receive(probe, '/det/image', message, '/det/detections', Detection2DArray,
                              received)
    assert result.header.frame_id == 'camera_optical'
    if encoding in ('rgb8', 'bgr8', 'rgba8'):
        assert_matches_bus_reference(result)
    else:  # grey and demosaiced frames lose colour: the people and the bus must still be there
        classes = sorted(COCO[int(d.results[0].hypothesis.class_id)] for d in result.detections)
        assert classes.count('person') >= 3 and 'bus' in classes, classes


def test_compressed_input(probe: Probe, compressed_detection_node: NodeProcess,
                          bus_rgb: np.ndarray) -> None:
    """A JPEG CompressedImage gets the detections of the raw frame: the bus and three people."""
    received = probe.record(Detection2DArray, '/det_jpeg/detections')
    ok, jpeg = cv2.imencode('.jpg', cv2.cvtColor(bus_rgb, cv2.COLOR_RGB2BGR),
                            [cv2.IMWRITE_JPEG_QUALITY, 95])
    message = CompressedImage(format='jpeg', data=jpeg.tobytes())
    message.header = Header(frame_id='jpeg_camera')
    message.header.stamp.sec = 77
    result = send_and_receive(probe, '/det_jpeg/image/compressed', message,
                              '/det_jpeg/detections', Detection2DArray, received)
    classes = sorted(COCO[int(d.results[0].hypothesis.class_id)] for d in result.detections)
    assert classes == ['bus', 'person', 'person', 'person'], classes


def test_label_info_reaches_a_late_subscriber(probe: Probe, detection_node: NodeProcess) -> None:
    """A subscriber that joins late still gets LabelInfo with the 80 COCO names: it is latched."""
    probe.wait_for_publishers('/det/label_info')
    labels = probe.record(LabelInfo, '/det/label_info', LATCHED)
    info = wait_until(lambda: labels[-1] if labels else None, 20.0, 'latched LabelInfo')
    names = {item.class_id: item.class_name for item in info.class_map}
    assert len(names) == 80 and names[0] == 'person' and names[5] == 'bus'


BAD_FRAMES = {
    'unsupported_encoding': {'encoding': '32FC1', 'width': 4, 'height': 4, 'step': 16,
                             'data': bytes(64)},
    'truncated': {'encoding': 'rgb8', 'width': 640, 'height': 480, 'step': 1920,
                  'data': bytes(1000)},
    'empty': {'encoding': 'rgb8', 'width': 0, 'height': 0, 'step': 0, 'data': b''},
    'too_large': {'encoding': 'rgb8', 'width': 100_000, 'height': 100_000, 'step': 300_000,
                  'data': bytes(10)},
    'bad_step': {'encoding': 'rgb8', 'width': 10, 'height': 10, 'step': 5, 'data': bytes(50)},
}


def test_bad_frames_are_rejected_and_counted(probe: Probe, detection_node: NodeProcess,
                                             bus_rgb: np.ndarray) -> None:
    """
    Each kind of bad frame is rejected and counted by its reason, and the node goes on.

    A good frame after them is answered, and the node reports the camera's publisher.
    """
    diagnostics = probe.received.get('/diagnostics') or probe.record(DiagnosticArray,
                                                                     '/diagnostics')
    detections = probe.received.get('/det/detections') or probe.record(
        Detection2DArray, '/det/detections')
    publisher = probe.publisher(Image, '/det/image')
    probe.wait_for_subscribers(publisher)
    before = wait_until(lambda: latest_diagnostics(diagnostics, '/det/detection_node'), 20.0,
                        'diagnostics of detection_node')
    for reason, fields in BAD_FRAMES.items():
        message = Image(**fields)
        message.header.frame_id = reason
        publisher.publish(message)
    good = image_message(bus_rgb, 'rgb8', 'after_bad_frames', 5000)
    publisher.publish(good)
    wait_until(lambda: any(d.header == good.header for d in list(detections)), 30.0,
               'the good frame after the bad ones')

    def rejected_all() -> dict[str, str] | None:
        values = latest_diagnostics(diagnostics, '/det/detection_node')
        delta = int(values['rejected']) - int(before['rejected'])
        return values if delta == len(BAD_FRAMES) else None
    after = wait_until(rejected_all, 10.0, f'{len(BAD_FRAMES)} rejections in diagnostics')
    for reason in BAD_FRAMES:
        assert int(after.get(f'count rejected: {reason}', 0)) >= 1, (reason, after)
    # Replayers wait for this before their first frame (the reader's side of matching).
    assert int(after['image_publishers']) >= 1, after
    assert detection_node.alive()


def test_burst_is_bounded_and_accounted(probe: Probe, detection_node: NodeProcess,
                                        bus_rgb: np.ndarray) -> None:
    """
    A burst the node cannot keep up with is published or dropped, every frame accounted for.

    Some frames are dropped rather than queued, and none is rejected or failed.
    """
    diagnostics = probe.received.get('/diagnostics') or probe.record(DiagnosticArray,
                                                                     '/diagnostics')
    publisher = probe.publisher(Image, '/det/image')
    probe.wait_for_subscribers(publisher)
    started_ns = time.time_ns()

    def fresh_and_idle() -> dict[str, str] | None:
        """
        Return the baseline.

        Reported after this test began, with nothing pending (a frame of an earlier test being
        counted after the baseline would unbalance the figures).
        """
        fresh = [array for array in list(diagnostics)
                 if array.header.stamp.sec * 10**9 + array.header.stamp.nanosec >= started_ns]
        values = latest_diagnostics(fresh, '/det/detection_node')
        return values if values and values['pending'] == '0' else None
    before = wait_until(fresh_and_idle, 20.0,
                        'fresh diagnostics of detection_node with nothing pending')
    counted = ('received', 'published', 'dropped', 'rejected', 'failed')
    # A burst the node cannot keep up with, whatever the machine's speed: the frames wait in
    # its reader (reliable, depth 50) while it is stopped, and reach the callback at once.
    detection_node.process.send_signal(signal.SIGSTOP)
    try:
        for index in range(50):
            publisher.publish(image_message(bus_rgb, 'rgb8', 'burst', 9000 + index))
    finally:
        detection_node.process.send_signal(signal.SIGCONT)

    last: dict[str, int] = {}

    def settled() -> dict[str, int] | None:
        values = latest_diagnostics(diagnostics, '/det/detection_node')
        last.update({key: int(values[key]) - int(before[key]) for key in counted},
                    pending=int(values['pending']))
        return dict(last) if last['received'] == 50 and last['pending'] == 0 else None
    try:
        delta = wait_until(settled, 60.0, '50 frames received and settled')
    except AssertionError as error:
        raise AssertionError(f'{error}; last counts: {last}') from None
    assert delta['published'] + delta['dropped'] == 50, delta
    assert delta['dropped'] > 0 and delta['rejected'] == delta['failed'] == 0, delta


def test_lanes_of_a_highway_frame(probe: Probe, lane_node: NodeProcess,
                                  road_rgb: np.ndarray) -> None:
    """
    A highway frame gets both ego lanes where they are, and a drivable area at its size.

    With nobody watching, no overlay is drawn or published.
    """
    clouds = probe.record(PointCloud2, '/lanes/lanes')
    masks = probe.record(Image, '/lanes/drivable_area')
    message = image_message(road_rgb, 'bgr8', 'front_camera', 321)
    cloud = send_and_receive(probe, '/lanes/image', message, '/lanes/lanes', PointCloud2, clouds)
    points = read_lane_points(cloud)
    sides = set(points['side'].tolist())
    assert {-1, 1} <= sides, sides
    ego_left = points[points['side'] == -1]
    ego_right = points[points['side'] == 1]
    assert 100 <= ego_left['u'][np.argmax(ego_left['v'])] <= 280
    assert 780 <= ego_right['u'][np.argmax(ego_right['v'])] <= 930
    mask = wait_until(lambda: next((m for m in list(masks) if m.header == message.header), None),
                      20.0, 'drivable_area for the frame')
    assert (mask.width, mask.height, mask.encoding) == (960, 540, 'mono8')
    # Nobody watched the overlay: the node drew and published none (its own count, since a
    # subscription of ours would itself make it publish).
    diagnostics = probe.received.get('/diagnostics') or probe.record(DiagnosticArray,
                                                                     '/diagnostics')
    settled = wait_until(lambda: (values := latest_diagnostics(diagnostics, '/lanes/lane_node'))
                         and int(values['published']) >= 1 and values['pending'] == '0'
                         and values, 30.0, 'lane_node to report the frame published')
    assert settled['overlays_published'] == '0', settled


def test_overlay_is_published_while_watched(probe: Probe, lane_node: NodeProcess,
                                            road_rgb: np.ndarray) -> None:
    """The positive control of the check above: with a subscriber, the overlay arrives."""
    overlays = probe.record(Image, '/lanes/lanes/overlay', BEST_EFFORT)
    clouds = probe.received.get('/lanes/lanes') or probe.record(PointCloud2, '/lanes/lanes')
    message = image_message(road_rgb, 'bgr8', 'front_camera', 654)
    overlay = send_and_receive(probe, '/lanes/image', message, '/lanes/lanes/overlay', Image,
                               overlays)
    assert (overlay.width, overlay.height, overlay.encoding) == (960, 540, 'rgb8')
    assert clouds


@pytest.mark.parametrize('transport', ['shared_memory', 'grpc'])
def test_frame_transports_give_the_same_detections(probe: Probe, triton_server: Any,
                                                   tmp_path_factory: Any, bus_rgb: np.ndarray,
                                                   transport: str) -> None:
    """Shared-memory regions are owner-only and disappear with the node, even on SIGKILL."""
    namespace = f'/transport_{transport}'
    node = start_node('detection_node', namespace, triton_server, tmp_path_factory,
                      transport=transport)
    try:
        received = probe.record(Detection2DArray, f'{namespace}/detections')
        message = image_message(bus_rgb, 'bgr8', 'transport', 42)
        result = send_and_receive(probe, f'{namespace}/image', message,
                                  f'{namespace}/detections', Detection2DArray, received)
        assert_matches_bus_reference(result)
        regions = list(Path('/dev/shm').glob(f'triton_perception_yolov5_{node.process.pid}_*'))
        if transport == 'shared_memory':
            assert regions, 'no shared-memory region while the node runs'
            assert all(region.stat().st_mode & 0o777 == 0o600 for region in regions)
        else:
            assert regions == []
    finally:
        node.stop(signal.SIGKILL)
    wait_until(lambda: not list(Path('/dev/shm').glob(
        f'triton_perception_yolov5_{node.process.pid}_*')), 10.0,
        'the shared-memory region to be removed after the node was killed')


def test_lifecycle_transitions_start_and_stop_inference(probe: Probe, triton_server: Any,
                                                        tmp_path_factory: Any,
                                                        bus_rgb: np.ndarray) -> None:
    """
    Autostart false: nothing is subscribed until configure and activate.

    Deactivate unsubscribes and keeps the result publishers; every received frame stays accounted
    for.
    """
    namespace, fqn = '/managed', '/managed/detection_node'
    diagnostics = probe.received.get('/diagnostics') or probe.record(DiagnosticArray,
                                                                     '/diagnostics')
    received = probe.record(Detection2DArray, f'{namespace}/detections')
    node = start_node('detection_node', namespace, triton_server, tmp_path_factory,
                      autostart=False, diagnostics_period_s=0.2)
    try:
        inactive = wait_until(lambda: latest_diagnostics(diagnostics, fqn), 20.0,
                              'diagnostics of the unconfigured node')
        assert inactive['active'] == 'false' and inactive['triton_ready'] == 'false', inactive
        probe.wait_for_publishers(f'{namespace}/detections')
        assert probe.node.count_subscribers(f'{namespace}/image') == 0
        assert not probe.change_state(fqn, 'activate')  # not configured yet
        assert probe.change_state(fqn, 'configure')
        assert probe.node.count_subscribers(f'{namespace}/image') == 0
        assert probe.change_state(fqn, 'activate')

        first = send_and_receive(probe, f'{namespace}/image',
                                 image_message(bus_rgb, 'rgb8', 'managed', 1),
                                 f'{namespace}/detections', Detection2DArray, received)
        assert_matches_bus_reference(first)

        assert probe.change_state(fqn, 'deactivate')
        wait_until(lambda: probe.node.count_subscribers(f'{namespace}/image') == 0, 20.0,
                   'the image subscription to go')
        assert probe.node.count_publishers(f'{namespace}/detections') == 1

        def reported_inactive() -> dict[str, str] | None:
            values = latest_diagnostics(diagnostics, fqn)
            return values if values and values['active'] == 'false' else None
        stopped = wait_until(reported_inactive, 20.0, 'diagnostics of the deactivated node')
        assert int(stopped['received']) == sum(
            int(stopped[fate]) for fate in ('published', 'dropped', 'rejected', 'failed'))

        assert probe.change_state(fqn, 'activate')
        again = send_and_receive(probe, f'{namespace}/image',
                                 image_message(bus_rgb, 'rgb8', 'managed', 2),
                                 f'{namespace}/detections', Detection2DArray, received)
        assert_matches_bus_reference(again)
        assert node.alive()
    finally:
        assert node.stop() == 0, node.output()


@pytest.mark.parametrize('executable,parameter,value', [
    ('detection_node', 'score_threshold', 1.5), ('lane_node', 'diagnostics_period_s', 0.01)])
def test_a_bad_parameter_ends_the_node_with_its_reason(executable: str, parameter: str,
                                                       value: float, tmp_path: Path) -> None:
    """
    Exit code 2 and one clear line naming the parameter and its range, and no traceback.

    From Jazzy on, rclpy also destroys the half-built node at shutdown.
    """
    node = NodeProcess(executable, ros_arguments({parameter: value}, namespace='/bad_parameter'),
                       tmp_path)
    wait_until(lambda: not node.alive(), 60.0, f'{executable} to exit')
    output = node.output()
    assert node.stop() == 2, output
    assert f"invalid parameters: parameter '{parameter}'" in output, output
    assert 'Traceback' not in output, output
