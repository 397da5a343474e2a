"""
Accuracy against labels: label files read into arrays, and detection, tracking and lane scores.

Owns: COCO, MOTChallenge, CULane and TuSimple label readers (labels, with lane_labels, the label
sets and the fields they parse) and their scores (detection, tracking, lanes, benchmark). May
import system/, parameters/, qos.py and third-party libraries only; no rclpy, no ROS messages.
Public names: labels.read_labels, labels.resolve_frames, labels.LabelError,
detection.score_detections, tracking.score_tracks, lanes.score_culane, lanes.score_tusimple,
benchmark.scoring_benchmark.
"""
