"""
Benches that need no ROS and no Triton: the camera health check and video decoding.

Owns: `bench --camera-health` (camera_health: the check on its labelled set, and its CPU per
frame) and `bench --video-decoding` (video_decoding: what decoding a video camera costs the
node, by codec and frame size). Each prints Markdown tables on stdout.
"""
from triton_perception.faces import lazy_face

__getattr__, __dir__, __all__ = lazy_face(__name__, __file__)
