"""Test-side ROS plumbing: a probe node in its own context, spinning in a thread."""
from __future__ import annotations

from pathlib import Path
import threading
import time
from typing import Any, Callable

import rclpy
from rclpy.context import Context
from rclpy.executors import SingleThreadedExecutor
from rclpy.qos import QoSProfile

from triton_perception.qos import LATCHED_QOS, stream_qos

REPO = Path(__file__).resolve().parents[2]
RELIABLE = stream_qos('reliable', 100)
LATCHED = LATCHED_QOS
BEST_EFFORT = stream_qos('best_effort', 10)


def wait_until(condition: Callable[[], Any], timeout_s: float, what: str) -> Any:
    """Poll a condition (never a fixed sleep); fail with `what` when it does not come true."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        result = condition()
        if result:
            return result
        time.sleep(0.02)
    raise AssertionError(f'timed out after {timeout_s:g} s waiting for {what}')


class Probe:
    """A test node spinning in a background thread, with recorders for topics."""

    def __init__(self, name: str = 'probe') -> None:
        """Create the node `name` in a context of its own, spinning in a daemon thread."""
        self.context = Context()
        rclpy.init(context=self.context)
        self.node = rclpy.create_node(name, context=self.context)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self._thread = threading.Thread(target=self._spin, daemon=True)
        self._thread.start()
        self.received: dict[str, list[Any]] = {}
        self._publishers: dict[tuple[type, str], Any] = {}
        self._lock = threading.Lock()

    def _spin(self) -> None:
        try:
            self.executor.spin()
        except Exception:  # noqa: BLE001 (the context was shut down under the executor)
            pass

    def publisher(self, message_type: type, topic: str, qos: QoSProfile = RELIABLE) -> Any:
        """One publisher per topic for the probe's life: a new one must be discovered anew."""
        key = (message_type, topic)
        if key not in self._publishers:
            self._publishers[key] = self.node.create_publisher(message_type, topic, qos)
        return self._publishers[key]

    def record(self, message_type: type, topic: str, qos: QoSProfile = RELIABLE) -> list[Any]:
        """Return the list every message on `topic` is appended to from now on."""
        messages: list[Any] = []
        self.received[topic] = messages

        def store(message: Any) -> None:
            with self._lock:
                messages.append(message)
        self.node.create_subscription(message_type, topic, store, qos)
        return messages

    def wait_for_subscribers(self, publisher: Any, count: int = 1, timeout_s: float = 20.0) -> None:
        """Wait until `publisher` has `count` subscribers: a message sent before is lost to them."""
        wait_until(lambda: publisher.get_subscription_count() >= count, timeout_s,
                   f'{count} subscriber(s) on {publisher.topic_name}')

    def wait_for_publishers(self, topic: str, count: int = 1, timeout_s: float = 20.0) -> None:
        """Wait until the probe sees `count` publishers on `topic`."""
        wait_until(lambda: self.node.count_publishers(topic) >= count, timeout_s,
                   f'{count} publisher(s) on {topic}')

    def change_state(self, node: str, transition: str, timeout_s: float = 20.0) -> bool:
        """
        Do what `ros2 lifecycle set NODE TRANSITION` does.

        Call NODE/change_state by label; returns whether the transition succeeded.
        """
        from lifecycle_msgs.msg import Transition
        from lifecycle_msgs.srv import ChangeState

        client = self.node.create_client(ChangeState, f'{node}/change_state')
        try:
            assert client.wait_for_service(timeout_sec=timeout_s), f'{node}/change_state'
            future = client.call_async(ChangeState.Request(transition=Transition(label=transition)))
            response = wait_until(lambda: future.done() and future.result(), timeout_s,
                                  f'{node} to answer {transition}')
            return bool(response.success)
        finally:
            self.node.destroy_client(client)

    def close(self) -> None:
        """Stop spinning, destroy the node and shut its context down."""
        self.executor.shutdown(timeout_sec=1.0)
        self.node.destroy_node()
        rclpy.try_shutdown(context=self.context)
        self._thread.join(timeout=2.0)
