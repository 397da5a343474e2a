"""
Results as the package publishes them: ROS messages and drawings on frames.

Owns: one builder per output message, chosen by `bench --glue --publish-cost`: the detections
and the images written as CDR bytes (cdr), labels and lanes built as messages, and the readers
of detections, lanes and masks (result_messages); the overlay drawing (overlay_drawing) and the
same results as foxglove_msgs/ImageAnnotations (image_annotations).  No rclpy: message classes
only.
"""
from triton_perception.faces import lazy_face

__getattr__, __dir__, __all__ = lazy_face(__name__, __file__)
