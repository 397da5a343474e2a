"""
H.264 and H.265 packets -> RGB frames through a GStreamer decoder element, in a child process.

`video_decoder: gst:ELEMENT` runs `gst-launch-1.0` as a child: the packets go in on its standard
input as an Annex B byte stream, each followed by two access unit delimiters (the second ends the
first, which ends the access unit: the parser hands it on at once instead of waiting for the next
packet), through h264parse or h265parse, ELEMENT and a converter to I420, and the frames come out
on its standard output as YUV4MPEG2 (y4menc: a header with the size, then each frame), here turned
into RGB by FFmpeg's swscale as PyAV turns its own frames (the same stream gives the same pixels
either way). On a Jetson ELEMENT is `nvv4l2decoder`, the hardware decoder (NVDEC), with
`nvvidconv` to bring its frames out of NVMM memory; elsewhere a software element takes the same
place (`avdec_h264`, `avdec_h265`, or `avdec` for either by the stream's codec, FFmpeg's
decoders in gst-libav), so that everything but the element's name runs the same everywhere.

One pipeline per stream: a keyframe with new sequence parameters (another size) or codec starts
a new one. Each packet must give its frame within FRAME_TIMEOUT_S: a packet whose frame does not
come (the element drops corrupt pictures) is rejected as corrupt, and the pipeline, which might
still send it late, is ended and started again at the next keyframe. A pipeline that ended (killed,
crashed) rejects the packet as `decoder_unavailable` and starts again at the next keyframe too.
The accounting and the waits are those of the PyAV route (video_decoding.StreamDecoder).
"""
from __future__ import annotations

import os
import re
import select
import shutil
import signal
import subprocess
import tempfile
import time
from typing import cast, IO

import av
import cv2
import numpy as np
from numpy.typing import NDArray

from triton_perception.frames.accounting import FrameRejected
from triton_perception.frames.video_bitstream import H264, HEVC
from triton_perception.frames.video_decoding import (CORRUPT_VIDEO, DECODER_UNAVAILABLE,
                                                     GST_PREFIX, StreamDecoder,
                                                     VideoDecoderError)
from triton_perception.system import ending_with_parent, with_parent_pid

PREFIX = GST_PREFIX
LAUNCH = 'gst-launch-1.0'
INSPECT = 'gst-inspect-1.0'
FRAME_TIMEOUT_S = 2.0      # a decoded frame's longest wait once the pipeline runs
FIRST_FRAME_TIMEOUT_S = 20.0  # the first one also waits for the process and the plugin registry
# An access unit delimiter starts the next access unit for the parser once the delimiter itself is
# complete, which the next start code tells (H.264 nal_unit_type 9, H.265 35; H.264
# primary_pic_type 7, H.265 pic_type 2: any slice type).
DELIMITERS = {H264: b'\x00\x00\x00\x01\x09\xf0', HEVC: b'\x00\x00\x00\x01\x46\x01\x50'}
PARSERS = {H264: 'h264parse', HEVC: 'h265parse'}
_START_CODE = re.compile(b'\x00\x00\x01')
SOFTWARE = {H264: 'avdec_h264', HEVC: 'avdec_h265'}
AVDEC_PROPERTIES = 'max-threads=1 output-corrupt=false max-errors=-1 direct-rendering=false'
# Element -> (its properties, the converter that brings its frames to system-memory I420, the
# package that brings it). avdec: one thread (frame threads would hold frames back), corrupt
# pictures dropped, errors never fatal, frames in standard planes (not the decoder's padded
# ones, which y4menc would write as they are). nvv4l2decoder: no picture buffer held back for
# reordering (streams with B-frames are not served), NVMM frames out through nvvidconv.
ELEMENTS = {
    'avdec_h264': (AVDEC_PROPERTIES, 'videoconvert', 'gstreamer1.0-libav'),
    'avdec_h265': (AVDEC_PROPERTIES, 'videoconvert', 'gstreamer1.0-libav'),
    'nvv4l2decoder': ('disable-dpb=true', 'nvvidconv', 'nvidia-l4t-gstreamer (JetPack)'),
}
# The other elements of the pipeline and their packages (Debian and Ubuntu names).
PLUMBING = {'fdsrc': 'gstreamer1.0-tools', 'queue': 'gstreamer1.0-tools',
            'h264parse': 'gstreamer1.0-plugins-bad', 'h265parse': 'gstreamer1.0-plugins-bad',
            'videoconvert': 'gstreamer1.0-plugins-base', 'y4menc': 'gstreamer1.0-plugins-good',
            'fdsink': 'gstreamer1.0-tools'}


def element_for(name: str, codec: str) -> str:
    """Return the element that decodes `codec` for `video_decoder` value `name` (gst:...)."""
    element = name[len(PREFIX):]
    return SOFTWARE[codec] if element == 'avdec' else element


def pipeline(element: str, codec: str) -> list[str]:
    """Return gst-launch-1.0's arguments for `element` decoding `codec` from stdin to stdout."""
    properties, converter, _package = ELEMENTS.get(element, ('', 'videoconvert', ''))
    return ['-q', 'fdsrc', 'fd=0', 'blocksize=65536', '!', 'queue', '!', PARSERS[codec], '!',
            element, *properties.split(), '!', converter, '!', 'video/x-raw,format=I420', '!',
            'y4menc', '!', 'fdsink', 'fd=1', 'sync=false']


def check_gstreamer(name: str) -> None:
    """
    Raise VideoDecoderError unless `gst:ELEMENT` can run here: the tools and every element.

    One line naming what is missing and the package that brings it.
    """
    element = name[len(PREFIX):]
    if not element:
        raise VideoDecoderError(f"video_decoder '{name}': name the element after 'gst:', e.g. "
                                'gst:nvv4l2decoder on a Jetson or gst:avdec in software')
    for tool in (LAUNCH, INSPECT):
        if shutil.which(tool) is None:
            raise VideoDecoderError(f"video_decoder '{name}' runs GStreamer, but {tool} is not "
                                    'on PATH: install gstreamer1.0-tools')
    needed = dict(PLUMBING)
    for chosen in {element_for(name, codec) for codec in (H264, HEVC)}:
        _properties, converter, package = ELEMENTS.get(chosen, ('', 'videoconvert',
                                                                'the GStreamer plugin that has it'))
        needed[chosen] = package
        needed.setdefault(converter, package)
    missing = [(item, package) for item, package in needed.items() if not _has_element(item)]
    if missing:
        items = ', '.join(item for item, _ in missing)
        packages = ', '.join(sorted({package for _, package in missing}))
        raise VideoDecoderError(f"video_decoder '{name}': GStreamer has no {items} here: "
                                f'install {packages}')


def _has_element(element: str) -> bool:
    result = subprocess.run([INSPECT, '--exists', element], stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=120)
    return result.returncode == 0


class GstreamerDecoder(StreamDecoder):
    """Decodes one video stream through `gst-launch-1.0` with a decoder element (module doc)."""

    def __init__(self, name: str) -> None:
        """Decode with `name` (gst:ELEMENT); raises VideoDecoderError if it cannot run here."""
        super().__init__()
        check_gstreamer(name)
        self._name = name
        self._element = ''
        self._process: subprocess.Popen[bytes] | None = None
        self._errors: IO[bytes] | None = None
        self._pending = b''
        self._size: tuple[int, int] | None = None
        self._frames = 0

    @property
    def decoder_name(self) -> str:
        """Return the GStreamer element in use, as gst:ELEMENT ('' before the first keyframe)."""
        return f'{PREFIX}{self._element}' if self._element else ''

    @property
    def pid(self) -> int | None:
        """Return the running pipeline's process id (None when none runs)."""
        return self._process.pid if self._process is not None else None

    def _is_open(self) -> bool:
        return self._process is not None

    def _open(self, codec: str) -> None:
        self.close()
        element = element_for(self._name, codec)
        if element in SOFTWARE.values() and element != SOFTWARE[codec]:
            raise VideoDecoderError(f"video_decoder '{self._name}' does not decode {codec}: "
                                    f'name gst:{SOFTWARE[codec]} or gst:avdec')
        self._errors = tempfile.TemporaryFile()
        self._process = subprocess.Popen(
            ending_with_parent([LAUNCH, *pipeline(element, codec)]), stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=self._errors, env=with_parent_pid(),
            start_new_session=True, bufsize=0)
        self._element = element
        self._pending, self._size, self._frames = b'', None, 0

    def close(self) -> None:
        """End the pipeline (and whatever it left of its process group)."""
        process, self._process = self._process, None
        if process is not None:
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            process.wait()
            for pipe in (process.stdin, process.stdout):
                try:
                    if pipe is not None:
                        pipe.close()
                except OSError:
                    pass  # what was left unwritten to an ended child
        if self._errors is not None:
            self._errors.close()
            self._errors = None

    def _ended(self, codec: str) -> FrameRejected:
        """Return the rejection for a pipeline that ended, with its last words; close it."""
        assert self._process is not None
        try:
            code: int | None = self._process.wait(timeout=2.0)  # its pipes closed: it is ending
        except subprocess.TimeoutExpired:
            code = None
        how = ('stopped answering' if code is None else 'was killed' if code < 0
               else f'exited with code {code}')
        words = ''
        if self._errors is not None:
            self._errors.seek(0)
            lines = self._errors.read().decode(errors='replace').strip().splitlines()
            words = f': {lines[-1].strip()}' if lines else ''
        pid = self._process.pid
        self.close()
        return FrameRejected(DECODER_UNAVAILABLE, f'the GStreamer {codec} decoder (gst-launch-1.0 '
                             f'pid {pid}, {self._element}) {how}{words}; it starts again at the '
                             'next keyframe')

    def _decode(self, data: bytes, codec: str) -> NDArray[np.uint8]:
        process = self._process
        assert process is not None and process.stdin is not None
        try:
            _write_all(process.stdin.fileno(),
                       _without_delimiter(data, codec) + 2 * DELIMITERS[codec])
        except (BrokenPipeError, ValueError):
            raise self._ended(codec) from None
        timeout = FIRST_FRAME_TIMEOUT_S if self._frames == 0 else FRAME_TIMEOUT_S
        deadline = time.monotonic() + timeout
        try:
            if self._size is None:
                self._size = _y4m_size(self._read_line(deadline, codec))
            header = self._read_line(deadline, codec)
            if not header.startswith(b'FRAME'):
                raise EOFError
            width, height = self._size
            chroma = ((width + 1) // 2) * ((height + 1) // 2)
            planes = self._read(width * height + 2 * chroma, deadline, codec)
        except TimeoutError:
            self.close()  # it might still send this frame late: a new pipeline at the keyframe
            raise FrameRejected(CORRUPT_VIDEO, f'the GStreamer decoder gave no picture for a '
                                f'{codec} packet of {len(data)} bytes within {timeout:g} s '
                                '(corrupt data, or a stream with B-frames)') from None
        except EOFError:
            raise self._ended(codec) from None
        self._frames += 1
        return i420_to_rgb(planes, width, height)

    def _read(self, count: int, deadline: float, codec: str) -> bytes:
        while len(self._pending) < count:
            self._fill(deadline)
        chunk, self._pending = self._pending[:count], self._pending[count:]
        return chunk

    def _read_line(self, deadline: float, codec: str) -> bytes:
        while b'\n' not in self._pending[:256]:
            if len(self._pending) >= 256:
                raise EOFError  # not YUV4MPEG2
            self._fill(deadline)
        line, self._pending = self._pending.split(b'\n', 1)
        return line

    def _fill(self, deadline: float) -> None:
        """Append what the pipeline wrote; TimeoutError at `deadline`, EOFError when it ended."""
        assert self._process is not None and self._process.stdout is not None
        descriptor = self._process.stdout.fileno()
        remaining = deadline - time.monotonic()
        if remaining <= 0 or not select.select([descriptor], [], [], remaining)[0]:
            raise TimeoutError
        chunk = os.read(descriptor, 1 << 20)
        if not chunk:
            raise EOFError
        self._pending += chunk


def _write_all(descriptor: int, data: bytes) -> None:
    """Write all of `data` to the pipe `descriptor` (a write may take part of it)."""
    view = memoryview(data)
    while view:
        view = view[os.write(descriptor, view):]


def _without_delimiter(data: bytes, codec: str) -> bytes:
    """Return `data` without a leading access unit delimiter (ours ends the one before)."""
    first = _START_CODE.search(data)
    if first is None or first.end() >= len(data):
        return data
    header = data[first.end()]
    kind = header & 0x1F if codec == H264 else (header >> 1) & 0x3F
    if kind != (9 if codec == H264 else 35):
        return data
    following = _START_CODE.search(data, first.end())
    return data[following.start():] if following else b''


def _y4m_size(header: bytes) -> tuple[int, int]:
    """Return (width, height) of a YUV4MPEG2 stream header."""
    fields = header.split()
    if not fields or fields[0] != b'YUV4MPEG2':
        raise EOFError
    values = {field[:1]: field[1:] for field in fields[1:]}
    if not values.get(b'C', b'420').startswith(b'420'):
        raise EOFError
    return int(values[b'W']), int(values[b'H'])


def i420_to_rgb(planes: bytes, width: int, height: int) -> NDArray[np.uint8]:
    """
    Return I420 planes (odd sizes: chroma rounded up) as RGB uint8 [H, W, 3].

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
