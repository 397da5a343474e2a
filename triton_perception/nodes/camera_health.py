"""
A camera's health status on /diagnostics, from the frames its node (or process) already takes.

Every frame's stamp is taken in the frame callback; the image is checked on the RGB copy the
node converts for inference, so the check adds no conversion of its own (while Triton is not
ready no frame is converted, and the image conditions keep their last level). In a perception
process the camera's nodes share one reporter (camera_frames.CameraFrames): a frame handed to
both is taken once. Results are published as usual whatever the status says: the status tells
downstream whether to trust them (docs/topics.md).
"""
from __future__ import annotations

import threading
import time
from typing import Callable

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
import numpy as np
from numpy.typing import NDArray
from rclpy.node import Node
from std_msgs.msg import Header

from triton_perception.frames import camera_status_name, FrameMessage
from triton_perception.health import (CameraHealth, figures_from_statistics, frame_figures,
                                      FrameFigures)
from triton_perception.parameters import HealthSettings
from triton_perception.qos import DIAGNOSTICS_QOS


# How long statistics from the served graph stand in for the node's own check of the pixels.
SERVED_STATISTICS_S = 2.0


def stamp_seconds(message: FrameMessage) -> float:
    """Return the header stamp of an Image or CompressedImage in seconds."""
    stamp = message.header.stamp
    return float(stamp.sec) + float(stamp.nanosec) * 1e-9


class CameraHealthReporter:
    """One camera's CameraHealth, fed from its frames and published every diagnostics period."""

    def __init__(self, node: Node, settings: HealthSettings, image_topic: str,
                 period_s: float) -> None:
        """Publish the health of the camera on `image_topic` on `node`'s /diagnostics."""
        self._node = node
        self._topic = image_topic
        self._lock = threading.Lock()
        self._health = CameraHealth(settings)
        self._last_frame: FrameMessage | None = None
        self._last_image: FrameMessage | None = None
        # The check's own CPU (thread time of the frame and image steps), so that its cost is
        # measured where it runs: the glue bench reads it from the status.
        self._cpu_s = 0.0
        # When the served graph last gave a frame's statistics: until SERVED_STATISTICS_S after
        # it, the frames' own pixels are not read here.
        self._served_at = -SERVED_STATISTICS_S
        self._publisher = node.create_publisher(DiagnosticArray, '/diagnostics', DIAGNOSTICS_QOS)
        node.create_timer(period_s, self.publish)

    def frame(self, message: FrameMessage) -> None:
        """Take a frame as it arrives (the frame callback): its stamp and arrival time."""
        began = time.thread_time()
        with self._lock:
            if message is self._last_frame:
                return  # the same frame handed to another node of the camera
            self._last_frame = message
            self._health.frame(stamp_seconds(message), time.monotonic())
            self._cpu_s += time.thread_time() - began

    def image(self, message: FrameMessage, rgb: NDArray[np.uint8]) -> None:
        """
        Check the converted frame (every `health_every_n`th) on the caller's thread.

        Skipped while the served graph gives the statistics (`statistics`).
        """
        with self._lock:
            if time.monotonic() - self._served_at < SERVED_STATISTICS_S:
                return
        self._judge(message, lambda: frame_figures(rgb))

    def statistics(self, message: FrameMessage, values: NDArray[np.float32]) -> None:
        """Judge a frame from the health statistics the served graph computed for it."""
        with self._lock:
            self._served_at = time.monotonic()
        self._judge(message, lambda: figures_from_statistics(values))

    def _judge(self, message: FrameMessage, figures: Callable[[], FrameFigures]) -> None:
        """Take `figures()` of `message` once per frame, every `health_every_n`th, timed."""
        began = time.thread_time()
        with self._lock:
            if message is self._last_image or not self._health.image_due():
                return
            self._last_image = message
        judged = figures()  # outside the lock: the pixels' part may take a while
        with self._lock:
            self._health.image(judged, stamp_seconds(message), time.monotonic())
            self._cpu_s += time.thread_time() - began

    def publish(self) -> None:
        """Publish the camera's status now."""
        with self._lock:
            report = self._health.report(time.monotonic())
            values = {**report.values, 'check_cpu_ms': f'{self._cpu_s * 1e3:.1f}'}
        status = DiagnosticStatus(
            level=bytes([report.level]), name=camera_status_name(self._topic),
            message=report.message, hardware_id=self._topic,
            values=[KeyValue(key=key, value=value) for key, value in values.items()])
        self._publisher.publish(DiagnosticArray(
            header=Header(stamp=self._node.get_clock().now().to_msg()), status=[status]))


def camera_health(node: Node, settings: HealthSettings, image_topic: str, period_s: float,
                  shared: Callable[[Callable[[], CameraHealthReporter]], CameraHealthReporter]
                  | None) -> CameraHealthReporter | None:
    """
    Return the reporter of `node`'s camera, None when `camera_health` is off.

    `shared` returns the reporter of a perception process's camera, made by the first node.
    """
    if not settings.camera_health:
        return None

    def make() -> CameraHealthReporter:
        return CameraHealthReporter(node, settings, image_topic, period_s)
    return make() if shared is None else shared(make)
