"""Read camera frames back out of a bag as RGB arrays, for tests and offline evaluation."""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import NDArray
from rosbags.highlevel import AnyReader, AnyReaderError

from triton_perception.bag.bag_format import (BagError, COMPRESSED_IMAGE_TYPE, DEFAULT_TOPIC,
                                              IMAGE_TYPE, typestore)
from triton_perception.frames import compressed_to_rgb, image_to_rgb

# Far above any camera; only guards against a corrupt message claiming a huge size.
DEFAULT_MAX_IMAGE_PIXELS = 100_000_000


class BagImage(NamedTuple):
    """
    One frame: bag (receive) time, the message's header stamp, and uint8 [H, W, 3] RGB.

    ``rgb`` may be a read-only view of the message buffer (unpadded rgb8); copy to modify.
    """

    stamp_ns: int
    header_stamp_ns: int
    rgb: NDArray[np.uint8]


def read_images(bag: Path, topic: str = DEFAULT_TOPIC, *,
                max_image_pixels: int = DEFAULT_MAX_IMAGE_PIXELS) -> Iterator[BagImage]:
    """
    Yield every Image or CompressedImage on ``topic`` in bag-time order.

    Decoding goes through the same conversion as the nodes
    (triton_perception.frames.image_conversion), so evaluation sees exactly the pixels the
    pipeline would.
    """
    try:
        reader = AnyReader([Path(bag)], default_typestore=typestore())
    except (FileNotFoundError, AnyReaderError) as error:
        raise BagError(f'cannot open bag {bag}: {error}') from None
    with reader:
        connections = [c for c in reader.connections if c.topic == topic]
        if not connections:
            available = ', '.join(sorted({c.topic for c in reader.connections})) or 'none'
            raise BagError(f'{bag} has no topic {topic} (topics: {available})')
        for connection in connections:
            if connection.msgtype not in (IMAGE_TYPE, COMPRESSED_IMAGE_TYPE):
                raise BagError(f'{topic} in {bag} carries {connection.msgtype}, not an image type')
        for connection, stamp_ns, raw in reader.messages(connections=connections):
            message: Any = reader.deserialize(raw, connection.msgtype)
            rgb = (image_to_rgb(message, max_image_pixels) if connection.msgtype == IMAGE_TYPE
                   else compressed_to_rgb(message, max_image_pixels))
            stamp = message.header.stamp
            yield BagImage(stamp_ns, stamp.sec * 1_000_000_000 + stamp.nanosec, rgb)
