"""
Every QoS profile of the package in one place.

What the nodes publish and subscribe with, and what the bag tools, the benchmark and the tests use
to talk to them.
"""
from __future__ import annotations

from rclpy.qos import (DurabilityPolicy, HistoryPolicy, qos_profile_sensor_data, QoSProfile,
                       ReliabilityPolicy)

RELIABILITIES: dict[str, ReliabilityPolicy] = {
    'reliable': ReliabilityPolicy.RELIABLE,
    'best_effort': ReliabilityPolicy.BEST_EFFORT,
}


def stream_qos(reliability: str, depth: int) -> QoSProfile:
    """
    Keep-last, volatile.

    Camera images (what camera drivers and `ros2 bag play` use by default) and any other stream.
    ValueError names what is accepted.
    """
    if reliability not in RELIABILITIES:
        raise ValueError(f"reliability {reliability!r} is not one of {', '.join(RELIABILITIES)}")
    if depth < 1:
        raise ValueError(f'QoS depth must be at least 1, got {depth}')
    return QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=depth,
                      reliability=RELIABILITIES[reliability],
                      durability=DurabilityPolicy.VOLATILE)


# Results (detections, lanes, drivable area): reliable, a short queue for slow subscribers.
RESULT_QOS = stream_qos('reliable', 10)
# LabelInfo: published once, kept for subscribers that come later.
LATCHED_QOS = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=1,
                         reliability=ReliabilityPolicy.RELIABLE,
                         durability=DurabilityPolicy.TRANSIENT_LOCAL)
# Overlays are for people watching: like camera images, never worth a retransmission.
OVERLAY_QOS = qos_profile_sensor_data
# /diagnostics, as diagnostic_updater publishes it.
DIAGNOSTICS_QOS = stream_qos('reliable', 10)
# Drivers publish CameraInfo best effort or reliable; a best-effort reader matches both.
CAMERA_INFO_QOS = stream_qos('best_effort', 5)
# /tf_static as tf2 publishes it: latched, every static transform kept.
TF_STATIC_QOS = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=100,
                           reliability=ReliabilityPolicy.RELIABLE,
                           durability=DurabilityPolicy.TRANSIENT_LOCAL)
# /tf as tf2's listener reads it (used only where tf2_ros is not installed).
TF_QOS = stream_qos('reliable', 100)
