"""
A frame's way into an inference node, from the subscription to the worker, in one place.

1. `ImageInput`: the node's camera topic, subscribed while the node is active: its own
   subscription (frames taken serialized, losses before the node counted by frame_losses), a
   video topic decoded by video_input, or the camera subscription its perception process
   shares (camera_frames).
2. `FrameChecks.on_frame`, on the executor: count the frame, read its header, check it, and
   hand it to the worker's latest-frame slot, so that a burst of malformed frames cannot hide
   behind the slot and a slow Triton never blocks the executor.
3. `RgbConversion.rgb`, later, on the worker's request thread: the pixels as RGB, converted
   once for all nodes of a shared camera.
"""
from __future__ import annotations

from typing import Callable

import numpy as np
from numpy.typing import NDArray
from rclpy.node import Node
from rclpy.qos import QoSProfile
from rclpy.subscription import Subscription

from triton_perception.frames import (check_compressed, check_image, COMPRESSED_FRAMES,
                                      compressed_to_rgb, Fate, Frame, FrameAccounting,
                                      FrameMessage, FrameRejected, image_to_rgb, PacketDropped,
                                      read_frame, Taken)
from triton_perception.nodes.camera_frames import CameraFrames
from triton_perception.nodes.camera_subscription import (CameraMessage, CameraStream,
                                                         FrameCallback, subscribe_camera)
from triton_perception.nodes.executors import HOT_PATH
from triton_perception.nodes.frame_losses import FrameLossCounter
from triton_perception.parameters import InferenceSettings, LiveSettings, Transport
from triton_perception.serving import FrameWorker, Log


class ImageInput:
    """A node's image topic, subscribed while the node is active."""

    def __init__(self, node: Node, accounting: FrameAccounting, stream: CameraStream,
                 frame_source: CameraFrames | None) -> None:
        """
        Take `node`'s camera topic as `stream` says: `image`, `image/compressed`, a video's.

        `accounting` counts the frames lost before the node; `frame_source` is the camera
        subscription of a perception process, None subscribes `node` itself.
        """
        self._node = node
        self._accounting = accounting
        self.stream = stream
        self.topic = node.resolve_topic_name(stream.topic)
        self._frame_source = frame_source
        video = stream.video
        self._losses = FrameLossCounter(
            node, accounting if video is None else video.losses_into(accounting), self.topic)
        self._subscription: Subscription[CameraMessage] | None = None
        self._subscriber: Node | None = None

    @property
    def loss_counting(self) -> str:
        """Return how frames lost before the node are counted (FrameLossCounter.method)."""
        if self._frame_source is not None:
            return self._frame_source.loss_counting
        return self._losses.method

    def video_values(self) -> dict[str, str]:
        """Return the video decoder's /diagnostics values ({} for an image topic)."""
        return {} if self.stream.video is None else self.stream.video.diagnostics()

    def subscribe(self, on_frame: FrameCallback, qos: QoSProfile) -> None:
        """
        Hand every frame of the topic to `on_frame` until `unsubscribe`.

        Frames are taken serialized (frames.read_frame): `on_frame` gets bytes, or a frame read
        from them by the camera subscription of a perception process.
        """
        if self._frame_source is not None:
            self._frame_source.attach(self._node.get_fully_qualified_name(), self.topic,
                                      self.stream, on_frame, self._accounting, qos)
            return
        # On the hot path node (nodes.executors), by the name resolved on this node.
        subscriber = self._subscriber = HOT_PATH.node()
        self._subscription = subscribe_camera(subscriber, self.topic, on_frame, qos,
                                              self.stream, losses=self._losses)

    def unsubscribe(self) -> None:
        """Stop handing frames on; does nothing when not subscribed."""
        if self._frame_source is not None:
            self._frame_source.detach(self._node.get_fully_qualified_name())
        if self._subscription is not None and self._subscriber is not None:
            self._subscriber.destroy_subscription(self._subscription)
            self._subscription = None

    def close(self) -> None:
        """Unsubscribe and end a video topic's decoding thread and decoder (the node's end)."""
        self.unsubscribe()
        if self.stream.video is not None:
            self.stream.video.close()


class FrameChecks:
    """The frame callback: count the frame, check its header, hand it to the worker."""

    def __init__(self, accounting: FrameAccounting, settings: LiveSettings[InferenceSettings],
                 topic: str, transport: Transport, log: Log,
                 worker: Callable[[], FrameWorker | None],
                 on_read: Callable[[FrameMessage], None] | None = None) -> None:
        """
        Check frames of `topic` against `settings()` (max_image_pixels); count into `accounting`.

        `transport`: how serialized frames are read (Images, or CompressedImages).

        `worker` returns the node's worker, None while the node is not active. `on_read` is
        given every frame that has a readable header (the camera's health check), before its
        checks.
        """
        self._on_read = on_read
        self._accounting = accounting
        self._settings = settings
        self._topic = topic
        self._transport = transport
        self._log = log
        self._worker = worker

    def on_frame(self, message: Taken) -> None:
        """Reject a malformed frame (header checks only), else submit it to the worker."""
        received_at = self._accounting.received()
        worker = self._worker()
        if worker is None:  # taken in the same executor wake-up as the deactivation
            self._accounting.settle(Fate.DROPPED, received_at, 'node not active')
            return
        try:
            if isinstance(message, FrameRejected):  # a video packet that gave no frame
                raise message
            if isinstance(message, bytes):
                message = read_frame(message, self._transport)
            if self._on_read is not None:
                self._on_read(message)
            if isinstance(message, COMPRESSED_FRAMES):
                check_compressed(message, self._settings().max_image_pixels)
            else:
                check_image(message, self._settings().max_image_pixels)
        except PacketDropped as wait:  # how a video stream starts, a full queue: not an error
            self._accounting.settle(Fate.DROPPED, received_at, wait.reason)
            return
        except FrameRejected as rejection:
            self._accounting.settle(Fate.REJECTED, received_at, rejection.reason)
            self._log.frame_problem(
                f'rejected a frame on {self._topic}: {rejection} '
                f'({self._accounting.count(Fate.REJECTED)} rejected so far)')
            return
        worker.submit(Frame(message, received_at))


class RgbConversion:
    """A frame as RGB, converted once for all nodes of a shared camera."""

    def __init__(self, settings: LiveSettings[InferenceSettings],
                 frame_source: CameraFrames | None) -> None:
        """Convert within `settings()` (max_image_pixels); `frame_source` shares conversions."""
        self._settings = settings
        self._frame_source = frame_source

    def rgb(self, frame: Frame) -> NDArray[np.uint8]:
        """Return the frame as RGB uint8 [H, W, 3]; raises FrameRejected (counted) for bad input."""
        def convert() -> NDArray[np.uint8]:
            max_pixels = self._settings().max_image_pixels
            if isinstance(frame.message, COMPRESSED_FRAMES):
                return compressed_to_rgb(frame.message, max_pixels)
            return image_to_rgb(frame.message, max_pixels)
        if self._frame_source is not None:
            return self._frame_source.rgb(frame.message, convert)
        converted: NDArray[np.uint8] = convert()
        return converted
