"""
Accuracy against labels: label files read into arrays, and detection, tracking and lane scores.

Owns: COCO, MOTChallenge, CULane, TuSimple and CVAT label readers (labels, with lane_labels,
mot_labels, cvat_labels, the label sets and the fields they parse), the export's frames.json they
map a labelling task's frames through (exported_frames, which bag/ writes), and their scores
(detection, tracking, lanes, scoring_time). No rclpy, no ROS messages.
"""
from triton_perception.faces import lazy_face

__getattr__, __dir__, __all__ = lazy_face(__name__, __file__)
