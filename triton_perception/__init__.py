"""ROS 2 perception nodes that run detection through Triton Inference Server on Jetson."""
