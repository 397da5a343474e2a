"""
What happens to a camera frame before it reaches Triton, and what became of each frame.

Owns: Image/CompressedImage -> RGB conversion (image_conversion), reading them serialized
(serialized_images), checks of frames and results (validation), the reference letterbox
(frame_preprocessing), the served frame-size range (frame_range), per-frame fate and its
/diagnostics form (accounting, diagnostics) and DDS losses (transport_losses). May import
system/ only; no rclpy.
"""
