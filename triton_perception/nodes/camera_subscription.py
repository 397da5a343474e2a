"""
A camera topic subscribed the one way every node takes it.

Image and CompressedImage frames are taken serialized (`raw=True`): no Python message is built
and no pixel copied until frames.read_frame reads the bytes. A video topic's packets arrive as
messages and are decoded in order, one by one, by its VideoFrames (nodes.video_input). Frames
lost before the node are counted when a FrameLossCounter is given (nodes.frame_losses); the
overlay, a viewer, counts none.
"""
from __future__ import annotations

from typing import Callable, TypeAlias, Union

from rclpy.node import Node
from rclpy.qos import QoSProfile
from rclpy.subscription import Subscription
from sensor_msgs.msg import CompressedImage, Image

from triton_perception.frames import Taken
from triton_perception.nodes.frame_losses import FrameLossCounter
from triton_perception.nodes.video_input import VideoFrames, VideoMessage

FrameCallback = Callable[[Taken], None]
CameraMessage: TypeAlias = Union[Image, CompressedImage, VideoMessage]


def camera_topic(compressed: bool, video: VideoFrames | None = None) -> str:
    """Return the camera's topic relative to the node: image, image/compressed or a video's."""
    if video is not None:
        return video.relative_topic
    return 'image/compressed' if compressed else 'image'


def subscribe_camera(subscriber: Node, topic: str, on_frame: FrameCallback, qos: QoSProfile, *,
                     compressed: bool, video: VideoFrames | None = None,
                     losses: FrameLossCounter | None = None) -> Subscription[CameraMessage]:
    """
    Subscribe `subscriber` to the camera `topic`; every frame goes to `on_frame`.

    `on_frame` gets a frame's bytes (Image, or CompressedImage when `compressed`), or for a
    `video` topic each packet's decoded frame or the reason it gave none. `losses` counts the
    frames lost before `on_frame`, None counts nothing.
    """
    message_type, callback, raw = ((video.message_type, video.decoding(on_frame), False)
                                   if video is not None else
                                   (CompressedImage if compressed else Image, on_frame, True))
    if losses is None:
        return subscriber.create_subscription(message_type, topic, callback, qos, raw=raw)
    counted = losses.callbacks(callback)
    return subscriber.create_subscription(message_type, topic, counted.callback, qos, raw=raw,
                                          event_callbacks=counted.event_callbacks)
