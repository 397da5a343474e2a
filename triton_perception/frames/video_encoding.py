"""
RGB frames -> H.264 or H.265 packets, as a video camera publishes them (PyAV, libx264/libx265).

For `bag make --video`, the bench and the tests. Each packet is one frame in Annex B, no
B-frames (zero-latency tuning), and every keyframe repeats the stream's parameter sets, so that
a stream (or a bag) joined or cut at any keyframe decodes from there: what
foxglove_msgs/CompressedVideo asks for, and what ffmpeg_image_transport publishes.
"""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from fractions import Fraction
from typing import cast, TYPE_CHECKING

import av
from av.video.codeccontext import VideoCodecContext
import numpy as np
from numpy.typing import NDArray

from triton_perception.frames.video_bitstream import H264, HEVC

if TYPE_CHECKING:
    from av.stream import Stream

DEFAULT_GOP = 10  # frames from one keyframe to the next
ENCODERS = {H264: 'libx264', HEVC: 'libx265'}
# How FFMPEGPacket's `encoding` and CompressedVideo's `format` name each codec.
PACKET_ENCODINGS = {H264: 'h264;yuv420p;rgb8;rgb8', HEVC: 'hevc;yuv420p;rgb8;rgb8'}
VIDEO_FORMATS = {H264: 'h264', HEVC: 'h265'}


@dataclass(frozen=True)
class EncodedPacket:
    """One frame's packet: its data, whether it is a keyframe, and its frame's index."""

    data: bytes
    keyframe: bool
    index: int


class VideoEncoder:
    """Encodes RGB frames of one size into packets of `codec` (H264 or HEVC)."""

    def __init__(self, codec: str, width: int, height: int, *, rate_hz: float = 10.0,
                 gop: int = DEFAULT_GOP, crf: int = 23) -> None:
        """Encode `width` x `height` frames, a keyframe every `gop` frames, quality `crf`."""
        context = cast(VideoCodecContext, av.CodecContext.create(ENCODERS[codec], 'w'))
        context.width, context.height, context.pix_fmt = width, height, 'yuv420p'
        rate = Fraction(rate_hz).limit_denominator(1000)
        context.time_base, context.framerate = 1 / rate, rate
        parameters = 'x264-params' if codec == H264 else 'x265-params'
        quiet = '' if codec == H264 else ':log-level=none'
        context.options = {'g': str(gop), 'keyint_min': str(gop), 'bf': '0',
                           'preset': 'veryfast', 'tune': 'zerolatency', 'crf': str(crf),
                           parameters: f'repeat-headers=1:scenecut=0{quiet}'}
        self._context = context
        self._index = 0

    def encode(self, rgb: NDArray[np.uint8]) -> Iterator[EncodedPacket]:
        """Encode one RGB uint8 [H, W, 3] frame; yields its packet (zero latency: at once)."""
        frame = av.VideoFrame.from_ndarray(np.ascontiguousarray(rgb), format='rgb24')
        frame.pts = self._index
        self._index += 1
        yield from self._packets(self._context.encode(frame))

    def flush(self) -> Iterator[EncodedPacket]:
        """Yield what the encoder still holds."""
        yield from self._packets(self._context.encode(None))

    @staticmethod
    def _packets(packets: list[av.Packet[Stream]]) -> Iterator[EncodedPacket]:
        for packet in packets:
            yield EncodedPacket(bytes(packet), bool(packet.is_keyframe), int(packet.pts or 0))
