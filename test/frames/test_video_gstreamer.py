"""
The GStreamer route (video_decoder gst:ELEMENT) with the software element in the hardware's place.

A real gst-launch-1.0 child decodes H.264 and H.265 streams made here (avdec_h264, avdec_h265:
FFmpeg's decoders in gst-libav, standing where a Jetson's nvv4l2decoder stands), with the PyAV
route's accounting: waits before a keyframe, a corrupt packet rejected, a new size, the child
killed mid-stream, and every element that cannot run here refused by name at start. Needs the
Debian packages dev/setup.sh installs (gstreamer1.0-tools, -libav, -plugins-good, -plugins-bad);
without them every test here fails naming them.
"""
from __future__ import annotations

import os
from pathlib import Path
import shutil
import signal
import threading
import time

import numpy as np
import pytest

from support.video_packets import GOP, moving_frames, packets
from triton_perception.frames import (FrameRejected, H264, HEVC, KeyframeWait, open_video_decoder,
                                      video_gstreamer, VideoDecoder, VideoDecoderError,
                                      VideoPacket)
from triton_perception.frames.video_bitstream import nal_units
from triton_perception.frames.video_gstreamer import GstreamerDecoder

PACKAGES = ('gstreamer1.0-tools gstreamer1.0-libav gstreamer1.0-plugins-good '
            'gstreamer1.0-plugins-bad')


@pytest.fixture(autouse=True)
def gstreamer() -> None:
    """Fail, naming what to install, where GStreamer's tools are missing."""
    if shutil.which('gst-launch-1.0') is None:
        pytest.fail(f'gst-launch-1.0 is not installed: these tests need {PACKAGES} '
                    '(dev/setup.sh installs them)', pytrace=False)


def decoder() -> GstreamerDecoder:
    """Return the software GStreamer route, avdec_h264 or avdec_h265 by the stream's codec."""
    opened = open_video_decoder('gst:avdec')
    assert isinstance(opened, GstreamerDecoder)
    return opened


@pytest.mark.parametrize('codec', [H264, HEVC])
def test_every_frame_from_the_first_keyframe_on_is_the_pyav_routes(codec: str) -> None:
    """Packets before the first keyframe wait; from it on each frame is PyAV's, pixel for pixel."""
    frames = moving_frames(12)
    stream = packets(codec, frames)
    video, reference = decoder(), VideoDecoder()
    try:
        for packet in stream[1:GOP]:
            with pytest.raises(KeyframeWait):
                video.decode(packet)
        for index in range(GOP, 12):
            rgb = video.decode(stream[index])
            expected = reference.decode(stream[index])
            assert rgb.shape == frames[index].shape and rgb.dtype == np.uint8
            assert np.array_equal(rgb, expected), index
            assert np.abs(rgb.astype(np.int16) - frames[index]).mean() < 6.0, index
        assert video.opened == 1
        assert video.decoder_name == {H264: 'gst:avdec_h264', HEVC: 'gst:avdec_h265'}[codec]
    finally:
        video.close()


def test_a_corrupt_packet_is_rejected_and_the_next_keyframe_starts_a_new_pipeline() -> None:
    """No picture for a packet: corrupt_video, then waits; the keyframe resumes in a new child."""
    stream = packets(H264, moving_frames(11))
    video = decoder()
    try:
        video.decode(stream[0])
        first = video.pid
        slice_unit = nal_units(stream[1].data)[-1]
        garbage = b'\x00\x00\x00\x01' + slice_unit[:1] + bytes(range(256)) * 4
        with pytest.raises(FrameRejected) as rejected:
            video.decode(VideoPacket(garbage, 'h264'))
        assert rejected.value.reason == 'corrupt_video'
        assert not isinstance(rejected.value, KeyframeWait)
        assert '\n' not in str(rejected.value)
        with pytest.raises(KeyframeWait):
            video.decode(stream[2])
        assert video.decode(stream[GOP]).shape == (96, 160, 3)
        assert video.pid not in (None, first)
        assert video.decode(stream[GOP + 1]).shape == (96, 160, 3)
    finally:
        video.close()


@pytest.mark.parametrize('codec', [H264, HEVC])
def test_a_new_size_starts_a_new_pipeline(codec: str) -> None:
    """A keyframe with new sequence parameters: the frames come out at the new size."""
    video = decoder()
    try:
        for packet in packets(codec, moving_frames(3)):
            assert video.decode(packet).shape == (96, 160, 3)
        for packet in packets(codec, moving_frames(3, width=128, height=64)):
            assert video.decode(packet).shape == (64, 128, 3)
        assert video.opened == 2
    finally:
        video.close()


def test_the_decoder_killed_mid_stream_is_said_once_and_restarted_at_the_keyframe() -> None:
    """
    The child killed: the next packet is rejected (decoder_unavailable, one line naming it).

    The packets up to the next keyframe wait for it, then a new child decodes.
    """
    stream = packets(H264, moving_frames(11))
    video = decoder()
    try:
        video.decode(stream[0])
        video.decode(stream[1])
        killed = video.pid
        assert killed is not None
        os.kill(killed, signal.SIGKILL)
        with pytest.raises(FrameRejected) as rejected:
            video.decode(stream[2])
        assert rejected.value.reason == 'decoder_unavailable'
        message = str(rejected.value)
        assert f'pid {killed}' in message and 'was killed' in message and '\n' not in message
        for packet in stream[3:GOP]:
            with pytest.raises(KeyframeWait):
                video.decode(packet)
        for packet in stream[GOP:]:
            assert video.decode(packet).shape == (96, 160, 3)
        assert video.pid != killed and video.opened == 2
    finally:
        video.close()


def test_decoders_that_cannot_run_are_refused_by_name_with_what_to_use() -> None:
    """At start, one line each: NVIDIA's FFmpeg decoders, a missing element, a wrong codec."""
    with pytest.raises(VideoDecoderError, match='gst:nvv4l2decoder') as nvidia_ffmpeg:
        open_video_decoder('h264_nvv4l2dec')
    assert "NVIDIA's own FFmpeg" in str(nvidia_ffmpeg.value)
    with pytest.raises(VideoDecoderError, match='nvidia-l4t-gstreamer') as jetson_only:
        open_video_decoder('gst:nvv4l2decoder')  # no Jetson here
    assert 'nvv4l2decoder' in str(jetson_only.value)
    with pytest.raises(VideoDecoderError, match='GStreamer has no nosuchdec'):
        open_video_decoder('gst:nosuchdec')
    with pytest.raises(VideoDecoderError, match='name the element'):
        open_video_decoder('gst:')
    h264_only = open_video_decoder('gst:avdec_h264')
    with pytest.raises(FrameRejected, match='does not decode hevc') as wrong:
        h264_only.decode(packets(HEVC, moving_frames(1))[0])
    assert wrong.value.reason == 'decoder_unavailable'
    for refused in (nvidia_ffmpeg, jetson_only):
        assert '\n' not in str(refused.value)


@pytest.mark.parametrize('codec', [H264, HEVC])
@pytest.mark.parametrize('width', [162, 164, 166, 170])
def test_widths_not_a_multiple_of_8_are_the_pyav_routes(codec: str, width: int) -> None:
    """
    y4menc's padded rows (GStreamer 1.22 pads each plane's rows to 4 bytes) are read as such.

    Every frame of a 162-, 164-, 166- and 170-wide stream is PyAV's, pixel for pixel.
    """
    stream = packets(codec, moving_frames(7, width, 90))
    video, reference = decoder(), VideoDecoder()
    try:
        for index, packet in enumerate(stream):
            rgb = video.decode(packet)
            assert rgb.shape == (90, width, 3)
            assert np.array_equal(rgb, reference.decode(packet)), index
    finally:
        video.close()


@pytest.mark.parametrize('codec', [H264, HEVC])
def test_packets_of_several_pictures_give_their_last_as_the_pyav_route(codec: str) -> None:
    """
    Packets of two and three pictures: each gives its last picture, and the stream goes on.

    Both routes decode every picture (the later ones refer to them) and give the same frames,
    those of decoding the pictures one packet each.
    """
    stream = packets(codec, moving_frames(9))
    joined = [stream[0], VideoPacket(stream[1].data + stream[2].data, stream[1].codec),
              stream[3], VideoPacket(b''.join(p.data for p in stream[4:7]), stream[4].codec),
              stream[7], stream[8]]
    last_pictures = [0, 2, 3, 6, 7, 8]
    one_by_one = VideoDecoder()
    expected = [one_by_one.decode(packet) for packet in stream]
    video, reference = decoder(), VideoDecoder()
    try:
        for packet, index in zip(joined, last_pictures):
            rgb = video.decode(packet)
            assert np.array_equal(rgb, reference.decode(packet)), index
            assert np.array_equal(rgb, expected[index]), index
    finally:
        video.close()


def stand_in(directory: Path, script: str) -> Path:
    """Write a `gst-launch-1.0` that runs `script` (sh), first on PATH for this test's children."""
    directory.mkdir(exist_ok=True)
    launcher = directory / 'gst-launch-1.0'
    launcher.write_text(f'#!/bin/sh\n{script}\n', encoding='utf-8')
    launcher.chmod(0o755)
    return directory


def test_a_decoder_that_reads_nothing_is_stalled_and_restarted(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """
    A child that never reads: decoder_stalled by the deadline, not a blocked write.

    A keyframe larger than the pipe does not fit; the write gives up at the deadline, the child is
    killed, and the next keyframe starts a new one.
    """
    pids = tmp_path / 'pids'
    reading_nothing = stand_in(tmp_path / 'bin', f'echo $$ >> {pids}; exec sleep 600')
    monkeypatch.setenv('PATH', f'{reading_nothing}{os.pathsep}{os.environ["PATH"]}')
    monkeypatch.setattr(video_gstreamer, 'FIRST_FRAME_TIMEOUT_S', 1.0)
    noise = np.random.default_rng(0).integers(0, 255, (720, 1280, 3), dtype=np.uint8)
    keyframe = packets(H264, [noise])[0]
    assert len(keyframe.data) > 1 << 16  # more than a pipe holds (64 KiB)
    video = decoder()
    try:
        for _ in range(2):
            started = time.monotonic()
            with pytest.raises(FrameRejected) as stalled:
                video.decode(keyframe)
            assert stalled.value.reason == 'decoder_stalled', stalled.value
            assert time.monotonic() - started < 3.0
        first, second = (int(pid) for pid in pids.read_text().split())
        assert first != second and not alive(first) and not alive(second)
    finally:
        video.close()


def test_a_stop_ends_a_decode_waiting_on_the_child_at_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """interrupt(), from another thread, kills the child the decode waits on: it returns now."""
    ignoring_stops = stand_in(tmp_path / 'bin', "trap '' TERM INT; exec sleep 600")
    monkeypatch.setenv('PATH', f'{ignoring_stops}{os.pathsep}{os.environ["PATH"]}')
    video = decoder()
    keyframe = packets(H264, moving_frames(1))[0]
    threading.Timer(0.5, video.interrupt).start()
    started = time.monotonic()
    try:
        with pytest.raises(FrameRejected) as ended:
            video.decode(keyframe)  # would wait FIRST_FRAME_TIMEOUT_S (20 s)
        assert ended.value.reason == 'decoder_unavailable'
        assert time.monotonic() - started < 2.0
        with pytest.raises(FrameRejected, match='stopping'):
            video.decode(keyframe)  # no new child once stopped
    finally:
        video.close()


def alive(pid: int) -> bool:
    """Return whether process `pid` exists (and is not a zombie)."""
    try:
        return 'State:\tZ' not in Path(f'/proc/{pid}/status').read_text()
    except OSError:
        return False
