"""
The ROS 2 nodes: parameters, subscriptions and publishers around plain Python.

Owns: detection_node, lane_node, overlay_node, their shared lifecycle base (base) and its
collaborators: live parameter changes (parameter_changes), the image subscription (image_input)
and its serialized frames (frame_reading), the frame callback and RGB conversion (frame_intake),
overlay gating (overlay_gate) and the /diagnostics status (node_diagnostics); how a node process
runs and stops on SIGINT and SIGTERM (node_process, also used by the bag tools and
`triton-perception run`), ROS parameter declaration (ros_parameters) and DDS loss events
(frame_losses). May import every domain folder below it; nothing imports nodes/ but bag/,
bench/, the CLI and the executables.
Imports: `frames/`, `ground/`, `health/`, `lanes/`, `models/`, `outputs/`, `parameters/`, `qos.py`,
`serving/`, `system/`, `tracking/`.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from triton_perception.system.faces import lazy_face

if TYPE_CHECKING:
    from triton_perception.nodes.frame_losses import MESSAGE_INFO_AVAILABLE
    from triton_perception.nodes.frame_reading import read_frame
    from triton_perception.nodes.node_process import StopRequest

__all__ = ['MESSAGE_INFO_AVAILABLE', 'read_frame', 'StopRequest']
__getattr__ = lazy_face(__name__, {
    'frame_losses': ('MESSAGE_INFO_AVAILABLE',),
    'frame_reading': ('read_frame',),
    'node_process': ('StopRequest',),
})
