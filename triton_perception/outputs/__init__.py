"""
Results as the package publishes them: ROS messages and drawings on frames.

Owns: detections, labels, lanes and masks <-> vision_msgs/sensor_msgs (result_messages), the
overlay drawing (overlay_drawing) and the same results as foxglove_msgs/ImageAnnotations
(image_annotations).  No rclpy: message classes only.
"""
from triton_perception.faces import lazy_face

__getattr__, __dir__, __all__ = lazy_face(__name__, __file__)
