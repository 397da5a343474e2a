"""
Multi-object tracking: ByteTrack association in the image, motion on the ground.

The tracker (tracker, association, kalman, ground_motion, camera_tracking) is pure numpy/scipy:
the nodes hand in arrays and stamps in seconds, so every behaviour is tested on synthetic scenes
with known truth (test/tracking/test_tracking.py). Only the tracks' messages (track_messages,
track_markers) and their publishers (track_publishers) touch ROS.
"""
from triton_perception.faces import lazy_face

__getattr__, __dir__, __all__ = lazy_face(__name__, __file__)
