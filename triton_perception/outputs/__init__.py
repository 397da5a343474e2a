"""
Results as the package publishes them: ROS messages and drawings on frames.

Owns: detections, labels, lanes and masks <-> vision_msgs/sensor_msgs (result_messages) and
the overlay drawing (overlay_drawing). May import system/. No rclpy: message classes only.
"""
