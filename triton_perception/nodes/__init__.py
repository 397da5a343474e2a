"""
The ROS 2 nodes: parameters, subscriptions and publishers around plain Python.

Owns: detection_node, lane_node, overlay_node, their shared lifecycle base (base) and its
collaborators: live parameter changes (parameter_changes), a frame's way in from the
subscription to the worker (frame_intake; the camera subscription itself: camera_subscription;
video topics: video_input; one camera shared by a process's nodes: camera_frames),
overlay gating (overlay_gate) and the /diagnostics status (node_diagnostics); how a node process
runs and stops on SIGINT and SIGTERM (node_process, also used by the bag tools and
`triton-perception run`), ROS parameter declaration (ros_parameters) and DDS loss events
(frame_losses). May import every domain folder below it; nothing imports nodes/ but bag/,
bench/, the CLI and the executables.
"""
from triton_perception.faces import lazy_face

__getattr__, __dir__, __all__ = lazy_face(__name__, __file__)
