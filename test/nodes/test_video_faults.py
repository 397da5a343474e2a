"""
Video faults that must stay with their camera: a stalled decoder child, a stream of huge SPS.

Real node processes over Fast DDS with the session's real tritonserver. A `gst-launch-1.0` that
never reads nor answers stands first on PATH for one camera of a perception process: the other
camera (PyAV) is still served, the stalled one counts its packets with reasons, and SIGTERM ends
the process within two seconds, its decoder children with it. An H.264 stream whose SPS says
8192x4320, of few-byte P-frames, is refused packet by packet as `too_large` before FFmpeg
allocates a picture, so the node's memory does not grow.
"""
from __future__ import annotations

import os
from pathlib import Path
import signal
import time
from typing import Any, Iterator

from diagnostic_msgs.msg import DiagnosticArray
from foxglove_msgs.msg import CompressedVideo
import numpy as np
import pytest
from std_msgs.msg import Header
from vision_msgs.msg import Detection2DArray

from support.perception_nodes import latest_diagnostics, start_node
from support.ros_helpers import Probe, wait_until
from support.video_packets import moving_frames, packets
from triton_perception.frames import H264, VIDEO_FORMATS, VideoEncoder, VideoPacket
from triton_perception.frames.diagnostics import reason_key
from triton_perception.system.processes import NodeProcess, status_kib

pytestmark = [pytest.mark.ros, pytest.mark.server]
STALLED, SERVED = '/stalled_cam', '/served_cam'
SERVED_SHARE = 0.9
STOP_LIMIT_S = 2.0
LOCKSTEP_WAIT_S = 2.0  # a served frame's longest wait before the next is sent
STALL_SEEN_S = 60.0  # the stalled decoder is found out after FIRST_FRAME_TIMEOUT_S (20 s)
HUGE = (8192, 4320)
HUGE_PACKETS = 30
MEMORY_LIMIT_MB = 60.0
FIRST_STAMP_S = {STALLED: 7000, SERVED: 8000}


def header(camera: str, index: int) -> Header:
    """Return the header of frame `index` of `camera`."""
    result = Header(frame_id=camera.strip('/'))
    result.stamp.sec = FIRST_STAMP_S[camera] + index
    return result


def video_message(packet: VideoPacket, stamp: Header) -> CompressedVideo:
    """Return the packet as a foxglove_msgs/CompressedVideo with the frame's stamp."""
    return CompressedVideo(timestamp=stamp.stamp, frame_id=stamp.frame_id, data=packet.data,
                           format=packet.codec)


def counts(values: dict[str, str]) -> dict[str, int]:
    """Return the fate counts of a node's /diagnostics values."""
    return {key: int(values.get(key, 0))
            for key in ('received', 'published', 'dropped', 'rejected', 'failed', 'pending')}


@pytest.fixture
def stalled_process(triton_server: Any, tmp_path: Path) -> Iterator[tuple[NodeProcess, Path]]:
    """
    Yield a perception_process of two video cameras, STALLED's decoder a child that never answers.

    Its gst-launch-1.0 writes its pid to a file, ignores SIGTERM and SIGINT, and sleeps. Yields
    the process and the file of the stand-ins' pids.
    """
    launcher = tmp_path / 'bin' / 'gst-launch-1.0'
    launcher.parent.mkdir()
    pids = tmp_path / 'stand_in_pids'
    launcher.write_text(f"#!/bin/sh\necho $$ >> {pids}\ntrap '' TERM INT\nexec sleep 600\n",
                        encoding='utf-8')
    launcher.chmod(0o755)
    parameters = tmp_path / 'parameters.yaml'
    parameters.write_text(f"""/**:
  ros__parameters:
    triton_url: {triton_server.grpc_url}
    input_transport: foxglove
    qos_reliability: reliable
    qos_depth: 50
    diagnostics_period_s: 0.2
{STALLED}/detection_node:
  ros__parameters:
    video_decoder: gst:avdec
""", encoding='utf-8')
    process = NodeProcess(
        'perception_process',
        [f'--camera={STALLED}={STALLED}/image_raw', f'--camera={SERVED}={SERVED}/image_raw',
         '--no-lanes', '--no-overlay', '--ros-args', '--params-file', str(parameters)],
        tmp_path, environment={'PATH': f'{launcher.parent}{os.pathsep}{os.environ["PATH"]}'})
    yield process, pids
    process.stop(signal.SIGKILL)


def test_a_stalled_decoder_child_holds_only_its_own_camera(
        probe: Probe, stalled_process: tuple[NodeProcess, Path]) -> None:
    """
    The other camera keeps 90 % of its frames served; the stalled one counts every packet.

    Both cameras send a packet per round, the served one in lockstep (the next once its
    detections came, or after LOCKSTEP_WAIT_S), until the stalled camera reports
    `decoder_stalled`. Then SIGTERM ends the process within two seconds with exit code 0, and
    no stand-in child outlives it.
    """
    process, pids = stalled_process
    diagnostics = probe.received.get('/diagnostics') or probe.record(DiagnosticArray,
                                                                     '/diagnostics')
    detections = probe.record(Detection2DArray, f'{SERVED}/detections')
    publishers = {camera: probe.publisher(CompressedVideo, f'{camera}/image_raw/foxglove')
                  for camera in (STALLED, SERVED)}
    for publisher in publishers.values():
        probe.wait_for_subscribers(publisher, 1, timeout_s=120.0)
    probe.wait_for_publishers(f'{SERVED}/detections', timeout_s=60.0)
    stream = packets(H264, moving_frames(200, 320, 192))
    stall_key = reason_key('rejected: decoder_stalled')
    sent = 0
    deadline = time.monotonic() + STALL_SEEN_S
    while True:
        stalled = latest_diagnostics(diagnostics, f'{STALLED}/detection_node') or {}
        if (stall_key in stalled and sent >= 30) or time.monotonic() > deadline:
            break
        packet = stream[sent % len(stream)]
        for camera, publisher in publishers.items():
            publisher.publish(video_message(packet, header(camera, sent)))
        stamp = header(SERVED, sent)
        sent += 1
        waited = time.monotonic() + LOCKSTEP_WAIT_S
        while (not any(d.header == stamp for d in list(detections))
               and time.monotonic() < waited):
            time.sleep(0.01)
    served = {d.header.stamp.sec for d in list(detections)}
    share = len(served & {FIRST_STAMP_S[SERVED] + index for index in range(sent)}) / sent
    assert share >= SERVED_SHARE, f'{share:.0%} of {sent} frames served\n{process.output_tail()}'
    assert stall_key in stalled, f'no decoder_stalled after {sent} packets: {stalled}'

    def accounted() -> dict[str, int] | None:
        values = latest_diagnostics(diagnostics, f'{STALLED}/detection_node') or {}
        fates = counts(values)
        settled = sum(fates[key] for key in ('published', 'dropped', 'rejected', 'failed'))
        waiting = int(values.get('video_packets_waiting', -1))
        return fates if fates['received'] == settled == sent - waiting else None
    fates = wait_until(accounted, 10.0, f'every one of {sent} packets of the stalled camera '
                       'settled or waiting to be decoded')
    assert fates['published'] == 0, fates

    started = time.monotonic()
    code = process.stop(signal.SIGTERM, timeout_s=30.0)
    took = time.monotonic() - started
    assert code == 0 and took < STOP_LIMIT_S, f'exit {code} after {took:.1f} s\n{process.output()}'
    stand_ins = [int(pid) for pid in pids.read_text().split()]
    assert stand_ins and not [pid for pid in stand_ins if alive(pid)], stand_ins


def alive(pid: int) -> bool:
    """Return whether process `pid` runs (a zombie does not)."""
    try:
        return 'State:\tZ' not in Path(f'/proc/{pid}/status').read_text()
    except OSError:
        return False


@pytest.fixture(scope='module')
def huge_stream() -> list[VideoPacket]:
    """Return HUGE_PACKETS packets of an 8192x4320 H.264 stream: one keyframe, then P-frames."""
    width, height = HUGE
    encoder = VideoEncoder(H264, width, height, gop=HUGE_PACKETS)
    rgb = np.full((height, width, 3), 90, np.uint8)
    encoded = []
    for index in range(HUGE_PACKETS):
        rgb[100:200, 100 + 8 * index:200 + 8 * index] = 250
        encoded += list(encoder.encode(rgb))
    return [VideoPacket(packet.data, VIDEO_FORMATS[H264]) for packet in encoded]


@pytest.fixture
def video_node(triton_server: Any, tmp_path_factory: Any) -> Iterator[NodeProcess]:
    """detection_node on /huge_video/image/foxglove (PyAV), max_image_pixels at its default."""
    node = start_node('detection_node', '/huge_video', triton_server, tmp_path_factory,
                      input_transport='foxglove', qos_reliability='reliable', qos_depth=50,
                      diagnostics_period_s=0.2)
    yield node
    assert node.stop() == 0, node.output()


def test_a_stream_whose_sps_is_too_large_is_refused_before_decoding(
        probe: Probe, video_node: NodeProcess, huge_stream: list[VideoPacket]) -> None:
    """
    Every packet of an 8192x4320 stream is too_large, and the node grows by less than 60 MB.

    The packets are a few kB each (P-frames of 1 kB); decoded, each would be 53 MB of YUV and
    106 MB of RGB. A small stream first brings the decoder's libraries in, so that what is
    measured is the huge stream alone.
    """
    assert max(len(packet.data) for packet in huge_stream[1:]) < 4096
    diagnostics = probe.received.get('/diagnostics') or probe.record(DiagnosticArray,
                                                                     '/diagnostics')
    detections = probe.record(Detection2DArray, '/huge_video/detections')
    publisher = probe.publisher(CompressedVideo, '/huge_video/image/foxglove')
    probe.wait_for_subscribers(publisher)
    probe.wait_for_publishers('/huge_video/detections')
    warm_up = Header(frame_id='small')
    warm_up.stamp.sec = 9000
    small = packets(H264, moving_frames(1))[0]
    deadline = time.monotonic() + 60.0
    while not any(d.header == warm_up for d in list(detections)):
        assert time.monotonic() < deadline, 'the small stream was never served'
        publisher.publish(video_message(small, warm_up))
        time.sleep(0.5)
    fqn = '/huge_video/detection_node'
    before = counts(wait_until(lambda: latest_diagnostics(diagnostics, fqn), 20.0, 'diagnostics'))
    time.sleep(1.0)
    before = counts(latest_diagnostics(diagnostics, fqn) or {})
    rss_before_mb = status_kib(video_node.pid, 'VmRSS') / 1024
    for index, packet in enumerate(huge_stream):
        stamp = Header(frame_id='huge')
        stamp.stamp.sec = 9100 + index
        publisher.publish(video_message(packet, stamp))
        time.sleep(0.05)
    too_large = reason_key('rejected: too_large')

    def refused() -> dict[str, str] | None:
        values = latest_diagnostics(diagnostics, fqn) or {}
        received = counts(values)['received'] - before['received']
        return values if received >= HUGE_PACKETS else None
    values = wait_until(refused, 60.0, f'{HUGE_PACKETS} huge packets received')
    time.sleep(0.5)
    values = latest_diagnostics(diagnostics, fqn) or values
    grown_mb = status_kib(video_node.pid, 'VmRSS') / 1024 - rss_before_mb
    after = counts(values)
    assert after['received'] - before['received'] == HUGE_PACKETS, values
    assert int(values.get(too_large, 0)) == HUGE_PACKETS, values
    assert after['published'] == before['published'], values
    assert grown_mb < MEMORY_LIMIT_MB, f'grew {grown_mb:.0f} MB\n{video_node.output_tail()}'
