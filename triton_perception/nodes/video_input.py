"""
A camera published as video: its packets decoded into frames for a node's frame callback.

A video transport of parameters.TRANSPORTS (ffmpeg: ffmpeg_image_transport_msgs/FFMPEGPacket
on `image/ffmpeg`, foxglove: foxglove_msgs/CompressedVideo on `image/foxglove`, as image_transport
names them), H.264 or H.265. The subscription callback only puts each packet in the camera's bounded
queue (frames.DecodingQueue); the camera's own decoding thread decodes them in order (a packet
needs the ones before it) with the decoder `video_decoder` names (FFmpeg through PyAV, or a
GStreamer element: frames.open_video_decoder), and hands the frame callback an rgb8 frame with
the packet's header, or the reason the packet gave none, which it accounts for like any other
frame. So a slow or stalled decoder holds only its own camera: the hot path never waits on it, a
packet that finds the queue full is dropped (`decoder_queue_full`), and a stop ends the thread
and the decoder's child whatever they are doing. A packet lost before the node (a gap in the
publisher's sequence numbers) or dropped makes the decoder wait for the next keyframe. A stream
whose SPS declares more than `max_image_pixels` is refused as `too_large` before decoding. In a
perception process the camera's stream is subscribed and decoded once (camera_frames), and each
decoded frame handed to all its nodes.
"""
from __future__ import annotations

import threading
from typing import Callable, TypeAlias, Union

from ffmpeg_image_transport_msgs.msg import FFMPEGPacket
from foxglove_msgs.msg import CompressedVideo
from std_msgs.msg import Header

from triton_perception.frames import (DECODER_STOPPED, DecodingQueue, FrameRejected, LossSink,
                                      open_video_decoder, PacketDropped, QUEUE_FULL, ReadImage,
                                      VideoPacket)
from triton_perception.parameters import Transport

# The message types of the video transports (parameters.TRANSPORTS names them).
VideoMessage: TypeAlias = Union[FFMPEGPacket, CompressedVideo]
FrameResult: TypeAlias = Union[ReadImage, FrameRejected]
Packet: TypeAlias = tuple[Header, VideoPacket]


class _KeyframeAfterLoss:
    """A loss sink that also makes the decoder wait for the next keyframe."""

    def __init__(self, packets: DecodingQueue[Packet], sink: LossSink) -> None:
        self._packets = packets
        self._sink = sink

    def lost_before_node(self, count: int, reason: str) -> int:
        """Count the loss into the sink; the next packet decoded waits for a keyframe."""
        self._packets.mark_gap()
        return self._sink.lost_before_node(count, reason)


def read_packet(message: VideoMessage) -> Packet:
    """Return an FFMPEGPacket's or a CompressedVideo's header and its packet."""
    if isinstance(message, FFMPEGPacket):
        return message.header, VideoPacket(bytes(message.data), message.encoding.split(';')[0])
    return (Header(stamp=message.timestamp, frame_id=message.frame_id),
            VideoPacket(bytes(message.data), message.format))


class VideoFrames:
    """One camera's video topic: its decoder and decoding thread, its frames."""

    def __init__(self, transport: Transport, decoder: str, max_pixels: int = 0,
                 warn: Callable[[str], object] = print) -> None:
        """
        Decode the packets of the video `transport` (parameters.TRANSPORTS) with `decoder`.

        `decoder` '' takes FFmpeg's h264 or hevc by the stream's codec, an FFmpeg decoder name
        that decoder, gst:ELEMENT a GStreamer element (frames.open_video_decoder). Streams over
        `max_pixels` (0: no limit) are refused before decoding. `warn` says, once per kind, what
        a decoder raised that it should not have.

        Raises VideoDecoderError if `decoder` cannot run here.
        """
        self.relative_topic = transport.topic
        self._decoder = open_video_decoder(decoder, max_pixels)
        self._packets: DecodingQueue[Packet] = DecodingQueue(
            f'decoding {transport.name}', self._decode_packet, self._decoder.interrupt,
            self._decoder.close)
        self._on_frame: Callable[[FrameResult], None] | None = None
        self._warn = warn
        self._warned: set[str] = set()
        self._lock = threading.Lock()

    def losses_into(self, sink: LossSink) -> LossSink:
        """Return the loss counter's sink: losses count into `sink`, then wait for a keyframe."""
        return _KeyframeAfterLoss(self._packets, sink)

    def diagnostics(self) -> dict[str, str]:
        """
        Return the decoder in use, how often it opened, and the packets waiting to be decoded.

        The decoder is '' before the first keyframe; the waiting packets are not yet counted as
        received (frames.DecodingQueue.waiting).
        """
        return {'video_decoder': self._decoder.decoder_name,
                'video_decoder_opened': str(self._decoder.opened),
                'video_packets_waiting': str(self._packets.waiting)}

    def decoding(self, on_frame: Callable[[FrameResult], None]
                 ) -> Callable[[VideoMessage], None]:
        """
        Return the subscription callback: each packet's frame (or rejection) to `on_frame`.

        The callback only queues the packet; `on_frame` gets the outcome from the camera's
        decoding thread, or at once, as dropped, when the queue is full.
        """
        with self._lock:
            self._on_frame = on_frame

        def on_packet(message: VideoMessage) -> None:
            if self._packets.put(read_packet(message)):
                return
            if self._packets.stopped:
                on_frame(PacketDropped(DECODER_STOPPED, "the camera's decoding has ended"))
            else:
                on_frame(PacketDropped(QUEUE_FULL, "the camera's decoder is behind: its queue "
                                       'of packets is full'))
        return on_packet

    def close(self) -> None:
        """End the decoding thread and the decoder; queued packets are counted as dropped."""
        left = self._packets.stop()
        with self._lock:
            on_frame = self._on_frame
        if on_frame is not None:
            for _packet in left:
                on_frame(PacketDropped(DECODER_STOPPED, 'the node stopped before it was decoded'))

    def frame(self, packet: Packet) -> FrameResult:
        """Return the packet's frame as rgb8 with the packet's header, or why there is none."""
        header, data = packet
        try:
            rgb = self._decoder.decode(data)
        except FrameRejected as rejection:
            return rejection
        height, width = rgb.shape[:2]
        return ReadImage(header=header, height=height, width=width, encoding='rgb8',
                         is_bigendian=0, step=width * 3, data=rgb.reshape(-1))

    def _decode_packet(self, packet: Packet, after_gap: bool) -> None:
        """Decode on the camera's thread and hand the outcome on; nothing raised ends the thread."""
        with self._lock:
            on_frame = self._on_frame
        try:
            if after_gap:
                self._decoder.packet_lost()
            result = self.frame(packet)
        except Exception as error:  # noqa: BLE001 (a bug in a decoder settles its packet)
            result = FrameRejected(f'video decoding: {type(error).__name__}',  # a bounded key
                                   f'the video decoder raised {error!r}')
            self._say(error)
        if on_frame is None:
            return
        try:
            on_frame(result)
        except Exception as error:  # noqa: BLE001 (the next packet is still decoded)
            self._say(error)

    def _say(self, error: Exception) -> None:
        kind = type(error).__name__
        if kind not in self._warned:
            self._warned.add(kind)
            self._warn(f'video decoding of {self.relative_topic}: {kind}: {error} (said once '
                       'per kind; the packet is counted, the next one decoded)')
