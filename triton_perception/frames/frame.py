"""
A received camera frame on its way to Triton: what a subscription hands over, and when it arrived.

The image subscriptions take their messages with ``raw=True``, so rclpy builds no Python
Image and copies no pixels (ros2/rclpy#1025); `read_frame` reads the fields and views the
pixels in the received bytes (serialized_images). The frame has the fields the nodes read from
a message, its header a std_msgs/Header that results carry on unchanged. A message that cannot
be read is rejected by the frame callback with the reason.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Union

from builtin_interfaces.msg import Time
from sensor_msgs.msg import CompressedImage, Image
from std_msgs.msg import Header

from triton_perception.frames.accounting import FrameRejected
from triton_perception.frames.serialized_images import (read_compressed_image, read_image,
                                                        ReadCompressedImage, ReadImage)
from triton_perception.parameters import Decoding, Transport

# A frame as read or built: a message of a test or a caller, or one read serialized.
FrameMessage = Union[Image, CompressedImage, ReadImage, ReadCompressedImage]
# What a camera subscription hands the frame callback: bytes (raw=True), a frame, or, from a
# video stream, why a packet gave no frame.
Taken = Union[FrameMessage, bytes, FrameRejected]
# What takes the CompressedImage path, whether built by rclpy or read here.
COMPRESSED_FRAMES = (CompressedImage, ReadCompressedImage)


@dataclass
class Frame:
    """
    A received frame, read, and the monotonic time it arrived.

    `settled` is set once its fate is counted, so that a fault that ends its request late cannot
    count it again.
    """

    message: FrameMessage
    received_at: float
    settled: bool = False


def ros_header(sec: int, nanosec: int, frame_id: str) -> Header:
    """Return a read header as the std_msgs/Header that results carry."""
    return Header(stamp=Time(sec=sec, nanosec=nanosec), frame_id=frame_id)


def read_frame(serialized: bytes, transport: Transport) -> ReadImage | ReadCompressedImage:
    """
    Read a serialized frame of a camera subscription: an Image or a CompressedImage.

    `transport` (parameters.TRANSPORTS) says which; only those taken serialized have bytes.
    Raises frames.serialized_images.UnreadableMessage (a FrameRejected) with the reason, and
    ValueError for a transport whose frames are not taken serialized (video).
    """
    if transport.decoding is Decoding.COMPRESSED_IMAGE:
        return read_compressed_image(serialized, ros_header)
    if transport.decoding is Decoding.IMAGE:
        return read_image(serialized, ros_header)
    raise ValueError(f'{transport.name}: its frames are not taken serialized, so not read here')
