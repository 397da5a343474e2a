"""
Where a node's camera frames come from: its own image subscription, or its process's shared one.

A node in a process of its own subscribes to its camera; the nodes of a perception process
attach to the camera subscription the process shares (camera_frames.CameraFrames). Either way
the frames reach the same frame callback, and losses before the node are counted.
"""
from __future__ import annotations

from typing import Any, Callable

from rclpy.node import Node
from rclpy.qos import QoSProfile
from rclpy.subscription import Subscription
from sensor_msgs.msg import CompressedImage, Image

from triton_perception.frames import FrameAccounting
from triton_perception.nodes.camera_frames import CameraFrames
from triton_perception.nodes.frame_losses import FrameLossCounter
from triton_perception.nodes.video_input import VideoFrames


class ImageInput:
    """A node's image topic, subscribed while the node is active."""

    def __init__(self, node: Node, accounting: FrameAccounting, compressed: bool,
                 frame_source: CameraFrames | None, video: VideoFrames | None = None) -> None:
        """
        Take `node`'s `image` (or, `compressed`, `image/compressed`) topic.

        `accounting` counts the frames lost before the node; `frame_source` is the camera
        subscription of a perception process, None subscribes `node` itself. `video`: the
        camera's video topic instead (nodes.video_input).
        """
        self._node = node
        self._accounting = accounting
        self.compressed = compressed
        self._video = video
        self._relative_topic = (video.relative_topic if video is not None
                                else 'image/compressed' if compressed else 'image')
        self.topic = node.resolve_topic_name(self._relative_topic)
        self._frame_source = frame_source
        self._losses = FrameLossCounter(
            node, accounting if video is None else video.losses_into(accounting), self.topic)
        self._subscription: Subscription[Any] | None = None

    @property
    def loss_counting(self) -> str:
        """Return how frames lost before the node are counted (FrameLossCounter.method)."""
        if self._frame_source is not None:
            return self._frame_source.loss_counting
        return self._losses.method

    def video_values(self) -> dict[str, str]:
        """Return the video decoder's /diagnostics values ({} for an image topic)."""
        return {} if self._video is None else self._video.diagnostics()

    def subscribe(self, on_frame: Callable[[Any], None], qos: QoSProfile) -> None:
        """
        Hand every frame of the topic to `on_frame` until `unsubscribe`.

        Frames are taken serialized (nodes.frame_reading): `on_frame` gets bytes, or a frame read
        from them by the camera subscription of a perception process.
        """
        if self._frame_source is not None:
            self._frame_source.attach(self._node.get_fully_qualified_name(), self.topic,
                                      self.compressed, on_frame, self._accounting, qos,
                                      self._video)
            return
        if self._video is not None:  # packets as messages: decoded in order, one by one
            self._subscription = self._node.create_subscription(
                self._video.message_type, self._relative_topic, qos_profile=qos,
                **self._losses.subscription_arguments(self._video.decoding(on_frame)))
            return
        self._subscription = self._node.create_subscription(
            CompressedImage if self.compressed else Image, self._relative_topic,
            qos_profile=qos, raw=True, **self._losses.subscription_arguments(on_frame))

    def unsubscribe(self) -> None:
        """Stop handing frames on; does nothing when not subscribed."""
        if self._frame_source is not None:
            self._frame_source.detach(self._node.get_fully_qualified_name())
        if self._subscription is not None:
            self._node.destroy_subscription(self._subscription)
            self._subscription = None
