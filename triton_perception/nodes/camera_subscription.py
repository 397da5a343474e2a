"""
A camera topic subscribed the one way every node takes it, with its transport as one value.

A camera's `CameraStream` is built once (`open_camera_stream`): its transport from
parameters.TRANSPORTS and, for a video transport, the camera's live decoder; the nodes, a
process's shared camera and the overlay pass it whole. Image and CompressedImage frames are
taken serialized (`raw=True`): no Python message is built and no pixel copied until
frames.read_frame reads the bytes. A video topic's packets arrive as messages and are decoded
in order, one by one, by its VideoFrames (nodes.video_input). Frames lost before the node are
counted when a FrameLossCounter is given (nodes.frame_losses); the overlay, a viewer, counts
none.
"""
from __future__ import annotations

from dataclasses import dataclass
import importlib
from typing import Callable, cast, TypeAlias, Union

from rclpy.node import Node
from rclpy.qos import QoSProfile
from rclpy.subscription import Subscription
from sensor_msgs.msg import CompressedImage, Image

from triton_perception.frames import Taken
from triton_perception.nodes.frame_losses import FrameLossCounter
from triton_perception.nodes.video_input import VideoFrames, VideoMessage
from triton_perception.parameters import Transport, transport_named

FrameCallback = Callable[[Taken], None]
CameraMessage: TypeAlias = Union[Image, CompressedImage, VideoMessage]


@dataclass(frozen=True)
class CameraStream:
    """
    How one camera is taken: its transport, and for a video transport the camera's decoder.

    The transport says the topic, the message type and the decoding a frame needs; `video`
    is the decoder that a video transport needs and an image transport has not.
    """

    transport: Transport
    video: VideoFrames | None = None

    def __post_init__(self) -> None:
        """Raise ValueError unless a video transport has its decoder and no other has one."""
        if (self.video is not None) != self.transport.is_video:
            raise ValueError(f'transport {self.transport.name}: a video transport has a '
                             'decoder (VideoFrames), an image transport none')

    @property
    def topic(self) -> str:
        """Return the camera's topic relative to the node: image, image/compressed, ..."""
        return self.transport.topic


def open_camera_stream(transport_name: str, decoder: str = '', max_pixels: int = 0,
                       warn: Callable[[str], object] = print) -> CameraStream:
    """
    Return the stream of `transport_name`, with a decoder (nodes.video_input) for a video one.

    `decoder`, `max_pixels` and `warn` are VideoFrames'. Raises ParameterError for a name not
    in the table, VideoDecoderError if `decoder` cannot run here.
    """
    transport = transport_named(transport_name)
    return CameraStream(transport, VideoFrames(transport, decoder, max_pixels, warn)
                        if transport.is_video else None)


def message_class(transport: Transport) -> type[CameraMessage]:
    """Return the Python class of the transport's message type ('pkg/msg/Type')."""
    package, kind, name = transport.message_type.split('/')
    return cast('type[CameraMessage]',
                getattr(importlib.import_module(f'{package}.{kind}'), name))


def subscribe_camera(subscriber: Node, topic: str, on_frame: FrameCallback, qos: QoSProfile,
                     stream: CameraStream, *,
                     losses: FrameLossCounter | None = None) -> Subscription[CameraMessage]:
    """
    Subscribe `subscriber` to the camera `topic` as `stream` says; every frame goes to `on_frame`.

    `on_frame` gets a frame's bytes (an image transport's Image or CompressedImage), or for a
    video stream each packet's decoded frame or the reason it gave none. `losses` counts the
    frames lost before `on_frame`, None counts nothing.
    """
    video = stream.video
    callback = video.decoding(on_frame) if video is not None else on_frame
    message_type, raw = message_class(stream.transport), stream.transport.serialized
    if losses is None:
        return subscriber.create_subscription(message_type, topic, callback, qos, raw=raw)
    counted = losses.callbacks(callback)
    return subscriber.create_subscription(message_type, topic, counted.callback, qos, raw=raw,
                                          event_callbacks=counted.event_callbacks)
