"""
The video decoder without DDS: packets of H.264 and H.265 streams made here, decoded in order.

A stream joined between keyframes waits for the next one (counted, not an error); a lost or
corrupt packet makes it wait again; a new size opens the decoder again; every frame after a
keyframe comes out with the pixels that went in (within the codec's loss).
"""
from __future__ import annotations

import queue

from foxglove_msgs.msg import CompressedVideo
import numpy as np
import pytest

from support.video_packets import GOP, moving_frames, packets
from triton_perception.frames import (FrameAccounting, FrameRejected, H264, HEVC, KeyframeWait,
                                      ReadImage, VideoDecoder, VideoDecoderError, VideoPacket,
                                      WAITING_FOR_KEYFRAME)
from triton_perception.frames.video_bitstream import codec_of, nal_units, packet_units
from triton_perception.nodes.video_input import VideoFrames
from triton_perception.parameters import FOXGLOVE


@pytest.mark.parametrize('codec', [H264, HEVC])
def test_every_frame_from_the_first_keyframe_on_is_decoded(codec: str) -> None:
    """Packets before the first keyframe wait for it; from it on each gives its own frame."""
    frames = moving_frames(12)
    stream = packets(codec, frames)
    keyframes = [packet_units(p.data, codec).keyframe for p in stream]
    assert keyframes == [index % GOP == 0 for index in range(12)]
    decoder = VideoDecoder()
    for packet in stream[1:GOP]:  # joined after the first keyframe
        with pytest.raises(KeyframeWait) as waiting:
            decoder.decode(packet)
        assert waiting.value.reason == WAITING_FOR_KEYFRAME
    for index in range(GOP, 12):
        rgb = decoder.decode(stream[index])
        assert rgb.shape == frames[index].shape and rgb.dtype == np.uint8
        error = np.abs(rgb.astype(np.int16) - frames[index]).mean()
        assert error < 6.0, (index, error)
    assert decoder.opened == 1 and decoder.decoder_name == {H264: 'h264', HEVC: 'hevc'}[codec]


def test_a_lost_packet_waits_for_the_next_keyframe() -> None:
    """After a lost packet the frames up to the next keyframe are not served, then all are."""
    stream = packets(H264, moving_frames(11))
    decoder = VideoDecoder()
    decoder.decode(stream[0])
    decoder.decode(stream[1])
    decoder.packet_lost()  # stream[2] never arrived
    for packet in stream[3:GOP]:
        with pytest.raises(KeyframeWait):
            decoder.decode(packet)
    for packet in stream[GOP:]:
        decoder.decode(packet)


def test_a_corrupt_packet_is_rejected_with_its_reason_and_the_stream_resumes() -> None:
    """A packet FFmpeg cannot decode is rejected (corrupt_video); the next keyframe resumes."""
    stream = packets(H264, moving_frames(11))
    decoder = VideoDecoder()
    decoder.decode(stream[0])
    slice_unit = nal_units(stream[1].data)[-1]
    garbage = b'\x00\x00\x00\x01' + slice_unit[:1] + bytes(range(256)) * 4
    with pytest.raises(FrameRejected) as rejected:
        decoder.decode(VideoPacket(garbage, 'h264'))
    assert rejected.value.reason == 'corrupt_video' and not isinstance(rejected.value,
                                                                       KeyframeWait)
    with pytest.raises(KeyframeWait):
        decoder.decode(stream[2])
    assert decoder.decode(stream[GOP]).shape == (96, 160, 3)


@pytest.mark.parametrize('codec', [H264, HEVC])
def test_a_new_size_opens_the_decoder_again(codec: str) -> None:
    """A stream that changes size (a keyframe with new parameters) decodes at the new size."""
    decoder = VideoDecoder()
    for packet in packets(codec, moving_frames(3)):
        assert decoder.decode(packet).shape == (96, 160, 3)
    for packet in packets(codec, moving_frames(3, width=128, height=64)):
        assert decoder.decode(packet).shape == (64, 128, 3)
    assert decoder.opened == 2


def test_codecs_and_decoders_are_named_or_refused_in_one_line() -> None:
    """Codec tokens of both messages are understood; other codecs and decoders are refused."""
    assert [codec_of(name) for name in ('h264', 'libx264', 'h264_nvenc', 'h265', 'hevc_nvenc',
                                        'libx265')] == [H264] * 3 + [HEVC] * 3
    with pytest.raises(FrameRejected, match='not H.264 or H.265') as rejected:
        VideoDecoder().decode(VideoPacket(b'\x00\x00\x01\x65', 'vp9'))
    assert rejected.value.reason == 'unsupported_format'
    with pytest.raises(VideoDecoderError, match='no such decoder') as refused:
        VideoDecoder('h264_nosuch')
    assert '\n' not in str(refused.value)
    hevc_decoder = VideoDecoder('hevc')
    with pytest.raises(FrameRejected, match='does not decode h264') as wrong:
        hevc_decoder.decode(packets(H264, moving_frames(1))[0])
    assert wrong.value.reason == 'decoder_unavailable'


def test_the_node_side_serves_each_packet_with_its_header_and_waits_after_a_loss() -> None:
    """
    nodes.video_input, without DDS: a CompressedVideo gives an rgb8 frame with its header.

    The packets are decoded on the camera's own thread, in order; a loss the transport counts
    makes the next packets wait for a keyframe, counted as lost.
    """
    frames = moving_frames(8)
    stream = packets(H264, frames)
    accounting = FrameAccounting()
    video = VideoFrames(FOXGLOVE, '')
    assert video.relative_topic == 'image/foxglove'
    outcomes: queue.Queue[object] = queue.Queue()
    on_packet = video.decoding(outcomes.put)

    def message(index: int) -> CompressedVideo:
        result = CompressedVideo(frame_id='cam', data=stream[index].data, format='h264')
        result.timestamp.sec = 100 + index
        return result

    def frame_of(index: int) -> object:
        on_packet(message(index))
        return outcomes.get(timeout=10.0)
    try:
        served = [frame_of(index) for index in range(3)]
        for index, frame in enumerate(served):
            assert isinstance(frame, ReadImage) and frame.encoding == 'rgb8'
            assert (frame.header.stamp.sec, frame.header.frame_id) == (100 + index, 'cam')
            assert frame.data.reshape(96, 160, 3).shape == frames[index].shape
        losses = video.losses_into(accounting)  # what the loss counter counts into
        assert losses.lost_before_node(1, 'sequence gap') == 1  # packet 3 never arrived
        assert isinstance(frame_of(4), KeyframeWait)
        assert isinstance(frame_of(GOP), ReadImage)
        assert accounting.snapshot().reasons == {'lost before the node: sequence gap': 1}
    finally:
        video.close()
