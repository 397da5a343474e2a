"""Read camera frames back out of a bag as RGB arrays, for tests and offline evaluation."""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple, TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray
from rosbags.highlevel import AnyReader, AnyReaderError
from rosbags.typesys.store import Typestore

from triton_perception.bag.bag_format import (BagError, CAMERA_TYPES, DEFAULT_TOPIC, IMAGE_TYPE,
                                              typestore, typestore_for, VIDEO_TYPES)
from triton_perception.frames import (compressed_to_rgb, image_to_rgb, KeyframeWait,
                                      VideoDecoder, VideoPacket)

if TYPE_CHECKING:  # rosbags' message classes have these messages' fields
    from builtin_interfaces.msg import Time
    from ffmpeg_image_transport_msgs.msg import FFMPEGPacket
    from foxglove_msgs.msg import CompressedVideo
    from sensor_msgs.msg import CompressedImage, Image

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
    pipeline would. A video topic (CompressedVideo, FFMPEGPacket) is decoded as the nodes
    decode it (frames.VideoDecoder, packets in order): its frames from the first keyframe on.
    """
    try:
        reader = AnyReader([Path(bag)], default_typestore=camera_typestore())
    except (FileNotFoundError, AnyReaderError) as error:
        raise BagError(f'cannot open bag {bag}: {error}') from None
    with reader:
        connections = [c for c in reader.connections if c.topic == topic]
        if not connections:
            available = ', '.join(sorted({c.topic for c in reader.connections})) or 'none'
            raise BagError(f'{bag} has no topic {topic} (topics: {available})')
        for connection in connections:
            if connection.msgtype not in CAMERA_TYPES:
                raise BagError(f'{topic} in {bag} carries {connection.msgtype}, not an image type')
        video = VideoDecoder(max_pixels=max_image_pixels)  # too_large from the SPS, as the nodes
        for connection, stamp_ns, raw in reader.messages(connections=connections):
            message: Image | CompressedImage | CompressedVideo | FFMPEGPacket = \
                reader.deserialize(raw, connection.msgtype)
            if connection.msgtype in VIDEO_TYPES:
                stamp, packet = video_packet(message)
                try:
                    rgb = video.decode(packet)
                except KeyframeWait:
                    continue  # as the nodes do: a stream cut between keyframes starts at one
            else:
                stamp = message.header.stamp
                rgb = (image_to_rgb(message, max_image_pixels) if connection.msgtype == IMAGE_TYPE
                       else compressed_to_rgb(message, max_image_pixels))
            yield BagImage(stamp_ns, stamp.sec * 1_000_000_000 + stamp.nanosec, rgb)


def camera_typestore() -> Typestore:
    """
    Return the distribution's typestore with the video cameras' types where they are installed.

    Without foxglove_msgs or ffmpeg_image_transport_msgs, bags of images read as before (and
    a video bag's own type definitions, as mcap stores them, still serve).
    """
    try:
        return typestore_for(VIDEO_TYPES)
    except BagError:
        return typestore()


def video_packet(message: CompressedVideo | FFMPEGPacket) -> tuple[Time, VideoPacket]:
    """Return a CompressedVideo's or an FFMPEGPacket's stamp and packet (rosbags message)."""
    if hasattr(message, 'header'):  # FFMPEGPacket
        return message.header.stamp, VideoPacket(bytes(message.data),
                                                 message.encoding.split(';')[0])
    return message.timestamp, VideoPacket(bytes(message.data), message.format)


def frames_before_keyframe(bag: Path, topic: str) -> int:
    """Return how many packets of the video `topic` come before its first keyframe."""
    video = VideoDecoder()
    with AnyReader([Path(bag)], default_typestore=camera_typestore()) as reader:
        connections = [c for c in reader.connections if c.topic == topic]
        for index, (connection, _stamp, raw) in enumerate(reader.messages(connections)):
            try:
                video.decode(video_packet(reader.deserialize(raw, connection.msgtype))[1])
            except KeyframeWait:
                continue
            return index
    return 0
