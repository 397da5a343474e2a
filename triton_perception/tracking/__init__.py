"""
Multi-object tracking: ByteTrack association in the image, motion on the ground.

Pure numpy/scipy, no ROS imports: the nodes hand in arrays and stamps in seconds, so every
behaviour is tested on synthetic scenes with known truth (test/test_tracking.py).
"""
