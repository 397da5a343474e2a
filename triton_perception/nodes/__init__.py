"""
The ROS 2 nodes: parameters, subscriptions and publishers around plain Python.

Owns: detection_node, lane_node, overlay_node, their shared base, ROS parameter declaration
(ros_parameters) and DDS loss events (frame_losses). May import every domain folder below it;
nothing imports nodes/ but bench/ and the executables.
"""
