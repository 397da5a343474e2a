"""
What an H.264 or H.265 packet holds, read from its Annex B NAL units without decoding it.

A video packet is one frame's NAL units, each after a start code (00 00 01 or 00 00 00 01),
as ffmpeg_image_transport and foxglove_msgs/CompressedVideo carry them. A decoder can start
only at a keyframe (H.264 IDR, H.265 IRAP), which carries the stream's parameter sets (H.264
SPS and PPS, H.265 VPS, SPS and PPS); sequence parameters (H.264 SPS, H.265 VPS and SPS) that
change mean a new stream (another size, profile or encoder), for which the decoder is opened
again. A packet may hold several pictures (access units); `access_units` splits it, so that every
route decodes each of them. The size a packet's SPS declares is read here too (video_sps), to
refuse a too-large stream before any decoder allocates for it.
"""
from __future__ import annotations

from dataclasses import dataclass
import re

from triton_perception.frames.accounting import FrameRejected
from triton_perception.frames.video_sps import h264_sps_size, hevc_sps_size

H264 = 'h264'
HEVC = 'hevc'
# The FFmpeg decoder of each codec; a codec token of ffmpeg_image_transport (the encoder's
# name, e.g. libx264, h264_nvenc, hevc_nvenc) or a CompressedVideo format names its codec.
DEFAULT_DECODERS = {H264: 'h264', HEVC: 'hevc'}
_H264_IDR = 5
_H264_SEQUENCE = frozenset({7})          # SPS
_HEVC_IRAP = range(16, 24)               # BLA, IDR, CRA and reserved IRAP types
_HEVC_SEQUENCE = frozenset({32, 33})     # VPS, SPS
_H264_SPS, _HEVC_SPS = 7, 33
# Units that end an access unit rather than start the next (H.264: end of sequence, end of
# stream, filler; H.265: end of sequence, end of bitstream, filler, suffix SEI).
_H264_TRAILING = frozenset({10, 11, 12})
_HEVC_TRAILING = frozenset({36, 37, 38, 40})
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
    """
    A packet's keyframe flag and its sequence parameters (their NAL units, in order).

    `size`: the largest (width, height) its SPS units declare, None without a readable SPS.
    """

    keyframe: bool
    sequence: bytes
    size: tuple[int, int] | None = None


def _unit_spans(data: bytes) -> list[tuple[int, int, int]]:
    """Return (start code start, unit start, unit end) of each NAL unit of Annex B `data`."""
    matches = list(_START_CODE.finditer(data))
    spans = []
    for index, match in enumerate(matches):
        end = matches[index + 1].start() if index + 1 < len(matches) else len(data)
        while end > match.end() and data[end - 1] == 0:
            end -= 1  # a 4-byte start code's leading zero, trailing zero bytes
        if end > match.end():
            spans.append((match.start(), match.end(), end))
    return spans


def nal_units(data: bytes) -> list[bytes]:
    """Return the NAL units of Annex B `data` (empty when it holds no start code)."""
    return [data[start:end] for _prefix, start, end in _unit_spans(data)]


def _kind(unit: bytes, codec: str) -> int:
    return unit[0] & 0x1F if codec == H264 else (unit[0] >> 1) & 0x3F


def packet_units(data: bytes, codec: str) -> PacketUnits:
    """Return whether the packet of `codec` holds a keyframe, its sequence parameters and size."""
    keyframe = False
    sequence = []
    sizes = []
    for unit in nal_units(data):
        kind = _kind(unit, codec)
        if codec == H264:
            keyframe = keyframe or kind == _H264_IDR
            in_sequence = kind in _H264_SEQUENCE
        else:
            keyframe = keyframe or kind in _HEVC_IRAP
            in_sequence = kind in _HEVC_SEQUENCE
        if in_sequence:
            sequence.append(unit)
        size = (h264_sps_size(unit) if codec == H264 and kind == _H264_SPS
                else hevc_sps_size(unit) if codec == HEVC and kind == _HEVC_SPS else None)
        if size is not None:
            sizes.append(size)
    largest = max(sizes, key=lambda size: size[0] * size[1], default=None)
    return PacketUnits(keyframe, b'\x00\x00\x01'.join(sequence), largest)


def _starts_picture(unit: bytes, codec: str) -> bool:
    """Return whether `unit` is a picture's first slice (H.264 first_mb_in_slice 0, H.265 flag)."""
    kind = _kind(unit, codec)
    if codec == H264:
        return 1 <= kind <= 5 and len(unit) > 1 and bool(unit[1] & 0x80)
    return kind < 32 and len(unit) > 2 and bool(unit[2] & 0x80)


def picture_count(data: bytes, codec: str) -> int:
    """
    Return how many pictures the packet holds (the frames a decoder gives for it).

    Slices none of which starts a picture (its first slice lost) count as one, which the
    decoder may give or drop; a packet of no slice holds none.
    """
    units = nal_units(data)
    starts = sum(_starts_picture(unit, codec) for unit in units)
    return starts or int(any(_is_slice(unit, codec) for unit in units))


def _is_slice(unit: bytes, codec: str) -> bool:
    kind = _kind(unit, codec)
    return 1 <= kind <= 5 if codec == H264 else kind < 32


def access_units(data: bytes, codec: str) -> list[bytes]:
    """
    Return the packet split into one chunk per picture (access unit), in order.

    A decoder fed a packet of two pictures decodes the first and loses the second (FFmpeg
    without its parser), so each route feeds or counts the chunks. A chunk starts with the units
    that precede its first slice (parameter sets, SEI, a delimiter); a packet with no picture,
    or one, is returned whole.
    """
    spans = _unit_spans(data)
    cuts = []
    seen_slice = False
    prefix_start: int | None = None  # where the units after the last slice begin
    for start_code, start, end in spans:
        unit = data[start:end]
        if _is_slice(unit, codec):
            if seen_slice and _starts_picture(unit, codec):
                cuts.append(start_code if prefix_start is None else prefix_start)
            seen_slice, prefix_start = True, None
        elif seen_slice and prefix_start is None and _kind(unit, codec) not in (
                _H264_TRAILING if codec == H264 else _HEVC_TRAILING):
            prefix_start = start_code
    bounds = [0, *cuts, len(data)]
    return [data[begin:finish] for begin, finish in zip(bounds, bounds[1:])]
