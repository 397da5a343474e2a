"""A camera's topics and serialized frames, as the transport table (parameters) says."""
from __future__ import annotations

import numpy as np
import pytest
from rclpy.serialization import serialize_message
from sensor_msgs.msg import CompressedImage, Image

from triton_perception.frames import (read_frame, ReadCompressedImage, ReadImage,
                                      transport_remappings)
from triton_perception.parameters import COMPRESSED, FOXGLOVE, RAW, TRANSPORTS


def test_a_node_takes_every_transport_of_its_camera_by_image_transports_names() -> None:
    """The node's `image` and a subtopic per other transport, under the camera's image topic."""
    assert transport_remappings('/cam/image_raw') == [
        ('image', '/cam/image_raw'), ('image/compressed', '/cam/image_raw/compressed'),
        ('image/ffmpeg', '/cam/image_raw/ffmpeg'), ('image/foxglove', '/cam/image_raw/foxglove')]
    assert len(transport_remappings('/cam/image_raw')) == len(TRANSPORTS)


def test_read_frame_reads_what_the_transport_takes_serialized() -> None:
    """Raw bytes read as an Image, compressed as a CompressedImage; video is not read here."""
    image = Image(height=1, width=2, encoding='rgb8', step=6, data=np.zeros(6, np.uint8).tobytes())
    compressed = CompressedImage(format='jpeg', data=b'\xff\xd8')
    assert isinstance(read_frame(serialize_message(image), RAW), ReadImage)
    assert isinstance(read_frame(serialize_message(compressed), COMPRESSED), ReadCompressedImage)
    with pytest.raises(ValueError, match='foxglove'):
        read_frame(serialize_message(compressed), FOXGLOVE)
