"""
The output messages as a subscriber receives them, for tests that need message objects.

The nodes publish the detections and images as CDR bytes (outputs/cdr.py), their one builder;
these read those bytes back as the rclpy message, as rclpy hands them to a subscriber.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
from numpy.typing import NDArray
from rclpy.serialization import deserialize_message
from sensor_msgs.msg import Image
from std_msgs.msg import Header
from vision_msgs.msg import Detection2DArray

from triton_perception.outputs import detection_array_cdr, image_cdr


def detection_array_message(detections: NDArray[np.float32], header: Header,
                            track_ids: Sequence[str] | None = None) -> Detection2DArray:
    """Return the Detection2DArray detection_node publishes for DETECTIONS rows, as received."""
    return deserialize_message(detection_array_cdr(detections, header, track_ids),
                               Detection2DArray)


def image_message(pixels: NDArray[np.uint8], header: Header, encoding: str) -> Image:
    """Return an rgb8/bgr8 [H, W, 3] or mono8 [H, W] array as the Image it is published as."""
    return deserialize_message(image_cdr(pixels, header, encoding), Image)
