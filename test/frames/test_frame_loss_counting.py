"""The rclpy side of counting frames lost before the node, on each rclpy generation's API."""
from __future__ import annotations

from typing import Any

import pytest
from sensor_msgs.msg import Image

from triton_perception.frames.accounting import FrameAccounting
from triton_perception.nodes.executors import EVENTS, SINGLE_THREADED
import triton_perception.nodes.frame_losses as frame_losses
from triton_perception.qos import stream_qos

pytestmark = [pytest.mark.ros]


def test_this_rclpy_counts_sequence_gaps(ros_node: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """
    This rclpy passes MessageInfo, so losses are counted from sequence gaps in the callback.

    So it is on a classic executor's hot path.
    """
    monkeypatch.setattr(frame_losses, 'hot_path_choice', lambda: (SINGLE_THREADED, 'asked'))
    counter = frame_losses.FrameLossCounter(ros_node, FrameAccounting(), '/gaps/image')
    assert frame_losses.MESSAGE_INFO_AVAILABLE
    assert counter.method == 'sequence numbers'
    assert counter.callbacks(lambda _message: None).event_callbacks is None


def test_on_the_events_executor_the_message_lost_event_counts(
        ros_node: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """The EventsExecutor fails every MessageInfo callback: message_lost events count there."""
    monkeypatch.setattr(frame_losses, 'hot_path_choice', lambda: (EVENTS, 'asked'))
    counter = frame_losses.FrameLossCounter(ros_node, FrameAccounting(), '/events/image')
    assert counter.method == 'message_lost events'
    assert counter.callbacks(lambda _message: None).event_callbacks is not None


def test_without_message_info_the_message_lost_event_counts(
        ros_node: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """
    Humble's rclpy passes no MessageInfo.

    The subscription's message_lost event counts instead, and what it reports is counted as lost
    before the node.
    """
    monkeypatch.setattr(frame_losses, 'MESSAGE_INFO_AVAILABLE', False)
    accounting = FrameAccounting()
    counter = frame_losses.FrameLossCounter(ros_node, accounting, '/humble/image')
    assert counter.method == 'message_lost events'
    counted = counter.callbacks(lambda _message: None)
    subscription = ros_node.create_subscription(Image, '/humble/image', counted.callback,
                                                qos_profile=stream_qos('best_effort', 1),
                                                event_callbacks=counted.event_callbacks)
    try:
        assert counted.event_callbacks is not None
        counted.event_callbacks.message_lost(type('Info', (), {'total_count_change': 4})())
        assert accounting.snapshot().lost_before_node == 4
        assert accounting.snapshot().reasons == {'lost before the node: message lost event': 4}
    finally:
        ros_node.destroy_subscription(subscription)
