"""
Video cameras in, Foxglove annotations out: real nodes over Fast DDS with a real tritonserver.

A camera published as foxglove_msgs/CompressedVideo or ffmpeg_image_transport_msgs/FFMPEGPacket
is served from its first keyframe on, every packet accounted for, with the detections the same
frames get as Images; annotations are built only while someone subscribes, and then are the
detections of their frame.
"""
from __future__ import annotations

from pathlib import Path
import time
from typing import Any, Iterator

import cv2
from diagnostic_msgs.msg import DiagnosticArray
from ffmpeg_image_transport_msgs.msg import FFMPEGPacket
from foxglove_msgs.msg import CompressedVideo, ImageAnnotations
import numpy as np
import pytest
from sensor_msgs.msg import Image, PointCloud2
from std_msgs.msg import Header
from vision_msgs.msg import Detection2DArray

from support.checkout import shared_path
from support.perception_nodes import image_message, latest_diagnostics, start_node
from support.ros_helpers import Probe, wait_until
from triton_perception.frames import (H264, HEVC, PACKET_ENCODINGS, VIDEO_FORMATS, VideoDecoder,
                                      VideoEncoder, VideoPacket, WAITING_FOR_KEYFRAME)
from triton_perception.frames.diagnostics import reason_key
from triton_perception.outputs import lanes_from_cloud
from triton_perception.system.processes import NodeProcess

pytestmark = [pytest.mark.ros, pytest.mark.server]
GOP = 5
FRAMES = 12
SKIPPED = 2  # packets of the first GOP published before the stream is joined
WAITING = f'dropped: {WAITING_FOR_KEYFRAME}'
# A deep reader for the packets, frequent /diagnostics for the counts.
DETECTION_PARAMETERS = {'qos_depth': 50, 'diagnostics_period_s': 0.2}


@pytest.fixture(scope='module')
def bus_frames(shared: Path) -> list[np.ndarray]:
    """Return FRAMES frames of bus.jpg (640 wide) shifting right by 4 px per frame."""
    bgr = cv2.imread(str(shared_path('data', 'images', 'bus.jpg')))
    rgb = cv2.resize(cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB), (640, 864))
    return [np.ascontiguousarray(np.roll(rgb, 4 * index, axis=1)) for index in range(FRAMES)]


def running(executable: str, namespace: str, triton_server: Any, tmp_path_factory: Any,
            **parameters: Any) -> Iterator[NodeProcess]:
    """Run `executable` in `namespace`, reliable, for the module; it must exit with 0."""
    node = start_node(executable, namespace, triton_server, tmp_path_factory,
                      qos_reliability='reliable', **parameters)
    yield node
    assert node.stop() == 0, node.output()


@pytest.fixture(scope='module')
def lane_node(triton_server: Any, tmp_path_factory: Any) -> Iterator[NodeProcess]:
    """lane_node on /fox_lanes/image (Image)."""
    yield from running('lane_node', '/fox_lanes', triton_server, tmp_path_factory)


@pytest.fixture(scope='module')
def foxglove_node(triton_server: Any, tmp_path_factory: Any) -> Iterator[NodeProcess]:
    """detection_node on /vid_fox/image/foxglove (CompressedVideo)."""
    yield from running('detection_node', '/vid_fox', triton_server, tmp_path_factory,
                       input_transport='foxglove', **DETECTION_PARAMETERS)


@pytest.fixture(scope='module')
def ffmpeg_node(triton_server: Any, tmp_path_factory: Any) -> Iterator[NodeProcess]:
    """detection_node on /vid_ff/image/ffmpeg (FFMPEGPacket)."""
    yield from running('detection_node', '/vid_ff', triton_server, tmp_path_factory,
                       input_transport='ffmpeg', **DETECTION_PARAMETERS)


@pytest.fixture(scope='module')
def gst_foxglove_node(triton_server: Any, tmp_path_factory: Any) -> Iterator[NodeProcess]:
    """detection_node on /gst_fox/image/foxglove, decoding through GStreamer (gst:avdec)."""
    yield from running('detection_node', '/gst_fox', triton_server, tmp_path_factory,
                       input_transport='foxglove', video_decoder='gst:avdec',
                       **DETECTION_PARAMETERS)


@pytest.fixture(scope='module')
def gst_ffmpeg_node(triton_server: Any, tmp_path_factory: Any) -> Iterator[NodeProcess]:
    """detection_node on /gst_ff/image/ffmpeg, decoding through GStreamer (gst:avdec)."""
    yield from running('detection_node', '/gst_ff', triton_server, tmp_path_factory,
                       input_transport='ffmpeg', video_decoder='gst:avdec',
                       **DETECTION_PARAMETERS)


@pytest.fixture(scope='module')
def raw_node(triton_server: Any, tmp_path_factory: Any) -> Iterator[NodeProcess]:
    """detection_node on /vid_raw/image (Image): the reference for the decoded frames."""
    yield from running('detection_node', '/vid_raw', triton_server, tmp_path_factory,
                       **DETECTION_PARAMETERS)


def packet_message(transport: str, codec: str, data: bytes, stamp: Header,
                   size: tuple[int, int]) -> Any:
    """Return one packet as the transport's message, with the frame's header."""
    if transport == 'foxglove':
        return CompressedVideo(timestamp=stamp.stamp, frame_id=stamp.frame_id, data=data,
                               format=VIDEO_FORMATS[codec])
    return FFMPEGPacket(header=stamp, width=size[0], height=size[1],
                        encoding=PACKET_ENCODINGS[codec], data=data,
                        flags=0)


def header(index: int, first_s: int) -> Header:
    """Return the header of frame `index`, stamped `first_s` + index seconds."""
    result = Header(frame_id='video_camera')
    result.stamp.sec = first_s + index
    return result


def boxes(message: Detection2DArray) -> list[tuple[str, float, float, float, float]]:
    """Return (class, centre x, centre y, width, height) of each detection, rounded."""
    return sorted((d.results[0].hypothesis.class_id, round(d.bbox.center.position.x, 1),
                   round(d.bbox.center.position.y, 1), round(d.bbox.size_x, 1),
                   round(d.bbox.size_y, 1)) for d in message.detections)


# (transport, codec, video_decoder) -> the node's namespace and its frames' first stamp (s); the
# reference node sees them all.
CAMERAS = {('foxglove', H264, ''): ('/vid_fox', 2000), ('ffmpeg', HEVC, ''): ('/vid_ff', 2100),
           ('foxglove', H264, 'gst:avdec'): ('/gst_fox', 2200),
           ('ffmpeg', HEVC, 'gst:avdec'): ('/gst_ff', 2300)}
NODES = {'/vid_fox': 'foxglove_node', '/vid_ff': 'ffmpeg_node', '/gst_fox': 'gst_foxglove_node',
         '/gst_ff': 'gst_ffmpeg_node'}


@pytest.mark.parametrize('transport,codec,decoder', list(CAMERAS),
                         ids=['foxglove-h264', 'ffmpeg-h265', 'gst-foxglove-h264',
                              'gst-ffmpeg-h265'])
def test_a_video_camera_is_served_from_its_first_keyframe(
        request: pytest.FixtureRequest, probe: Probe, raw_node: NodeProcess,
        bus_frames: list[np.ndarray], transport: str, codec: str, decoder: str) -> None:
    """
    A stream joined mid-GOP: packets before the keyframe are counted as waiting, not errors.

    From the keyframe on every packet gives detections with its header, the boxes those of the
    same frame decoded by PyAV and sent as an Image; received = published + dropped (waiting).
    The same through GStreamer (video_decoder gst:avdec, a gst-launch-1.0 child process).
    """
    namespace, first_s = CAMERAS[(transport, codec, decoder)]
    request.getfixturevalue(NODES[namespace])
    diagnostics = probe.received.get('/diagnostics') or probe.record(DiagnosticArray,
                                                                     '/diagnostics')
    detections = probe.record(Detection2DArray, f'{namespace}/detections')
    raw_detections = probe.received.get('/vid_raw/detections') or probe.record(
        Detection2DArray, '/vid_raw/detections')
    height, width = bus_frames[0].shape[:2]
    encoder = VideoEncoder(codec, width, height, gop=GOP)
    encoded = [packet for rgb in bus_frames for packet in encoder.encode(rgb)]
    assert [packet.keyframe for packet in encoded] == [i % GOP == 0 for i in range(FRAMES)]
    message_type = CompressedVideo if transport == 'foxglove' else FFMPEGPacket
    publisher = probe.publisher(message_type, f'{namespace}/image/{transport}')
    probe.wait_for_subscribers(publisher)
    probe.wait_for_publishers(f'{namespace}/detections')
    fqn = f'{namespace}/detection_node'
    before = wait_until(lambda: latest_diagnostics(diagnostics, fqn), 20.0, 'diagnostics')
    for index in range(SKIPPED, FRAMES):  # joined after the first keyframe
        stamp = header(index, first_s)
        publisher.publish(packet_message(transport, codec, encoded[index].data, stamp,
                                         (width, height)))
        if index >= GOP:  # lockstep: the node's latest-frame slot keeps only the newest frame
            wait_until(lambda: any(d.header == stamp for d in list(detections)), 30.0,
                       f'detections of frame {index}')
        else:
            time.sleep(0.2)
    served = {d.header.stamp.sec: d for d in list(detections)}
    assert sorted(served) == [first_s + index for index in range(GOP, FRAMES)]
    assert all(d.header.frame_id == 'video_camera' for d in served.values())

    def settled() -> dict[str, str] | None:
        values = latest_diagnostics(diagnostics, fqn)
        received = int(values['received']) - int(before['received'])
        key = reason_key(WAITING)
        waiting = int(values.get(key, 0)) - int(before.get(key, 0))
        published = int(values['published']) - int(before['published'])
        return values if (received, waiting, published) == (
            FRAMES - SKIPPED, GOP - SKIPPED, FRAMES - GOP) else None
    values = wait_until(settled, 20.0, 'the waiting packets counted')
    assert int(values['rejected']) == int(before['rejected']), values
    names = {'': {H264: 'h264', HEVC: 'hevc'}, 'gst:avdec': {H264: 'gst:avdec_h264',
                                                             HEVC: 'gst:avdec_h265'}}
    assert values['video_decoder'] == names[decoder][codec], values

    # The same frames, decoded here and sent as Images, get the same boxes.
    reference = VideoDecoder()  # the PyAV route, in this process
    raw = probe.publisher(type(image_message(bus_frames[0], 'rgb8', 'x', 0)), '/vid_raw/image')
    probe.wait_for_subscribers(raw)
    probe.wait_for_publishers('/vid_raw/detections')
    for index in range(GOP, FRAMES):
        rgb = reference.decode(VideoPacket(encoded[index].data, VIDEO_FORMATS[codec]))
        message = image_message(rgb, 'rgb8', 'video_camera', 0)
        message.header = header(index, first_s)
        raw.publish(message)
        expected = wait_until(lambda: next((d for d in list(raw_detections)
                                            if d.header == message.header), None), 30.0,
                              f'detections of decoded frame {index}')
        assert boxes(served[first_s + index]) == boxes(expected), index
        assert expected.detections, index


def test_annotations_only_while_watched_and_on_their_frame(
        probe: Probe, raw_node: NodeProcess, bus_frames: list[np.ndarray]) -> None:
    """
    No subscriber, no annotations built; a subscriber gets each frame's boxes, at its stamp.

    The node counts what it published in /diagnostics (`annotations_published`).
    """
    diagnostics = probe.received.get('/diagnostics') or probe.record(DiagnosticArray,
                                                                     '/diagnostics')
    detections = probe.received.get('/vid_raw/detections') or probe.record(
        Detection2DArray, '/vid_raw/detections')
    publisher = probe.publisher(type(image_message(bus_frames[0], 'rgb8', 'x', 0)),
                                '/vid_raw/image')
    probe.wait_for_subscribers(publisher)
    probe.wait_for_publishers('/vid_raw/detections')
    unwatched = image_message(bus_frames[0], 'rgb8', 'unwatched', 3000)
    publisher.publish(unwatched)
    wait_until(lambda: any(d.header == unwatched.header for d in list(detections)), 30.0,
               'detections of the unwatched frame')
    values = wait_until(lambda: latest_diagnostics(diagnostics, '/vid_raw/detection_node'), 20.0,
                        'diagnostics')
    assert values['annotations_published'] == '0', values

    annotations = probe.record(ImageAnnotations, '/vid_raw/detections/annotations')
    wait_until(lambda: probe.node.count_subscribers('/vid_raw/detections/annotations') >= 1,
               10.0, 'the annotation subscription')
    time.sleep(1.0)  # the node's publisher sees the new subscription after discovery
    watched = image_message(bus_frames[3], 'rgb8', 'watched', 3001)
    deadline = time.monotonic() + 30.0
    while not any(a.points and a.points[0].timestamp == watched.header.stamp
                  for a in list(annotations)) and time.monotonic() < deadline:
        publisher.publish(watched)
        time.sleep(1.0)
    annotation = next(a for a in list(annotations) if a.points
                      and a.points[0].timestamp == watched.header.stamp)
    result = next(d for d in list(detections) if d.header == watched.header)
    corners = sorted((box.points[0].x, box.points[0].y, box.points[2].x, box.points[2].y)
                     for box in annotation.points)
    expected = sorted((d.bbox.center.position.x - d.bbox.size_x / 2,
                       d.bbox.center.position.y - d.bbox.size_y / 2,
                       d.bbox.center.position.x + d.bbox.size_x / 2,
                       d.bbox.center.position.y + d.bbox.size_y / 2) for d in result.detections)
    assert len(corners) == len(expected) >= 4
    for got, want in zip(corners, expected):
        assert np.allclose(got, want, atol=0.01), (got, want)
    assert all(label.timestamp == watched.header.stamp for label in annotation.texts)
    assert {label.text.split()[0] for label in annotation.texts} == {'person', 'bus'}


def watched_annotations(probe: Probe, publisher: Any, message: Any,
                        annotations: list[ImageAnnotations]) -> ImageAnnotations:
    """Send `message` until the annotations of its stamp arrive (once the node sees us)."""
    deadline = time.monotonic() + 30.0
    while time.monotonic() < deadline:
        publisher.publish(message)
        found = [a for a in list(annotations)
                 if a.points and a.points[0].timestamp == message.header.stamp]
        if found:
            return found[0]
        time.sleep(1.0)
    raise AssertionError(f'no annotations for stamp {message.header.stamp}')


def test_lane_annotations_are_the_lanes_of_their_frame(probe: Probe, lane_node: NodeProcess,
                                                       road_rgb: np.ndarray) -> None:
    """Each lane line is the published lane's points, in order; the area's outline is first."""
    lanes = probe.record(PointCloud2, '/fox_lanes/lanes')
    annotations = probe.record(ImageAnnotations, '/fox_lanes/lanes/annotations')
    publisher = probe.publisher(Image, '/fox_lanes/image')
    probe.wait_for_subscribers(publisher)
    probe.wait_for_publishers('/fox_lanes/lanes')
    message = image_message(road_rgb, 'rgb8', 'road', 4000)
    annotation = watched_annotations(probe, publisher, message, annotations)
    cloud = next(c for c in list(lanes) if c.header == message.header)
    polylines, sides = lanes_from_cloud(cloud)
    assert len(polylines) >= 2 and {-1, 1} <= set(sides.tolist())
    outlines = [p for p in annotation.points if p.type == p.LINE_LOOP]
    lines = [p for p in annotation.points if p.type == p.LINE_STRIP]
    assert outlines and annotation.points[:len(outlines)] == outlines
    assert len(lines) == len(polylines)
    for line, polyline in zip(lines, polylines):
        assert np.allclose([(p.x, p.y) for p in line.points], polyline, atol=1e-3)
