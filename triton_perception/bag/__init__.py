"""
rosbag2 input and output without a ROS install: make camera bags, play, record, read, export.

``make`` and ``reading`` use only rosbags, OpenCV and numpy, so bags can be built and
inspected anywhere; ``play`` and ``record`` need rclpy. Judging what a replay published is
evaluation/'s; the ``bag`` commands are in commands/.
"""
from triton_perception.faces import lazy_face

__getattr__, __dir__, __all__ = lazy_face(__name__, __file__)
