"""
What happens to a camera frame before it reaches Triton, and what became of each frame.

Owns: Image/CompressedImage -> RGB conversion (image_conversion), reading them serialized
(serialized_images), H.264/H.265 packets -> RGB (video_decoding; what a packet holds:
video_bitstream, the size its SPS declares: video_sps; the GStreamer route: video_gstreamer,
child_pipes, video_y4m; a camera's decoding thread: video_queue) and RGB -> packets
(video_encoding), a received frame (frame), the reference
letterbox (frame_preprocessing), the served frame-size range (frame_range), per-frame fate and its
/diagnostics form (accounting, diagnostics) and DDS losses (transport_losses). No rclpy.
"""
from triton_perception.faces import lazy_face

__getattr__, __dir__, __all__ = lazy_face(__name__, __file__)
