"""
H.264 and H.265 packets -> RGB frames, through FFmpeg's decoders (PyAV).

One decoder per stream, fed every packet in order: a packet needs the frames before it back
to the last keyframe. Until the first keyframe, and after a packet was lost or could not be
decoded, packets wait for the next keyframe (`KeyframeWait`, counted as dropped, not as an
error: it is how a stream joined mid-way starts). A keyframe whose sequence parameters differ
from the open stream's (another size or encoder), or of another codec, opens the decoder
again. Streams with B-frames are not served (a frame would come out after later packets, as
Foxglove's CompressedVideo also rules out); a packet that gives no picture is rejected. A packet of
several pictures is decoded picture by picture and gives its last one.

A stream whose SPS declares more than `max_pixels` (width x height, as the decoder would output
it) is refused as `too_large` before any decoder sees it, packet after packet, until a keyframe
of another stream: a decoder allocates its pictures from the SPS alone, so a stream of few-byte
P-frames whose SPS claims 8192x4320 would cost about 50 MB a frame before a check after decoding.
"""
from __future__ import annotations

from dataclasses import dataclass
import platform
from typing import cast

import av
from av.video.codeccontext import VideoCodecContext
import numpy as np
from numpy.typing import NDArray

from triton_perception.errors import TritonPerceptionError
from triton_perception.frames.accounting import FrameRejected
from triton_perception.frames.video_bitstream import (access_units, codec_of, DEFAULT_DECODERS,
                                                      packet_units, PacketUnits)

WAITING_FOR_KEYFRAME = 'waiting for a keyframe'
CORRUPT_VIDEO = 'corrupt_video'
DECODER_UNAVAILABLE = 'decoder_unavailable'
TOO_LARGE = 'too_large'  # the reason image_conversion gives an Image over max_image_pixels
UNLIMITED = 0  # max_pixels: no size limit
GST_PREFIX = 'gst:'  # video_decoder gst:ELEMENT: a GStreamer element (video_gstreamer)


class PacketDropped(FrameRejected):
    """A packet that gave no frame through no fault of its own; counted as dropped, not rejected."""


class KeyframeWait(PacketDropped):
    """A packet that cannot be decoded until the next keyframe; counted as dropped."""

    def __init__(self, message: str) -> None:
        """Reason WAITING_FOR_KEYFRAME, with `message` for humans."""
        super().__init__(WAITING_FOR_KEYFRAME, message)


class VideoDecoderError(TritonPerceptionError, ValueError):
    """The named FFmpeg decoder does not exist or cannot decode the stream's codec."""


@dataclass(frozen=True)
class VideoPacket:
    """
    One frame's compressed data and its codec.

    `codec`: a CompressedVideo `format` (h264, h265) or the first token of an FFMPEGPacket
    `encoding` (the encoder's name, e.g. libx264, hevc_nvenc).
    """

    data: bytes
    codec: str


def check_decoder(name: str) -> None:
    """
    Raise VideoDecoderError unless FFmpeg (as PyAV ships it here) has decoder `name`.

    The Jetson decoders that FFmpeg names but PyAV's FFmpeg cannot run are refused by name with
    the route that reaches the hardware instead: `*_nvv4l2dec` exist only in NVIDIA's own FFmpeg
    build for Jetson, and PyAV's aarch64 wheels are built without NVDEC (`*_cuvid`).
    """
    if not name:
        return
    jetson = 'on a Jetson use gst:nvv4l2decoder (GStreamer, the hardware decoder; docs/orin.md)'
    if name.endswith('_nvv4l2dec'):
        raise VideoDecoderError(f"video_decoder '{name}' is a decoder of NVIDIA's own FFmpeg "
                                f"build for Jetson, which PyAV's FFmpeg is not: {jetson}")
    if name.endswith(('_cuvid', '_nvdec')) and platform.machine() in ('aarch64', 'arm64'):
        raise VideoDecoderError(f"video_decoder '{name}': PyAV's FFmpeg for Arm is built without "
                                f'NVDEC: {jetson}')
    try:
        av.codec.Codec(name, 'r')
    except (av.codec.codec.UnknownCodecError, ValueError):
        raise VideoDecoderError(
            f"video_decoder '{name}': this FFmpeg has no such decoder; name one that "
            '`ffmpeg -decoders` lists (e.g. h264, hevc), gst:ELEMENT for a GStreamer element '
            '(gst:nvv4l2decoder on a Jetson), or leave it empty for h264/hevc by codec') from None


class StreamDecoder:
    """
    One video stream decoded packet by packet into RGB uint8 frames.

    The bookkeeping every route shares (keyframe waits, a new decoder for a new stream, a lost
    packet); subclasses decode.
    """

    def __init__(self, max_pixels: int = UNLIMITED) -> None:
        """Nothing is open until the first keyframe; refuse streams over `max_pixels` (0: none)."""
        self._codec = ''
        self._sequence = b''
        self._synced = False
        self._max_pixels = max_pixels
        self._refused: tuple[int, int] | None = None  # the too-large stream's size, until the next
        self.opened = 0  # how many times a decoder was opened (a new stream, a new size)

    @property
    def decoder_name(self) -> str:
        """Return the decoder in use ('' before the first keyframe)."""
        raise NotImplementedError

    def packet_lost(self) -> None:
        """Say that a packet of the stream never arrived: wait for the next keyframe."""
        self._synced = False

    def interrupt(self) -> None:
        """
        Make a decode that waits on something outside this process return now (any thread).

        The node's stop calls it while the decoding thread may be inside `decode`; the route that
        waits on a child process ends it, and the in-process route has nothing to wait on.
        """

    def decode(self, packet: VideoPacket) -> NDArray[np.uint8]:
        """
        Return the packet's frame as RGB uint8 [H, W, 3].

        Raises KeyframeWait before the first keyframe and after a lost or corrupt packet, and
        FrameRejected for a packet the decoder cannot decode (reason `corrupt_video`), of another
        codec (`unsupported_format`), or when the named decoder cannot decode the stream
        (`decoder_unavailable`: not this codec's, it cannot open, e.g. no GPU, or it ended).
        """
        codec = codec_of(packet.codec)
        units = packet_units(packet.data, codec)
        self._refuse_too_large(units, codec)
        if units.keyframe and (not self._is_open() or codec != self._codec
                               or (units.sequence and units.sequence != self._sequence)):
            try:
                self._open(codec)
            except VideoDecoderError as error:
                raise FrameRejected(DECODER_UNAVAILABLE, str(error)) from None
            self._codec, self._sequence = codec, units.sequence
            self._synced = False
            self.opened += 1
        if not self._is_open() or not (self._synced or units.keyframe):
            which = 'a' if not self._is_open() else 'the next'
            raise KeyframeWait(f'a {codec} packet before {which} keyframe cannot be decoded')
        try:
            rgb = self._decode(packet.data, codec)
        except FrameRejected:
            self._synced = False
            raise
        self._synced = True
        return rgb

    def _refuse_too_large(self, units: PacketUnits, codec: str) -> None:
        """Raise `too_large` for a packet of a stream whose SPS is over `max_pixels`."""
        if units.size is not None:
            width, height = units.size
            if self._max_pixels and width * height > self._max_pixels:
                if self._refused is None:
                    self.close()  # the stream it decoded has ended; a new one starts at a keyframe
                    self._codec, self._sequence = '', b''
                self._refused = units.size
            elif units.keyframe:
                self._refused = None  # a keyframe of a stream within the limit
        if self._refused is not None:
            width, height = self._refused
            raise FrameRejected(TOO_LARGE, f'the {codec} stream declares {width}x{height} = '
                                f'{width * height} pixels (its SPS), over max_image_pixels '
                                f'{self._max_pixels}: refused before decoding')

    def _is_open(self) -> bool:
        raise NotImplementedError

    def _open(self, codec: str) -> None:
        raise NotImplementedError

    def _decode(self, data: bytes, codec: str) -> NDArray[np.uint8]:
        raise NotImplementedError

    def close(self) -> None:
        """Release what the decoder holds (a child process); decoding again reopens it."""


class VideoDecoder(StreamDecoder):
    """Decodes one video stream with FFmpeg (PyAV), in this process."""

    def __init__(self, decoder: str = '', max_pixels: int = UNLIMITED) -> None:
        """
        Decode with the FFmpeg decoder `decoder` ('' = `h264` or `hevc` by the stream's codec).

        Streams over `max_pixels` are refused (0: no limit). Raises VideoDecoderError if FFmpeg
        has no decoder of that name.
        """
        super().__init__(max_pixels)
        check_decoder(decoder)
        self._decoder = decoder
        self._context: VideoCodecContext | None = None

    @property
    def decoder_name(self) -> str:
        """Return the FFmpeg decoder in use ('' before the first keyframe)."""
        return self._context.name if self._context is not None else ''

    def _is_open(self) -> bool:
        return self._context is not None

    def close(self) -> None:
        """Let the decoder and the pictures it holds go; the next keyframe opens a new one."""
        self._context = None

    def _decode(self, data: bytes, codec: str) -> NDArray[np.uint8]:
        assert self._context is not None
        try:
            frames = [frame for unit in access_units(data, codec)
                      for frame in self._context.decode(av.Packet(unit))]
        except av.FFmpegError as error:
            raise FrameRejected(CORRUPT_VIDEO, f'FFmpeg cannot decode a {codec} packet of '
                                f'{len(data)} bytes: {error}') from None
        if not frames or frames[-1].is_corrupt:
            raise FrameRejected(CORRUPT_VIDEO, f'a {codec} packet of {len(data)} bytes '
                                'gave no intact picture (corrupt data, or a stream with B-frames)')
        return cast(NDArray[np.uint8], frames[-1].to_ndarray(format='rgb24'))  # rgb24: uint8

    def _open(self, codec: str) -> None:
        name = self._decoder or DEFAULT_DECODERS[codec]
        context = cast(VideoCodecContext, av.CodecContext.create(name, 'r'))
        if context.codec.id != av.codec.Codec(DEFAULT_DECODERS[codec], 'r').id:
            raise VideoDecoderError(f"video_decoder '{name}' does not decode {codec}: name a "
                                    f'{codec} decoder, or leave video_decoder empty')
        try:
            context.open()
        except av.FFmpegError as error:
            raise VideoDecoderError(f"FFmpeg cannot open the decoder '{name}' ({error}): name "
                                    'another video_decoder, or leave it empty') from None
        self._context = context
