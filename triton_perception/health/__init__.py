"""
Camera health: whether a camera's frames are worth looking at, judged cheaply per frame.

Owns: a frame's health figures on a small grey copy (image_figures: texture per region,
sharpness, dark and saturated pixels, a digest for frozen frames), levels held against flicker
(hold) and one camera's running check against thresholds and its own baselines of sharpness
and rate (camera_health). Pure NumPy and OpenCV: may import parameters/ only; no rclpy (the
nodes publish the report on /diagnostics).
"""
from triton_perception.health.camera_health import CameraHealth, CONDITIONS, HealthReport
from triton_perception.health.hold import ERROR, HeldLevel, LEVEL_NAMES, OK, WARN
from triton_perception.health.image_figures import frame_figures, FrameFigures, small_grey

__all__ = ['CONDITIONS', 'ERROR', 'LEVEL_NAMES', 'OK', 'WARN', 'CameraHealth', 'FrameFigures',
           'HealthReport', 'HeldLevel', 'frame_figures', 'small_grey']
