"""
Lanes, drivable area and detections on the ground plane of target_frame.

Owns: the calibrated camera (camera), pixels -> ground (ground_projection), their messages
(ground_messages), the camera's CameraInfo and TF (camera_lookup, static_tf) and the nodes'
ground publishers (ground_publishers). May import outputs/, system/ and qos.
"""
