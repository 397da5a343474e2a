"""
Camera frames taken serialized: the subscription hands over CDR bytes, read here into a frame.

The image subscriptions take their messages with ``raw=True``, so rclpy builds no Python
Image and copies no pixels (ros2/rclpy#1025); frames.serialized_images reads the fields and
views the pixels in the received bytes. The frame has the fields the nodes read from a
message, its header a std_msgs/Header that results carry on unchanged. A message that cannot
be read reaches the frame callback as its bytes, and is rejected there with the reason.
"""
from __future__ import annotations

from typing import Union

from builtin_interfaces.msg import Time
from sensor_msgs.msg import CompressedImage, Image
from std_msgs.msg import Header

from triton_perception.frames import (read_compressed_image, read_image, ReadCompressedImage,
                                      ReadImage)

# What an image subscription hands the frame callback: bytes (raw=True), or a message that a
# test or a caller built; and a frame once read.
Taken = Union[Image, CompressedImage, ReadImage, ReadCompressedImage, bytes]
# What takes the CompressedImage path, whether built by rclpy or read here.
COMPRESSED_FRAMES = (CompressedImage, ReadCompressedImage)


def ros_header(sec: int, nanosec: int, frame_id: str) -> Header:
    """Return a read header as the std_msgs/Header that results carry."""
    return Header(stamp=Time(sec=sec, nanosec=nanosec), frame_id=frame_id)


def read_frame(serialized: bytes, compressed: bool) -> ReadImage | ReadCompressedImage:
    """
    Read a serialized Image (or, `compressed`, CompressedImage) of an image subscription.

    Raises frames.serialized_images.UnreadableMessage (a FrameRejected) with the reason.
    """
    if compressed:
        return read_compressed_image(serialized, ros_header)
    return read_image(serialized, ros_header)
