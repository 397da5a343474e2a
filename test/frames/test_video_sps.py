"""
The size an SPS declares, read without decoding, against what real encoders write and decode.

libx264 and libx265 (PyAV) encode frames of many sizes, with the syntax that moves the size's
bits: widths not a multiple of 8 and 16 (cropping, conformance window), 1920x1080 (coded 1088),
High-profile scaling lists, interlaced coding (field map units), baseline profile. The size read
must be the frame size FFmpeg decodes. Then a decoder with a pixel limit refuses such a stream as
`too_large` before any decoder is opened, packet after packet, and takes the next keyframe of a
stream within the limit.
"""
from __future__ import annotations

from fractions import Fraction
from typing import cast

import av
from av.video.codeccontext import VideoCodecContext
import numpy as np
import pytest

from support.video_packets import moving_frames, packets
from triton_perception.frames import (FrameRejected, H264, HEVC, open_video_decoder, VIDEO_FORMATS,
                                      VideoDecoder, VideoPacket)
from triton_perception.frames.video_bitstream import nal_units, packet_units
from triton_perception.frames.video_sps import h264_sps_size

SIZES = [(160, 96), (162, 90), (166, 94), (170, 98), (642, 362), (1280, 720), (1920, 1080)]
ENCODERS = {H264: 'libx264', HEVC: 'libx265'}


def first_packet(codec: str, width: int, height: int, options: dict[str, str]) -> bytes:
    """Return the keyframe packet of one black frame encoded by `codec` with `options`."""
    context = cast(VideoCodecContext, av.CodecContext.create(ENCODERS[codec], 'w'))
    context.width, context.height, context.pix_fmt = width, height, 'yuv420p'
    context.time_base, context.framerate = Fraction(1, 10), Fraction(10)
    context.options = {'bf': '0', 'tune': 'zerolatency', **options}  # a frame out per packet
    frame = av.VideoFrame.from_ndarray(np.zeros((height, width, 3), np.uint8), format='rgb24')
    frame.pts = 0
    return b''.join(bytes(packet) for packet in [*context.encode(frame), *context.encode(None)])


def decoded_size(codec: str, data: bytes) -> tuple[int, int]:
    """Return the size FFmpeg decodes the packet to."""
    rgb = VideoDecoder().decode(VideoPacket(data, VIDEO_FORMATS[codec]))
    return rgb.shape[1], rgb.shape[0]


@pytest.mark.parametrize('codec', [H264, HEVC])
@pytest.mark.parametrize('size', SIZES, ids=[f'{w}x{h}' for w, h in SIZES])
def test_the_size_read_is_the_size_decoded(codec: str, size: tuple[int, int]) -> None:
    """Every size, cropped or not, is read from the SPS as FFmpeg decodes it."""
    quiet = {} if codec == H264 else {'x265-params': 'log-level=none'}
    data = first_packet(codec, *size, quiet)
    assert packet_units(data, codec).size == size == decoded_size(codec, data)


@pytest.mark.parametrize('options,size', [
    ({'x264-params': 'cqm=jvt'}, (1920, 1080)),                        # scaling lists in the SPS
    ({'flags': '+ildct', 'x264-params': 'interlaced=1'}, (720, 576)),   # field map units
    ({'profile': 'baseline'}, (352, 290)),                             # no High-profile fields
], ids=['scaling-lists', 'interlaced', 'baseline'])
def test_h264_syntax_before_the_size_is_read_past(options: dict[str, str],
                                                  size: tuple[int, int]) -> None:
    """Scaling matrices, field coding and the baseline profile move the size's bits."""
    data = first_packet(H264, *size, options)
    assert packet_units(data, H264).size == size == decoded_size(H264, data)


def test_a_malformed_sps_gives_no_size() -> None:
    """A truncated SPS, or one of runaway exp-Golomb codes, is not read as a size."""
    sps = next(unit for unit in nal_units(packets(H264, moving_frames(1))[0].data)
               if unit[0] & 0x1F == 7)
    assert h264_sps_size(sps) == (160, 96)
    assert h264_sps_size(sps[:6]) is None
    assert h264_sps_size(sps[:4] + b'\x00' * 8) is None


@pytest.mark.parametrize('route', ['', 'gst:avdec'])
@pytest.mark.parametrize('codec', [H264, HEVC])
def test_a_stream_over_the_limit_is_refused_before_any_decoder_opens(
        codec: str, route: str) -> None:
    """
    Every packet of a 162x90 stream against a limit of 160x90 pixels: too_large, no decoder.

    The P-frames, which carry no SPS, are refused as their stream; the keyframe of a stream
    within the limit opens the decoder and is decoded.
    """
    decoder = open_video_decoder(route, max_pixels=160 * 90)
    try:
        for packet in packets(codec, moving_frames(6, 162, 90)):
            with pytest.raises(FrameRejected) as refused:
                decoder.decode(packet)
            assert refused.value.reason == 'too_large'
            assert '162x90' in str(refused.value)
        assert decoder.opened == 0 and decoder.decoder_name == ''
        small = packets(codec, moving_frames(2, 160, 90))
        assert [decoder.decode(packet).shape for packet in small] == [(90, 160, 3)] * 2
        with pytest.raises(FrameRejected, match='too_large|over max_image_pixels'):
            decoder.decode(packets(codec, moving_frames(1, 162, 90))[0])
        assert decoder.opened == 1
    finally:
        decoder.close()
