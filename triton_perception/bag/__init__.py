"""
rosbag2 tools without a ROS install: make camera bags from media, play them, record topics.

``make`` and ``reading`` use only rosbags, OpenCV and numpy, so bags can be built and
inspected anywhere; ``play`` and ``record`` need rclpy. Nothing is imported here, so
importing one module never pulls in ROS or OpenCV for another.
"""
from triton_perception.faces import lazy_face

__getattr__, __dir__, __all__ = lazy_face(__name__, __file__)
