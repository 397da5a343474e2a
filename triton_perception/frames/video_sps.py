"""
The picture size an H.264 or H.265 sequence parameter set declares, read without decoding.

Why: a decoder allocates its picture buffers from the SPS alone, so a stream of few-byte P-frames
whose SPS claims 8192x4320 costs about 50 MB a frame (and an RGB copy) before any size check
after decoding could refuse it. Read here, the size is checked against `max_image_pixels` before
the packet reaches FFmpeg or GStreamer (video_decoding.StreamDecoder).

The size is the one the decoder outputs: the coded size less the frame cropping (H.264) or the
conformance window (H.265), so that a 1920x1080 stream (coded 1920x1088) counts 1920x1080, as
the decoded frame would. Only the syntax up to the cropping is read (ITU-T H.264 7.3.2.1.1,
H.265 7.3.2.2); anything malformed gives None, and the decoder then judges the packet.
"""
from __future__ import annotations

from typing import Callable

from triton_perception.errors import TritonPerceptionError

# H.264 profiles whose SPS carries chroma format, bit depths and scaling lists (7.3.2.1.1).
_HIGH_PROFILES = frozenset({100, 110, 122, 244, 44, 83, 86, 118, 128, 138, 139, 134, 135})
# chroma_format_idc -> (SubWidthC, SubHeightC); 0 (monochrome) crops in luma samples.
_CHROMA_UNITS = {0: (1, 1), 1: (2, 2), 2: (2, 1), 3: (1, 1)}
_MAX_LEADING_ZEROS = 31  # a ue(v) of 32 bits at most; more is not a valid stream


class _Malformed(TritonPerceptionError, ValueError):
    """The SPS ends early or holds a value out of range."""


class _Bits:
    """Reads an RBSP (emulation prevention bytes removed) bit by bit, most significant first."""

    def __init__(self, rbsp: bytes) -> None:
        self._value = int.from_bytes(rbsp, 'big')
        self._left = 8 * len(rbsp)

    def bits(self, count: int) -> int:
        """Return the next `count` bits as an unsigned integer."""
        if count > self._left:
            raise _Malformed
        self._left -= count
        return (self._value >> self._left) & ((1 << count) - 1)

    def flag(self) -> bool:
        """Return the next bit."""
        return self.bits(1) == 1

    def ue(self) -> int:
        """Return the value of the next unsigned exp-Golomb code (descriptor ue, v bits)."""
        zeros = 0
        while not self.bits(1):
            zeros += 1
            if zeros > _MAX_LEADING_ZEROS:
                raise _Malformed
        return (1 << zeros) - 1 + self.bits(zeros)

    def se(self) -> int:
        """Return the value of the next signed exp-Golomb code (descriptor se, v bits)."""
        code = self.ue()
        return (code + 1) // 2 if code % 2 else -(code // 2)


def rbsp(unit: bytes) -> bytes:
    """Return a NAL unit's payload without its emulation prevention bytes (00 00 03 -> 00 00)."""
    return unit.replace(b'\x00\x00\x03', b'\x00\x00')


def h264_sps_size(unit: bytes) -> tuple[int, int] | None:
    """Return (width, height) that an H.264 SPS NAL unit (header included) declares, or None."""
    return _size(_h264_size, rbsp(unit[1:]))


def hevc_sps_size(unit: bytes) -> tuple[int, int] | None:
    """Return (width, height) that an H.265 SPS NAL unit (header included) declares, or None."""
    return _size(_hevc_size, rbsp(unit[2:]))


def _size(read: Callable[[_Bits], tuple[int, int]], payload: bytes) -> tuple[int, int] | None:
    try:
        width, height = read(_Bits(payload))
    except _Malformed:
        return None
    return (width, height) if width > 0 and height > 0 else None


def _h264_size(bits: _Bits) -> tuple[int, int]:
    profile = bits.bits(8)
    bits.bits(16)  # constraint flags, reserved bits, level_idc
    bits.ue()  # seq_parameter_set_id
    chroma_format, separate_planes = 1, False
    if profile in _HIGH_PROFILES:
        chroma_format = bits.ue()
        if chroma_format > 3:
            raise _Malformed
        if chroma_format == 3:
            separate_planes = bits.flag()
        bits.ue()  # bit_depth_luma_minus8
        bits.ue()  # bit_depth_chroma_minus8
        bits.flag()  # qpprime_y_zero_transform_bypass_flag
        if bits.flag():  # seq_scaling_matrix_present_flag
            for index in range(8 if chroma_format != 3 else 12):
                if bits.flag():  # seq_scaling_list_present_flag
                    _skip_scaling_list(bits, 16 if index < 6 else 64)
    bits.ue()  # log2_max_frame_num_minus4
    order_type = bits.ue()
    if order_type == 0:
        bits.ue()  # log2_max_pic_order_cnt_lsb_minus4
    elif order_type == 1:
        bits.flag()  # delta_pic_order_always_zero_flag
        bits.se()  # offset_for_non_ref_pic
        bits.se()  # offset_for_top_to_bottom_field
        for _ in range(bits.ue()):  # num_ref_frames_in_pic_order_cnt_cycle
            bits.se()
    elif order_type != 2:
        raise _Malformed
    bits.ue()  # max_num_ref_frames
    bits.flag()  # gaps_in_frame_num_value_allowed_flag
    width_in_macroblocks = bits.ue() + 1
    height_in_map_units = bits.ue() + 1
    frame_macroblocks_only = bits.flag()
    if not frame_macroblocks_only:
        bits.flag()  # mb_adaptive_frame_field_flag
    bits.flag()  # direct_8x8_inference_flag
    field_factor = 1 if frame_macroblocks_only else 2
    width, height = 16 * width_in_macroblocks, 16 * field_factor * height_in_map_units
    if bits.flag():  # frame_cropping_flag
        left, right, top, bottom = bits.ue(), bits.ue(), bits.ue(), bits.ue()
        unit_x, unit_y = _CHROMA_UNITS[0 if separate_planes else chroma_format]
        width -= unit_x * (left + right)
        height -= unit_y * field_factor * (top + bottom)
    return width, height


def _skip_scaling_list(bits: _Bits, size: int) -> None:
    last, following = 8, 8
    for _ in range(size):
        if following:
            following = (last + bits.se() + 256) % 256
        last = following or last


def _hevc_size(bits: _Bits) -> tuple[int, int]:
    bits.bits(4)  # sps_video_parameter_set_id
    sub_layers = bits.bits(3)  # sps_max_sub_layers_minus1
    bits.flag()  # sps_temporal_id_nesting_flag
    _skip_profile_tier_level(bits, sub_layers)
    bits.ue()  # sps_seq_parameter_set_id
    chroma_format = bits.ue()
    if chroma_format > 3:
        raise _Malformed
    separate_planes = chroma_format == 3 and bits.flag()
    width, height = bits.ue(), bits.ue()  # pic_width/height_in_luma_samples
    if bits.flag():  # conformance_window_flag
        left, right, top, bottom = bits.ue(), bits.ue(), bits.ue(), bits.ue()
        unit_x, unit_y = _CHROMA_UNITS[0 if separate_planes else chroma_format]
        width -= unit_x * (left + right)
        height -= unit_y * (top + bottom)
    return width, height


def _skip_profile_tier_level(bits: _Bits, sub_layers: int) -> None:
    """Skip profile_tier_level(1, sps_max_sub_layers_minus1) (H.265 7.3.3)."""
    bits.bits(88)  # general profile space, tier, idc, compatibility and constraint flags
    bits.bits(8)  # general_level_idc
    present = [(bits.flag(), bits.flag()) for _ in range(sub_layers)]
    if sub_layers:
        bits.bits(2 * (8 - sub_layers))  # reserved_zero_2bits
    for profile_present, level_present in present:
        bits.bits((88 if profile_present else 0) + (8 if level_present else 0))
