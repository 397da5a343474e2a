"""The benchmark's ROS participant: frames out to the nodes, their results and status back."""
from __future__ import annotations

import array
from collections import defaultdict
from pathlib import Path
import threading
import time
from typing import Callable, Protocol, Sequence, TYPE_CHECKING

import cv2
from diagnostic_msgs.msg import DiagnosticArray
import numpy as np
from numpy.typing import NDArray
import rclpy
from rclpy.context import Context
from rclpy.executors import SingleThreadedExecutor
from rclpy.signals import SignalHandlerOptions
from sensor_msgs.msg import Image

from triton_perception.bench.session.settings import (BenchError, FRAME_QOS, NodeKind,
                                                      RESULTS_READER_QOS, Stamp)
from triton_perception.frames import camera_status_name, NodeStatus, status_name
from triton_perception.nodes import MESSAGE_INFO_AVAILABLE
from triton_perception.qos import DIAGNOSTICS_QOS
from triton_perception.system import dds_profile_environment, PrivateDomain

if TYPE_CHECKING:
    from std_msgs.msg import Header

    try:  # Iron and newer: Humble's rclpy passes a subscription callback no MessageInfo
        from rclpy.subscription import MessageInfo
    except ImportError:
        pass


class Headed(Protocol):
    """A message with a std_msgs/Header: a frame, or any node's result."""

    header: Header


# A result subscription's callback: with MessageInfo where rclpy passes it (Iron and newer).
ResultCallback = Callable[[Headed], None] | Callable[[Headed, 'MessageInfo'], None]


def stamp_of(message: Headed) -> Stamp:
    """Return (sec, nanosec) of a message's header stamp: frames and results are matched by it."""
    return message.header.stamp.sec, message.header.stamp.nanosec


class ResultTracker:
    """Send and arrival times per frame stamp; a frame is complete once every output arrived."""

    def __init__(self, outputs: dict[str, tuple[str, ...]]) -> None:
        """Track results; `outputs` maps each node's executable to its result topics."""
        self._outputs = outputs  # node -> its result topics
        self._condition = threading.Condition()
        self.sent: dict[Stamp, float] = {}
        self._arrived: dict[Stamp, dict[str, float]] = defaultdict(dict)
        self._transport_ms: dict[Stamp, dict[str, float]] = defaultdict(dict)

    def send(self, stamp: Stamp) -> None:
        """Record that the frame with `stamp` was sent now (time.monotonic())."""
        with self._condition:
            self.sent[stamp] = time.monotonic()

    def arrive(self, topic: str, stamp: Stamp, transport_ms: float | None = None) -> None:
        """Record a result's arrival; `transport_ms`: its DDS source -> reception time."""
        now = time.monotonic()
        with self._condition:
            if stamp in self.sent:
                self._arrived[stamp][topic] = now
                if transport_ms is not None:
                    self._transport_ms[stamp][topic] = transport_ms
                self._condition.notify_all()

    def transport_ms(self, stamp: Stamp) -> float | None:
        """Return the DDS transport ms of the frame's last result to arrive, None if unknown."""
        with self._condition:
            arrived = self._arrived.get(stamp, {})
            if not arrived:
                return None
            return self._transport_ms.get(stamp, {}).get(max(arrived, key=arrived.__getitem__))

    def _done_at(self, stamp: Stamp, nodes: Sequence[str]) -> float | None:
        arrived = self._arrived.get(stamp, {})
        topics = [topic for node in nodes for topic in self._outputs[node]]
        return max(arrived[topic] for topic in topics) if all(
            topic in arrived for topic in topics) else None

    def done_at(self, stamp: Stamp) -> float | None:
        """Return when the frame's last result arrived (time.monotonic()), None while incomplete."""
        with self._condition:
            return self._done_at(stamp, tuple(self._outputs))

    def latency_ms(self, stamp: Stamp, nodes: Sequence[str] | None = None) -> float | None:
        """Send -> last output of `nodes` (default all), or None while incomplete."""
        with self._condition:
            done = self._done_at(stamp, nodes or tuple(self._outputs))
            return (done - self.sent[stamp]) * 1e3 if done is not None else None

    def wait(self, stamp: Stamp, timeout_s: float) -> float | None:
        """Wait up to `timeout_s` for the frame's every result; return its latency (ms) or None."""
        deadline = time.monotonic() + timeout_s
        with self._condition:
            while (latency := self.latency_ms(stamp)) is None:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return None
                self._condition.wait(remaining)
            return latency


class RosSide:
    """The benchmark's participant in a context of its own, spinning in a background thread."""

    def __init__(self) -> None:
        """
        Create a context, node and executor of the bench's own, and spin them in a thread.

        The context installs no signal handlers, so Ctrl-C reaches the bench rather than rclpy.
        """
        self.context = Context()
        rclpy.init(context=self.context, signal_handler_options=SignalHandlerOptions.NO)
        self.node = rclpy.create_node('triton_perception_bench', context=self.context)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self._thread = threading.Thread(target=self._spin, name='bench-executor', daemon=True)
        self._thread.start()

    def _spin(self) -> None:
        try:
            self.executor.spin()
        except Exception:  # noqa: BLE001 (the context was shut down under the executor)
            pass

    def close(self) -> None:
        """Stop the executor, destroy the node and shut the context down."""
        self.executor.shutdown(timeout_sec=1.0)
        self.node.destroy_node()
        rclpy.try_shutdown(context=self.context)
        self._thread.join(timeout=2.0)


class CaseWiring:
    """One case's frame publisher, result subscriptions and readiness, in its own namespace."""

    def __init__(self, ros: RosSide, namespace: str, kinds: Sequence[NodeKind], *,
                 image_readers: int | None = None, reporting: bool = True) -> None:
        """
        Create the case's frame publisher and result and /diagnostics subscriptions.

        Topics are under `namespace`, the case's own, so that cases do not hear each other.
        `image_readers`: subscriptions to the frames when ready (default one per kind; the nodes
        of a perception_process share one). `reporting` False: the nodes publish no /diagnostics
        (the glue bench's floor node), so readiness is the matched topics alone.
        """
        self._node = ros.node
        self.kinds = kinds
        self._image_readers = len(kinds) if image_readers is None else image_readers
        self.tracker = ResultTracker({kind.executable: tuple(topic for topic, _ in kind.topics)
                                      for kind in kinds})
        self.publisher = ros.node.create_publisher(Image, f'{namespace}/image', FRAME_QOS)
        self.subscriptions = [
            ros.node.create_subscription(message_type, f'{namespace}/{topic}',
                                         self._on_result(topic), RESULTS_READER_QOS)
            for kind in kinds for topic, message_type in kind.topics]
        self._status_names = {status_name(f'{namespace}/{kind.executable}'): kind.executable
                              for kind in kinds if reporting}
        self._ready: set[str] = set()
        self.statuses: dict[str, NodeStatus] = {}
        self._camera_status_name = camera_status_name(f'{namespace}/image')
        self.camera_status: NodeStatus | None = None  # the camera's health status, the newest
        if reporting:
            self.subscriptions.append(ros.node.create_subscription(
                DiagnosticArray, '/diagnostics', self._on_diagnostics, DIAGNOSTICS_QOS))
        self._last_stamp_ns = 0

    def _on_result(self, topic: str) -> ResultCallback:
        """Return a result callback; with MessageInfo it also records the DDS transport time."""
        if not MESSAGE_INFO_AVAILABLE:
            return lambda message: self.tracker.arrive(topic, stamp_of(message))

        def on_result(message: Headed, info: MessageInfo) -> None:
            self.tracker.arrive(topic, stamp_of(message), dds_transport_ms(info))
        return on_result

    def wait_status(self, node: str, published: int, timeout_s: float) -> NodeStatus | None:
        """Return the node's first status counting at least `published` frames, None on timeout."""
        deadline = time.monotonic() + timeout_s
        while True:
            status = self.statuses.get(node)
            if status is not None and status.count('published') >= published:
                return status
            if time.monotonic() > deadline:
                return None
            time.sleep(0.002)

    def _on_diagnostics(self, message: DiagnosticArray) -> None:
        for status in message.status:
            if status.name == self._camera_status_name:
                self.camera_status = NodeStatus.from_status(status)
            if status.name in self._status_names:
                node_status = NodeStatus.from_status(status)
                self.statuses[self._status_names[status.name]] = node_status
                if node_status.triton_ready:
                    self._ready.add(status.name)

    def ready(self) -> bool:
        """
        Say whether the pipeline is ready for frames.

        Every node matched our publisher, each result topic has a publisher (Humble counts no
        matched publishers on a subscription), and every node says Triton is ready.
        """
        return (self.publisher.get_subscription_count() >= self._image_readers
                and all(self._node.count_publishers(subscription.topic_name) >= 1
                        for subscription in self.subscriptions)
                and self._ready == set(self._status_names))

    def publisher_count(self, topic: str) -> int:
        """Return the publishers of `topic` in the graph."""
        return self._node.count_publishers(topic)

    def publish(self, message: Image) -> Stamp:
        """Stamp the frame uniquely (wall clock, like a camera) and send it."""
        stamp_ns = max(time.time_ns(), self._last_stamp_ns + 1)
        self._last_stamp_ns = stamp_ns
        message.header.stamp.sec, message.header.stamp.nanosec = divmod(stamp_ns, 1_000_000_000)
        stamp = stamp_of(message)
        self.tracker.send(stamp)
        self.publisher.publish(message)
        return stamp

    def close(self) -> None:
        """Destroy the case's subscriptions and its frame publisher."""
        for subscription in self.subscriptions:
            self._node.destroy_subscription(subscription)
        self._node.destroy_publisher(self.publisher)


def dds_transport_ms(info: MessageInfo) -> float | None:
    """Return reception - source timestamp (ns, both the host's clock) of a MessageInfo, in ms."""
    try:
        source, received = int(info['source_timestamp']), int(info['received_timestamp'])
    except (KeyError, TypeError, ValueError):
        return None
    return (received - source) / 1e6 if source > 0 and received > 0 else None


def ros_environment(ros_home: Path, domain: PrivateDomain) -> dict[str, str]:
    """
    Like the tests: ROS traffic on this host only, logs in a temp dir, in `domain`.

    `domain` is reserved for the bench (system.private_domain): its nodes hear no other
    publisher of the caller's domain, and measure only the bench's frames.
    """
    environment = {
        'ROS_DOMAIN_ID': str(domain.domain_id),
        'ROS_AUTOMATIC_DISCOVERY_RANGE': 'LOCALHOST',
        'ROS_HOME': str(ros_home), 'ROS_LOG_DIR': str(ros_home / 'log'),
    }
    environment.update(dds_profile_environment())
    return environment


def rgb_message(rgb: NDArray[np.uint8]) -> Image:
    """Return an rgb8 Image of `rgb` ([H, W, 3] uint8), its frame_id 'camera', its stamp unset."""
    message = Image(height=rgb.shape[0], width=rgb.shape[1], encoding='rgb8',
                    is_bigendian=0, step=rgb.shape[1] * 3, data=array.array('B', rgb.tobytes()))
    message.header.frame_id = 'camera'
    return message


def read_clip(video: Path, limit: int | None = None) -> list[Image]:
    """
    Every frame of the clip (the first `limit`) as an rgb8 Image.

    Built once, so that publishing costs no conversion.
    """
    capture = cv2.VideoCapture(str(video))
    messages: list[Image] = []
    while limit is None or len(messages) < limit:
        ok, bgr = capture.read()
        if not ok:
            break
        messages.append(rgb_message(np.asarray(cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB), np.uint8)))
    capture.release()
    if not messages:
        raise BenchError(f'no frames could be decoded from {video}; pass --video with a road clip')
    return messages


def rgb_view(message: Image) -> NDArray[np.uint8]:
    """Return an rgb8 Image's pixels as an [H, W, 3] uint8 array, without copying."""
    return np.frombuffer(message.data, dtype=np.uint8).reshape(message.height, message.width, 3)
