"""
overlay_node: one annotated image (drivable area, lanes, boxes) for rviz or rqt_image_view.

Frames and results are matched by header stamp in a bounded cache. The node subscribes to the
camera only while someone subscribes to `overlay`, so it costs nothing when unwatched. A frame
or result it cannot read (any publisher may send valid messages it cannot draw) is counted in
its /diagnostics with the reason, and the next frame is drawn.
"""
from __future__ import annotations

import collections
from dataclasses import dataclass, field
import sys
import threading
import time
from typing import TYPE_CHECKING, TypeAlias, Union

from rclpy.node import Node
from rclpy.subscription import Subscription
from sensor_msgs.msg import CompressedImage, Image, PointCloud2
from std_msgs.msg import Header
from vision_msgs.msg import Detection2DArray, LabelInfo

from triton_perception.frames import (COMPRESSED_FRAMES, compressed_to_rgb, FrameRejected,
                                      image_to_rgb, read_frame, ReadCompressedImage, ReadImage,
                                      Taken)
from triton_perception.nodes.camera_subscription import (CameraMessage, CameraStream,
                                                         subscribe_camera)
from triton_perception.nodes.node_process import run_nodes
from triton_perception.nodes.overlay_diagnostics import OverlayDiagnostics
from triton_perception.nodes.ros_parameters import declare_parameters
from triton_perception.outputs import draw_results, image_cdr, UnreadableResult
from triton_perception.parameters import OVERLAY, OverlaySettings, transport_named
from triton_perception.qos import LATCHED_QOS, OVERLAY_QOS, RESULT_QOS, stream_qos

if TYPE_CHECKING:  # rclpy's node options (typed from Jazzy on)
    from rclpy.lifecycle.node import LifecycleNodeArgs
    from typing_extensions import Unpack

WATCH_PERIOD_S = 0.5
StampKey = tuple[int, int]
# What a frame waits for: detections, lanes, the drivable area.
Result: TypeAlias = Union[Detection2DArray, PointCloud2, Image]


def stamp_key(header: Header) -> StampKey:
    """Return (sec, nanosec) of a header's stamp: frames and results are matched by it."""
    return header.stamp.sec, header.stamp.nanosec


@dataclass
class PendingFrame:
    """A frame waiting for its results: the message, its arrival (s), results by topic."""

    message: Image | CompressedImage | ReadImage | ReadCompressedImage
    arrived: float
    results: dict[str, Result] = field(default_factory=dict)


class OverlayNode(Node):
    """
    Draws detections, lanes and the drivable area onto the camera frame they belong to.

    Results are matched to frames by header stamp; a frame is drawn once every expected result
    has arrived. The camera and the results are subscribed to only while someone subscribes to
    `overlay`.
    """

    def __init__(self, **node_options: Unpack[LifecycleNodeArgs]) -> None:
        """Declare the parameters and subscribe to label_info and the expected result topics."""
        super().__init__('overlay_node', **node_options)
        # Read-only parameters (descriptors say so): the subscriptions depend on them.
        self.settings = declare_parameters(self, OVERLAY, OverlaySettings)
        self._stream = CameraStream(transport_named(self.settings.input_transport))
        self.expected = (['detections'] if self.settings.expect_detections else []) + (
            ['lanes', 'drivable_area'] if self.settings.expect_lanes else [])
        self._lock = threading.Lock()
        self._pending: collections.OrderedDict[StampKey, PendingFrame] = collections.OrderedDict()
        self._early_results: collections.OrderedDict[StampKey, dict[str, Result]] = \
            collections.OrderedDict()
        self.labels: list[str] = []
        self._overlay = self.create_publisher(Image, 'overlay', OVERLAY_QOS)
        self._diagnostics = OverlayDiagnostics(self, self.settings.diagnostics_period_s)
        self.create_subscription(LabelInfo, 'label_info', self._on_labels, LATCHED_QOS)
        self._camera_subscription: Subscription[CameraMessage] | None = None
        self._result_subscriptions: list[Subscription[Result]] = []
        self.create_timer(WATCH_PERIOD_S, self._follow_watchers)

    def _on_labels(self, message: LabelInfo) -> None:
        ordered = sorted(message.class_map, key=lambda item: item.class_id)
        self.labels = [item.class_name for item in ordered]

    def _follow_watchers(self) -> None:
        """
        Subscribe to the camera and the results only while the overlay is watched.

        An unwatched overlay then costs nothing per frame: taking every frame's results from DDS
        (a drivable-area image among them) would cost as much as drawing. Stale frames are
        flushed.
        """
        watched = self._overlay.get_subscription_count() > 0
        if watched and self._camera_subscription is None:
            self._result_subscriptions = [
                self.create_subscription(message_type, topic,
                                         lambda message, key=topic: self._on_result(key, message),
                                         RESULT_QOS)
                for topic, message_type in (('detections', Detection2DArray),
                                            ('lanes', PointCloud2), ('drivable_area', Image))
                if topic in self.expected]
            self._camera_subscription = subscribe_camera(
                self, self._stream.topic, self._on_frame,
                stream_qos(self.settings.qos_reliability, 1), self._stream)
        elif not watched and self._camera_subscription is not None:
            self.destroy_subscription(self._camera_subscription)
            self._camera_subscription = None
            for subscription in self._result_subscriptions:
                self.destroy_subscription(subscription)
            self._result_subscriptions = []
            with self._lock:
                self._pending.clear()
                self._early_results.clear()
        self._flush(time.monotonic())

    def _on_frame(self, taken: Taken) -> None:
        try:
            if isinstance(taken, FrameRejected):
                raise taken
            message = (read_frame(taken, self._stream.transport) if isinstance(taken, bytes)
                       else taken)
        except FrameRejected as rejection:
            self._not_drawn('rejected', rejection.reason, rejection)
            return
        key = stamp_key(message.header)
        with self._lock:
            frame = PendingFrame(message, time.monotonic(), self._early_results.pop(key, {}))
            self._pending[key] = frame
            while len(self._pending) > self.settings.cache_size:
                self._pending.popitem(last=False)
        self._draw_if_complete(key)

    def _on_result(self, topic: str, message: Result) -> None:
        key = stamp_key(message.header)
        with self._lock:
            if key in self._pending:
                self._pending[key].results[topic] = message
            elif self._camera_subscription is not None:
                self._early_results.setdefault(key, {})[topic] = message
                while len(self._early_results) > self.settings.cache_size:
                    self._early_results.popitem(last=False)
        self._draw_if_complete(key)

    def _draw_if_complete(self, key: StampKey) -> None:
        with self._lock:
            frame = self._pending.get(key)
            if frame is None or any(topic not in frame.results for topic in self.expected):
                return
            del self._pending[key]
        self._draw(frame)

    def _flush(self, now: float) -> None:
        """Frames whose results did not all arrive in time are drawn with what did."""
        with self._lock:
            stale = [key for key, frame in self._pending.items()
                     if now - frame.arrived > self.settings.max_wait_s]
            frames = [self._pending.pop(key) for key in stale]
        for frame in frames:
            if frame.results:
                self._draw(frame)

    def _draw(self, frame: PendingFrame) -> None:
        """Draw and publish one frame; what cannot be read or drawn is counted, never raised."""
        try:
            if isinstance(frame.message, COMPRESSED_FRAMES):
                rgb = compressed_to_rgb(frame.message, self.settings.max_image_pixels)
            else:
                rgb = image_to_rgb(frame.message, self.settings.max_image_pixels).copy()
            draw_results(rgb, frame.results, self.labels)
            self._overlay.publish(image_cdr(rgb, frame.message.header, 'rgb8'))
        except (FrameRejected, UnreadableResult) as rejection:
            self._not_drawn('rejected', rejection.reason, rejection)
            return
        except Exception as error:  # noqa: BLE001 (a bug here must not end the process)
            self._not_drawn('failed', type(error).__name__, error)
            return
        self._diagnostics.counts.count_published()

    def _not_drawn(self, fate: str, reason: str, error: Exception) -> None:
        self._diagnostics.counts.count_not_drawn(fate, reason)
        self.get_logger().warning(f'overlay skipped a frame ({fate}: {reason}): {error}',
                                  throttle_duration_sec=5.0)


def main(args: list[str] | None = None) -> None:
    """Run overlay_node in this process; exits with run_nodes' code (2 on bad parameters)."""
    sys.exit(run_nodes([OverlayNode], args))


if __name__ == '__main__':
    main()
