"""
The YUV4MPEG2 stream GStreamer's y4menc writes, read into RGB frames as the PyAV route makes them.

Why a module of its own: how many bytes a frame takes is not in the stream. Its header gives the
size (W, H); the planes are I420, but the y4menc of GStreamer 1.22 (Debian 12; older ones too)
writes each buffer as it arrives, in GStreamer's default layout, where each row of a plane is
padded to 4 bytes: a width that is not a multiple of 8 has padded luma or chroma rows (162 wide:
luma rows of 164 bytes, chroma rows of 84). Later y4menc copies the planes tightly packed, as the
format means. Which one the installed y4menc does is measured once (video_gstreamer), and
`FrameLayout` reads both.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import cast

import av
import cv2
import numpy as np
from numpy.typing import NDArray

from triton_perception.errors import TritonPerceptionError

STREAM_MAGIC = b'YUV4MPEG2'
FRAME_MAGIC = b'FRAME'


class Y4mError(TritonPerceptionError, EOFError):
    """The stream is not the YUV4MPEG2 4:2:0 the pipeline writes (the child failed)."""


def _round_up_4(value: int) -> int:
    return (value + 3) // 4 * 4


@dataclass(frozen=True)
class FrameLayout:
    """
    Where an I420 frame's planes are in the bytes after a FRAME line.

    `padded`: rows in GStreamer's default strides (a multiple of 4 bytes), else tightly packed.
    """

    width: int
    height: int
    padded: bool

    @property
    def strides(self) -> tuple[int, int]:
        """Return the bytes per row of the luma plane and of each chroma plane."""
        chroma = (self.width + 1) // 2
        if self.padded:
            return _round_up_4(self.width), _round_up_4(chroma)
        return self.width, chroma

    @property
    def chroma_rows(self) -> int:
        """Return the rows of each chroma plane."""
        return (self.height + 1) // 2

    @property
    def size(self) -> int:
        """Return the bytes of one frame."""
        luma, chroma = self.strides
        return luma * self.height + 2 * chroma * self.chroma_rows

    def planes(self, data: bytes) -> bytes:
        """Return `data` (one frame, `size` bytes) as tightly packed I420 planes."""
        luma_stride, chroma_stride = self.strides
        if (luma_stride, chroma_stride) == (self.width, (self.width + 1) // 2):
            return data
        buffer = np.frombuffer(data, np.uint8, self.size)
        luma_size = luma_stride * self.height
        chroma_size = chroma_stride * self.chroma_rows
        luma = buffer[:luma_size].reshape(self.height, luma_stride)[:, :self.width]
        chromas = [buffer[luma_size + index * chroma_size:luma_size + (index + 1) * chroma_size]
                   .reshape(self.chroma_rows, chroma_stride)[:, :(self.width + 1) // 2]
                   for index in range(2)]
        return b''.join(np.ascontiguousarray(plane).tobytes() for plane in (luma, *chromas))


def stream_size(header: bytes) -> tuple[int, int]:
    """Return (width, height) of a YUV4MPEG2 stream header; Y4mError if it is not 4:2:0 Y4M."""
    fields = header.split()
    if not fields or fields[0] != STREAM_MAGIC:
        raise Y4mError
    values = {field[:1]: field[1:] for field in fields[1:]}
    if not values.get(b'C', b'420').startswith(b'420'):
        raise Y4mError
    try:
        return int(values[b'W']), int(values[b'H'])
    except (KeyError, ValueError):
        raise Y4mError from None


def i420_to_rgb(planes: bytes, width: int, height: int) -> NDArray[np.uint8]:
    """
    Return tightly packed I420 planes (odd sizes: chroma rounded up) as RGB uint8 [H, W, 3].

    Through FFmpeg's swscale as the PyAV route converts its frames (VideoFrame.to_ndarray), so
    that the same decoded picture gives the same pixels either way; OpenCV for odd sizes, which
    PyAV's yuv420p arrays cannot hold.
    """
    if width % 2 == 0 and height % 2 == 0:
        yuv = np.frombuffer(planes, np.uint8, width * height * 3 // 2).reshape(-1, width)
        frame = av.VideoFrame.from_ndarray(yuv, format='yuv420p')
        return cast(NDArray[np.uint8], frame.to_ndarray(format='rgb24'))
    even_width, even_height = width + width % 2, height + height % 2
    luma = np.frombuffer(planes, np.uint8, width * height).reshape(height, width)
    chroma_size = (even_width // 2) * (even_height // 2)
    chroma = np.frombuffer(planes, np.uint8, 2 * chroma_size, width * height)
    luma = np.pad(luma, ((0, even_height - height), (0, even_width - width)), mode='edge')
    stacked = np.concatenate([luma.reshape(-1), chroma]).reshape(even_height * 3 // 2, even_width)
    rgb = cv2.cvtColor(stacked, cv2.COLOR_YUV2RGB_I420)
    return np.ascontiguousarray(rgb[:height, :width])
