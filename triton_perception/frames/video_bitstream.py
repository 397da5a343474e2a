"""
What an H.264 or H.265 packet holds, read from its Annex B NAL units without decoding it.

A video packet is one frame's NAL units, each after a start code (00 00 01 or 00 00 00 01),
as ffmpeg_image_transport and foxglove_msgs/CompressedVideo carry them. A decoder can start
only at a keyframe (H.264 IDR, H.265 IRAP), which carries the stream's parameter sets (H.264
SPS and PPS, H.265 VPS, SPS and PPS); sequence parameters (H.264 SPS, H.265 VPS and SPS) that
change mean a new stream (another size, profile or encoder), for which the decoder is opened
again.
"""
from __future__ import annotations

from dataclasses import dataclass
import re

from triton_perception.frames.accounting import FrameRejected

H264 = 'h264'
HEVC = 'hevc'
# The FFmpeg decoder of each codec; a codec token of ffmpeg_image_transport (the encoder's
# name, e.g. libx264, h264_nvenc, hevc_nvenc) or a CompressedVideo format names its codec.
DEFAULT_DECODERS = {H264: 'h264', HEVC: 'hevc'}
_H264_IDR = 5
_H264_SEQUENCE = frozenset({7})          # SPS
_HEVC_IRAP = range(16, 24)               # BLA, IDR, CRA and reserved IRAP types
_HEVC_SEQUENCE = frozenset({32, 33})     # VPS, SPS
_START_CODE = re.compile(b'\x00\x00\x01')


class UnsupportedVideo(FrameRejected):
    """A packet of a codec other than H.264 and H.265 (reason `unsupported_format`)."""


def codec_of(name: str) -> str:
    """
    Return the codec (H264 or HEVC) named by a CompressedVideo format or an FFmpeg codec token.

    Raises UnsupportedVideo for any other codec.
    """
    token = name.strip().lower()
    if '264' in token or 'avc' in token:
        return H264
    if '265' in token or 'hevc' in token:
        return HEVC
    raise UnsupportedVideo('unsupported_format', f'video format {name!r} is not H.264 or H.265 '
                           '(h264, h265 or hevc): publish one of those')


@dataclass(frozen=True)
class PacketUnits:
    """A packet's keyframe flag and its sequence parameters (their NAL units, in order)."""

    keyframe: bool
    sequence: bytes


def nal_units(data: bytes) -> list[bytes]:
    """Return the NAL units of Annex B `data` (empty when it holds no start code)."""
    starts = [match.end() for match in _START_CODE.finditer(data)]
    units = []
    for index, start in enumerate(starts):
        end = starts[index + 1] - 3 if index + 1 < len(starts) else len(data)
        unit = data[start:end].rstrip(b'\x00')  # a 4-byte start code's leading zero
        if unit:
            units.append(unit)
    return units


def packet_units(data: bytes, codec: str) -> PacketUnits:
    """Return whether the packet of `codec` holds a keyframe, and its sequence parameters."""
    keyframe = False
    sequence = []
    for unit in nal_units(data):
        if codec == H264:
            kind = unit[0] & 0x1F
            keyframe = keyframe or kind == _H264_IDR
            in_sequence = kind in _H264_SEQUENCE
        else:
            kind = (unit[0] >> 1) & 0x3F
            keyframe = keyframe or kind in _HEVC_IRAP
            in_sequence = kind in _HEVC_SEQUENCE
        if in_sequence:
            sequence.append(unit)
    return PacketUnits(keyframe, b'\x00\x00\x01'.join(sequence))
