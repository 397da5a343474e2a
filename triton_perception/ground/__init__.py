"""
Lanes, drivable area and detections on the ground plane of target_frame.

Owns: the calibrated camera (camera), pixels -> ground (ground_projection), their messages
(ground_messages), the camera's CameraInfo and TF (camera_lookup, static_tf) and the nodes'
ground publishers (ground_publishers).
"""
from triton_perception.faces import lazy_face

__getattr__, __dir__, __all__ = lazy_face(__name__, __file__)
