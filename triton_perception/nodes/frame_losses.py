"""
Counting the frames a node's image subscription never saw, on every supported rclpy.

- rclpy from Iron on passes `MessageInfo` to a callback that takes two arguments; its
  `publication_sequence_number` and `publisher_gid` give gaps per publisher
  (`SequenceGapCounter`).
- Humble's rclpy has no MessageInfo: there the subscription's `message_lost` QoS event counts
  what the RMW reports lost (Fast DDS: best-effort samples it gave up on).
- Where neither exists, the node says once that losses cannot be counted.

rclpy's EventsExecutor (Kilted's rclpy 9.1) raises `SystemError: null argument to internal
routine` for every subscription whose callback takes MessageInfo, so where the hot path is asked
to run it (nodes.executors), losses are counted by message_lost events, as on Humble.
"""
from __future__ import annotations

from dataclasses import dataclass
import inspect
import math
import time
from typing import Callable, Generic, TypeVar, Union

from rclpy.node import Node

from triton_perception.frames import LossSink, publisher_sequence, SequenceGapCounter
from triton_perception.nodes.executors import EVENTS, hot_path_choice, MESSAGE_INFO_AVAILABLE

try:  # Jazzy and newer
    from rclpy.event_handler import SubscriptionEventCallbacks
except ImportError:  # Humble
    from rclpy.qos_event import SubscriptionEventCallbacks

try:
    from rclpy.subscription import MessageInfo  # Iron and newer (MESSAGE_INFO_AVAILABLE)
except ImportError:  # Humble: no callback is given one
    pass

LOSS_WARNING_THROTTLE_S = 30.0
MessageT = TypeVar('MessageT')


@dataclass(frozen=True)
class CountedCallbacks(Generic[MessageT]):
    """What `create_subscription` takes for a topic whose losses are counted."""

    callback: Union[Callable[[MessageT], None], Callable[[MessageT, MessageInfo], None]]
    event_callbacks: SubscriptionEventCallbacks | None = None


def message_lost_supported() -> bool:
    """Return whether this rclpy's subscription event callbacks take a message_lost handler."""
    return 'message_lost' in inspect.signature(SubscriptionEventCallbacks.__init__).parameters


def message_info_usable() -> bool:
    """Return whether the hot path's subscriptions can take MessageInfo (see above)."""
    return MESSAGE_INFO_AVAILABLE and hot_path_choice()[0] != EVENTS


class FrameLossCounter:
    """
    Counts the frames lost on the way to a node's frame callback as `lost before the node`.

    It wraps the callback, with a throttled warning that names the usual cause.
    """

    def __init__(self, node: Node, accounting: LossSink, topic: str) -> None:
        """
        Count losses on `topic` into `accounting`, by the best method this rclpy offers.

        `method` says which: publishers' sequence numbers (MessageInfo, Iron and newer), else the
        middleware's message_lost events, else none.
        """
        self._node = node
        self._accounting = accounting
        self._topic = topic
        self._gaps = SequenceGapCounter()
        self._unsupported_said = False
        self._warned_at = -math.inf
        self._message_info = message_info_usable()
        self.method = ('sequence numbers' if self._message_info
                       else 'message_lost events' if message_lost_supported() else 'none')

    def callbacks(self, on_frame: Callable[[MessageT], None]) -> CountedCallbacks[MessageT]:
        """Return the callback (and event callbacks) for `create_subscription`."""
        self._gaps.forget()
        if self._message_info:
            def on_frame_with_info(message: MessageT, message_info: MessageInfo) -> None:
                self._observe(message_info)
                on_frame(message)
            return CountedCallbacks(on_frame_with_info)
        if self.method == 'message_lost events':
            return CountedCallbacks(on_frame,
                                    SubscriptionEventCallbacks(message_lost=self._on_lost))
        self._say_unsupported('this rclpy gives neither message info nor message_lost events')
        return CountedCallbacks(on_frame)

    def _observe(self, message_info: MessageInfo) -> None:
        publisher = publisher_sequence(message_info)
        if publisher is None:
            self._say_unsupported('the RMW gives no publication sequence numbers')
            return
        self._count(self._gaps.observe(*publisher), 'sequence gap')

    def _on_lost(self, info: object) -> None:
        self._count(int(getattr(info, 'total_count_change', 0)), 'message lost event')

    def _count(self, lost: int, reason: str) -> None:
        if lost <= 0:
            return
        total = self._accounting.lost_before_node(lost, reason)
        # Throttled here, not only by rclpy: its throttle looks up the caller's source line on
        # every call (0.3 ms here), on the executor thread, for every gap while frames are lost.
        now = time.monotonic()
        if now - self._warned_at < LOSS_WARNING_THROTTLE_S:
            return
        self._warned_at = now
        self._node.get_logger().warning(
            f'{total} frames from {self._topic} lost before this node ({reason}s): give the '
            'camera driver the same Fast DDS profile and a reader depth that fits its rate '
            '(docs/topics.md, "QoS and the Fast DDS profile")')

    def _say_unsupported(self, why: str) -> None:
        if not self._unsupported_said:
            self._unsupported_said = True
            self.method = f'none ({why})'
            self._node.get_logger().warning(
                f'frames lost before this node cannot be counted: {why}')
