"""
The camera transports a node may take: one table, read by everything that names one.

A transport is image_transport's: its name is the `input_transport` value and the subtopic of
the camera's image topic it arrives on (`image/compressed`; `raw` is the image topic itself).
Each says its message type, whether frames are taken serialized (rclpy's `raw=True`, read from
the bytes by frames.read_frame) or as messages, and the decoding a frame needs. The parameter
tables, the launch arguments and plan, the topic remappings, the bag tools and the nodes read
this table, so a new transport is one line here plus its decoding where it is new. It sits
in parameters/, below frames/, because the parameter tables, the lowest of its readers, take
their accepted values from it; like them it imports no ROS, as launch files read it.
"""
from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from triton_perception.parameters.specs import ParameterError


class Decoding(Enum):
    """What turns a transport's frames into pixels."""

    IMAGE = 'image'  # pixels as they are (frames.image_to_rgb)
    COMPRESSED_IMAGE = 'compressed image'  # one JPEG or PNG per frame (frames.compressed_to_rgb)
    VIDEO = 'video'  # H.264/H.265 packets decoded in order, per camera (nodes.video_input)


VIDEO_CODECS = 'video in H.264 or H.265'  # what every video transport carries


@dataclass(frozen=True)
class Transport:
    """
    One camera transport: its name, topic, message type and the decoding it needs.

    `subtopic`: image_transport's topic under the image topic ('' for the image topic itself).
    `message_type`: 'package/msg/Type', as rosbag2 and `ros2 topic` name it. `formats`: what a
    compressed image may hold, for the descriptions.
    """

    name: str
    subtopic: str
    message_type: str
    decoding: Decoding
    formats: tuple[str, ...] = ()

    @property
    def topic(self) -> str:
        """Return the topic relative to a node: `image` or `image/<subtopic>`."""
        return self.topic_of('image')

    def topic_of(self, image_topic: str) -> str:
        """Return this transport's topic of the camera whose image topic is `image_topic`."""
        return f'{image_topic}/{self.subtopic}' if self.subtopic else image_topic

    @property
    def serialized(self) -> bool:
        """Return whether frames are taken as bytes (rclpy's raw=True); video packets are not."""
        return self.decoding is not Decoding.VIDEO

    @property
    def is_video(self) -> bool:
        """Return whether the camera needs a video decoder of its own."""
        return self.decoding is Decoding.VIDEO

    @property
    def type_name(self) -> str:
        """Return the message type's short name: `CompressedImage`."""
        return self.message_type.rpartition('/')[2]

    @property
    def package_type(self) -> str:
        """Return the message type as the descriptions write it: `sensor_msgs/CompressedImage`."""
        return self.message_type.replace('/msg/', '/')


RAW = Transport('raw', '', 'sensor_msgs/msg/Image', Decoding.IMAGE)
COMPRESSED = Transport('compressed', 'compressed', 'sensor_msgs/msg/CompressedImage',
                       Decoding.COMPRESSED_IMAGE, ('jpeg', 'png'))
FFMPEG = Transport('ffmpeg', 'ffmpeg', 'ffmpeg_image_transport_msgs/msg/FFMPEGPacket',
                   Decoding.VIDEO)
FOXGLOVE = Transport('foxglove', 'foxglove', 'foxglove_msgs/msg/CompressedVideo', Decoding.VIDEO)

# Every transport by name, in the order the parameters and launch arguments list them.
TRANSPORTS: dict[str, Transport] = {transport.name: transport
                                    for transport in (RAW, COMPRESSED, FFMPEG, FOXGLOVE)}
IMAGE_TRANSPORTS = tuple(name for name, each in TRANSPORTS.items() if not each.is_video)
VIDEO_TRANSPORTS = tuple(name for name, each in TRANSPORTS.items() if each.is_video)


def transport_named(name: str) -> Transport:
    """Return the transport `name`; raises ParameterError naming the accepted ones."""
    try:
        return TRANSPORTS[name]
    except KeyError:
        raise ParameterError(f'input_transport {name!r} is not one of '
                             f"{', '.join(TRANSPORTS)}") from None


def subscription_description() -> str:
    """Return what each transport subscribes to, as the node parameter describes it."""
    parts = []
    for index, transport in enumerate(TRANSPORTS.values()):
        formats = f", {' or '.join(transport.formats)}" if transport.formats else ''
        verb = 'subscribe to ' if index == 0 else ''
        parts.append(f'{transport.name}: {verb}{transport.topic} '
                     f'({transport.package_type}{formats})')
    return '; '.join([*parts, VIDEO_CODECS] if VIDEO_TRANSPORTS else parts)


def argument_description() -> str:
    """Return the transports as the launch argument describes them, short type names only."""
    images = ', '.join(
        f"{name} ({TRANSPORTS[name].type_name}{' ' if TRANSPORTS[name].formats else ''}"
        f"{'/'.join(TRANSPORTS[name].formats)})" for name in IMAGE_TRANSPORTS)
    videos = ' or '.join(f'{name} ({TRANSPORTS[name].type_name})' for name in VIDEO_TRANSPORTS)
    return f'{images}, or {VIDEO_CODECS}: {videos}' if videos else images
