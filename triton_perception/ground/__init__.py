"""Lanes, drivable area and detections on the ground plane of target_frame."""
