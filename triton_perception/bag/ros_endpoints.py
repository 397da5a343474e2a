"""The rclpy side shared by play and record: message classes by name, and QoS from a word."""
from __future__ import annotations

import importlib

from rclpy.qos import QoSProfile

from triton_perception.bag.bag_format import BagError
from triton_perception.qos import stream_qos


def message_class(type_name: str) -> type:
    """'sensor_msgs/msg/Image' -> sensor_msgs.msg.Image (rosidl_runtime_py is not on PyPI)."""
    try:
        package, kind, name = type_name.split('/')
    except ValueError:
        raise BagError(f"type name {type_name!r} is not of the form 'package/msg/Type'") from None
    try:
        message_type: type = getattr(importlib.import_module(f'{package}.{kind}'), name)
        return message_type
    except (ImportError, AttributeError):
        raise BagError(f'message type {type_name} is not installed for rclpy') from None


def qos_profile(reliability: str, depth: int) -> QoSProfile:
    """Keep-last, volatile QoS (triton_perception.qos.stream_qos) from the command's words."""
    try:
        return stream_qos(reliability, depth)
    except ValueError as error:
        raise BagError(str(error)) from None
