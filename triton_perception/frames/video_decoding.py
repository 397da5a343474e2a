"""
H.264 and H.265 packets -> RGB frames, through FFmpeg's decoders (PyAV).

One decoder per stream, fed every packet in order: a packet needs the frames before it back
to the last keyframe. Until the first keyframe, and after a packet was lost or could not be
decoded, packets wait for the next keyframe (`KeyframeWait`, counted as dropped, not as an
error: it is how a stream joined mid-way starts). A keyframe whose sequence parameters differ
from the open stream's (another size or encoder), or of another codec, opens the decoder
again. Streams with B-frames are not served (a frame would come out after later packets, as
Foxglove's CompressedVideo also rules out); a packet that gives no picture is rejected.
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
from triton_perception.frames.video_bitstream import codec_of, DEFAULT_DECODERS, packet_units

WAITING_FOR_KEYFRAME = 'waiting for a keyframe'
CORRUPT_VIDEO = 'corrupt_video'
DECODER_UNAVAILABLE = 'decoder_unavailable'
GST_PREFIX = 'gst:'  # video_decoder gst:ELEMENT: a GStreamer element (video_gstreamer)


class KeyframeWait(FrameRejected):
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

    def __init__(self) -> None:
        """Nothing is open until the first keyframe."""
        self._codec = ''
        self._sequence = b''
        self._synced = False
        self.opened = 0  # how many times a decoder was opened (a new stream, a new size)

    @property
    def decoder_name(self) -> str:
        """Return the decoder in use ('' before the first keyframe)."""
        raise NotImplementedError

    def packet_lost(self) -> None:
        """Say that a packet of the stream never arrived: wait for the next keyframe."""
        self._synced = False

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

    def __init__(self, decoder: str = '') -> None:
        """
        Decode with the FFmpeg decoder `decoder` ('' = `h264` or `hevc` by the stream's codec).

        Raises VideoDecoderError if FFmpeg has no decoder of that name.
        """
        super().__init__()
        check_decoder(decoder)
        self._decoder = decoder
        self._context: VideoCodecContext | None = None

    @property
    def decoder_name(self) -> str:
        """Return the FFmpeg decoder in use ('' before the first keyframe)."""
        return self._context.name if self._context is not None else ''

    def _is_open(self) -> bool:
        return self._context is not None

    def _decode(self, data: bytes, codec: str) -> NDArray[np.uint8]:
        assert self._context is not None
        try:
            frames = self._context.decode(av.Packet(data))
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
