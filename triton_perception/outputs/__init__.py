"""
Results as the package publishes them: ROS messages and drawings on frames.

Owns: detections, labels, lanes and masks <-> vision_msgs/sensor_msgs (result_messages) and
the overlay drawing (overlay_drawing).  No rclpy: message classes only.
"""
from triton_perception.faces import lazy_face

__getattr__, __dir__, __all__ = lazy_face(__name__, __file__)
