"""
A camera published as video: its packets decoded into frames for a node's frame callback.

`input_transport:=ffmpeg` takes ffmpeg_image_transport_msgs/FFMPEGPacket on `image/ffmpeg`,
`input_transport:=foxglove` foxglove_msgs/CompressedVideo on `image/foxglove` (image_transport's
names), H.264 or H.265. Every packet is decoded in order on the executor thread, as it arrives
(a packet needs the ones before it), by the decoder `video_decoder` names (FFmpeg through PyAV,
or a GStreamer element: frames.open_video_decoder); the frame callback then gets an
rgb8 frame with the packet's header, or the reason the packet gave none, and accounts for it
like any other frame. A packet lost before the node (a gap in the publisher's sequence numbers)
makes the decoder wait for the next keyframe. In a perception process the camera's stream is
subscribed and decoded once (camera_frames), and each decoded frame handed to all its nodes.
"""
from __future__ import annotations

from typing import Callable, TypeAlias, Union

from ffmpeg_image_transport_msgs.msg import FFMPEGPacket
from foxglove_msgs.msg import CompressedVideo
from std_msgs.msg import Header

from triton_perception.frames import (FrameRejected, LossSink, open_video_decoder, ReadImage,
                                      StreamDecoder, VideoPacket)

# input_transport -> the image_transport topic under `image` and its message type.
VideoMessage: TypeAlias = Union[FFMPEGPacket, CompressedVideo]
VIDEO_TRANSPORTS: dict[str, tuple[str, type[VideoMessage]]] = {
    'ffmpeg': ('image/ffmpeg', FFMPEGPacket),
    'foxglove': ('image/foxglove', CompressedVideo),
}


class _KeyframeAfterLoss:
    """A loss sink that also makes the decoder wait for the next keyframe."""

    def __init__(self, decoder: StreamDecoder, sink: LossSink) -> None:
        self._decoder = decoder
        self._sink = sink

    def lost_before_node(self, count: int, reason: str) -> int:
        """Count the loss into the sink; the decoder then waits for a keyframe."""
        self._decoder.packet_lost()
        return self._sink.lost_before_node(count, reason)


def read_packet(message: VideoMessage) -> tuple[Header, VideoPacket]:
    """Return an FFMPEGPacket's or a CompressedVideo's header and its packet."""
    if isinstance(message, FFMPEGPacket):
        return message.header, VideoPacket(bytes(message.data), message.encoding.split(';')[0])
    return (Header(stamp=message.timestamp, frame_id=message.frame_id),
            VideoPacket(bytes(message.data), message.format))


class VideoFrames:
    """One node's video topic: its message type, its decoder, and the frames it gives."""

    def __init__(self, transport: str, decoder: str) -> None:
        """
        Decode the packets of `transport` (a VIDEO_TRANSPORTS key) with `decoder`.

        `decoder` '' takes FFmpeg's h264 or hevc by the stream's codec, an FFmpeg decoder name
        that decoder, gst:ELEMENT a GStreamer element (frames.open_video_decoder).

        Raises VideoDecoderError if `decoder` cannot run here.
        """
        self.relative_topic, self.message_type = VIDEO_TRANSPORTS[transport]
        self._decoder = open_video_decoder(decoder)

    def losses_into(self, sink: LossSink) -> LossSink:
        """Return the loss counter's sink: losses count into `sink`, then wait for a keyframe."""
        return _KeyframeAfterLoss(self._decoder, sink)

    def diagnostics(self) -> dict[str, str]:
        """Return the decoder in use ('' before the first keyframe) and how often it opened."""
        return {'video_decoder': self._decoder.decoder_name,
                'video_decoder_opened': str(self._decoder.opened)}

    def decoding(self, on_frame: Callable[[ReadImage | FrameRejected], None]
                 ) -> Callable[[VideoMessage], None]:
        """Return the subscription callback: each packet's frame (or rejection) to `on_frame`."""
        def on_packet(message: VideoMessage) -> None:
            on_frame(self.frame(message))
        return on_packet

    def frame(self, message: VideoMessage) -> ReadImage | FrameRejected:
        """Return the packet's frame as rgb8 with the packet's header, or why there is none."""
        header, packet = read_packet(message)
        try:
            rgb = self._decoder.decode(packet)
        except FrameRejected as rejection:
            return rejection
        height, width = rgb.shape[:2]
        return ReadImage(header=header, height=height, width=width, encoding='rgb8',
                         is_bigendian=0, step=width * 3, data=rgb.reshape(-1))
