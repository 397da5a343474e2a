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
a new one. Each packet must be taken and give its frames (one per picture it holds; the last is
the packet's frame, as on the PyAV route) within FRAME_TIMEOUT_S (FIRST_FRAME_TIMEOUT_S for a
new pipeline), writes and reads alike (child_pipes: never blocking, never past the deadline). A
packet whose frame does not come although the child took it (the element drops corrupt pictures)
is rejected as `corrupt_video`; one the child did not take, or that got no output at all from a
new pipeline, as `decoder_stalled`. Either way the pipeline, which might still send the frame
late, is ended and started again at the next keyframe. A pipeline that ended (killed, crashed)
rejects the packet as `decoder_unavailable` and starts again at the next keyframe too. The
accounting and the waits are those of the PyAV route (video_decoding.StreamDecoder); a stop
(`interrupt`, from another thread) kills the child, so a decode waiting on it returns at once.
"""
from __future__ import annotations

from functools import lru_cache
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
from typing import IO

import numpy as np
from numpy.typing import NDArray

from triton_perception.frames.accounting import FrameRejected
from triton_perception.frames.child_pipes import ChildPipes, PipeEnded, PipeTimeout
from triton_perception.frames.video_bitstream import H264, HEVC, picture_count
from triton_perception.frames.video_decoding import (CORRUPT_VIDEO, DECODER_UNAVAILABLE,
                                                     GST_PREFIX, StreamDecoder,
                                                     UNLIMITED, VideoDecoderError)
from triton_perception.frames.video_y4m import (FRAME_MAGIC, FrameLayout, i420_to_rgb,
                                                stream_size, Y4mError)
from triton_perception.system import ending_with_parent, with_parent_pid

PREFIX = GST_PREFIX
LAUNCH = 'gst-launch-1.0'
INSPECT = 'gst-inspect-1.0'
FRAME_TIMEOUT_S = 2.0      # a decoded frame's longest wait once the pipeline runs
FIRST_FRAME_TIMEOUT_S = 20.0  # the first one also waits for the process and the plugin registry
PROBE_TIMEOUT_S = 20.0     # the one-off measure of y4menc's layout (y4menc_pads)
DECODER_STALLED = 'decoder_stalled'
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
            'videotestsrc': 'gstreamer1.0-plugins-base',
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


@lru_cache(maxsize=1)
def y4menc_pads() -> bool:
    """
    Return whether the installed y4menc writes planes with padded rows (video_y4m says why).

    Measured once, on a 10x2 frame (rows of 10 and 5 bytes, or padded to 12 and 8), when a stream
    first has a width where the two differ. Raises VideoDecoderError if GStreamer cannot say.
    """
    layouts = {FrameLayout(10, 2, padded).size: padded for padded in (True, False)}
    try:
        result = subprocess.run(
            [LAUNCH, '-q', 'videotestsrc', 'num-buffers=1', '!',
             'video/x-raw,format=I420,width=10,height=2', '!', 'y4menc', '!', 'fdsink', 'fd=1'],
            stdin=subprocess.DEVNULL, capture_output=True, timeout=PROBE_TIMEOUT_S, check=False)
    except subprocess.TimeoutExpired:
        raise VideoDecoderError(f'{LAUNCH} did not write a test frame within '
                                f'{PROBE_TIMEOUT_S:g} s') from None
    _header, _, rest = result.stdout.partition(b'\n')
    frame = rest.partition(b'\n')[2]
    if len(frame) not in layouts:
        raise VideoDecoderError(f'{LAUNCH} wrote a {len(frame)}-byte 10x2 I420 test frame '
                                f'through y4menc (exit code {result.returncode})')
    return layouts[len(frame)]


def _has_element(element: str) -> bool:
    result = subprocess.run([INSPECT, '--exists', element], stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=120)
    return result.returncode == 0


class GstreamerDecoder(StreamDecoder):
    """Decodes one video stream through `gst-launch-1.0` with a decoder element (module doc)."""

    def __init__(self, name: str, max_pixels: int = UNLIMITED) -> None:
        """
        Decode with `name` (gst:ELEMENT); streams over `max_pixels` are refused (0: no limit).

        Raises VideoDecoderError if it cannot run here.
        """
        super().__init__(max_pixels)
        check_gstreamer(name)
        self._name = name
        self._element = ''
        self._process: subprocess.Popen[bytes] | None = None
        self._pipes: ChildPipes | None = None
        self._errors: IO[bytes] | None = None
        self._layout: FrameLayout | None = None
        self._frames = 0
        self._interrupted = False

    @property
    def decoder_name(self) -> str:
        """Return the GStreamer element in use, as gst:ELEMENT ('' before the first keyframe)."""
        return f'{PREFIX}{self._element}' if self._element else ''

    @property
    def pid(self) -> int | None:
        """Return the running pipeline's process id (None when none runs)."""
        process = self._process
        return process.pid if process is not None else None

    def _is_open(self) -> bool:
        return self._process is not None

    def _open(self, codec: str) -> None:
        self.close()
        if self._interrupted:
            raise VideoDecoderError('the node is stopping: no new GStreamer pipeline')
        element = element_for(self._name, codec)
        if element in SOFTWARE.values() and element != SOFTWARE[codec]:
            raise VideoDecoderError(f"video_decoder '{self._name}' does not decode {codec}: "
                                    f'name gst:{SOFTWARE[codec]} or gst:avdec')
        self._errors = tempfile.TemporaryFile()
        self._process = subprocess.Popen(
            ending_with_parent([LAUNCH, *pipeline(element, codec)]), stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=self._errors, env=with_parent_pid(),
            start_new_session=True, bufsize=0)
        self._pipes = ChildPipes(self._process)
        self._element = element
        self._layout, self._frames = None, 0
        if self._interrupted:  # interrupted while it started: end it as interrupt would have
            self.interrupt()

    def interrupt(self) -> None:
        """Kill the running pipeline (from any thread): a decode waiting on it returns now."""
        self._interrupted = True
        process = self._process
        if process is not None:
            _kill_group(process.pid)

    def close(self) -> None:
        """End the pipeline (and whatever it left of its process group)."""
        process, self._process, self._pipes = self._process, None, None
        if process is not None:
            _kill_group(process.pid)
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
        pipes = self._pipes
        assert pipes is not None
        pictures = picture_count(data, codec)
        timeout = FIRST_FRAME_TIMEOUT_S if self._frames == 0 else FRAME_TIMEOUT_S
        deadline = time.monotonic() + timeout
        try:
            pipes.write(_without_delimiter(data, codec) + 2 * DELIMITERS[codec], deadline)
            if not pictures:
                raise FrameRejected(CORRUPT_VIDEO, f'a {codec} packet of {len(data)} bytes holds '
                                    'no picture')
            planes = b''
            for _ in range(pictures):  # each picture's frame; the last is the packet's
                planes = self._read_frame(pipes, deadline)
        except PipeTimeout:
            stalled = self._layout is None or pipes.unread_input() > 0
            self.close()  # it might still send this frame late: a new pipeline at the keyframe
            if stalled:
                raise FrameRejected(DECODER_STALLED, f'the GStreamer {codec} decoder '
                                    f'({self._element}) took no input or gave no output within '
                                    f'{timeout:g} s; it starts again at the next keyframe'
                                    ) from None
            raise FrameRejected(CORRUPT_VIDEO, f'the GStreamer decoder gave no picture for a '
                                f'{codec} packet of {len(data)} bytes within {timeout:g} s '
                                '(corrupt data, or a stream with B-frames)') from None
        except (PipeEnded, Y4mError):
            raise self._ended(codec) from None
        except VideoDecoderError as error:  # y4menc's layout could not be measured
            self.close()
            raise FrameRejected(DECODER_UNAVAILABLE, str(error)) from None
        assert self._layout is not None
        return i420_to_rgb(planes, self._layout.width, self._layout.height)

    def _read_frame(self, pipes: ChildPipes, deadline: float) -> bytes:
        """Return the next frame's planes, tightly packed (the stream's header first, once)."""
        if self._layout is None:
            width, height = stream_size(pipes.read_line(deadline))
            ambiguous = FrameLayout(width, height, True).size != FrameLayout(width, height,
                                                                             False).size
            self._layout = FrameLayout(width, height, ambiguous and y4menc_pads())
        if not pipes.read_line(deadline).startswith(FRAME_MAGIC):
            raise Y4mError
        planes = self._layout.planes(pipes.read(self._layout.size, deadline))
        self._frames += 1
        return planes


def _kill_group(pid: int) -> None:
    """SIGKILL the process group of the child `pid` (its session's leader)."""
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


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
