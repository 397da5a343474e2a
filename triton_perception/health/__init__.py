"""
Camera health: whether a camera's frames are worth looking at, judged cheaply per frame.

Owns: a frame's health figures on a small grey copy (image_figures: texture per region,
sharpness, dark and saturated pixels, a digest for frozen frames), the same figures judged from
the health graph's statistics (frame_statistics: no pixel read), levels held against flicker
(hold) and one camera's running check against thresholds and its own baselines of sharpness
and rate (camera_checks). Pure NumPy and OpenCV: no rclpy (the
nodes publish the report on /diagnostics).
"""
from triton_perception.faces import lazy_face

__getattr__, __dir__, __all__ = lazy_face(__name__, __file__)
