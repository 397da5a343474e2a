"""The rclpy side shared by play and record: message classes by name, and QoS from a word."""
from __future__ import annotations

import importlib

from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy

from triton_perception.bag.common import BagError

RELIABILITIES: dict[str, ReliabilityPolicy] = {
    'reliable': ReliabilityPolicy.RELIABLE,
    'best_effort': ReliabilityPolicy.BEST_EFFORT,
}


def message_class(type_name: str) -> type:
    """'sensor_msgs/msg/Image' -> sensor_msgs.msg.Image (rosidl_runtime_py is not on PyPI)."""
    try:
        package, kind, name = type_name.split('/')
    except ValueError:
        raise BagError(f"type name {type_name!r} is not of the form 'package/msg/Type'") from None
    try:
        return getattr(importlib.import_module(f'{package}.{kind}'), name)
    except (ImportError, AttributeError):
        raise BagError(f'message type {type_name} is not installed for rclpy') from None


def qos_profile(reliability: str, depth: int) -> QoSProfile:
    """Keep-last, volatile QoS: what camera publishers and `ros2 bag` use by default."""
    if reliability not in RELIABILITIES:
        raise BagError(f"reliability {reliability!r} is not one of {', '.join(RELIABILITIES)}")
    if depth < 1:
        raise BagError(f'QoS depth must be at least 1, got {depth}')
    return QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=depth,
                      reliability=RELIABILITIES[reliability], durability=DurabilityPolicy.VOLATILE)
