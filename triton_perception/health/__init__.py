"""
Camera health: whether a camera's frames are worth looking at, judged cheaply per frame.

Owns: a frame's health figures on a small grey copy (image_figures: texture per region,
sharpness, dark and saturated pixels, a digest for frozen frames), levels held against flicker
(hold) and one camera's running check against thresholds and its own baselines of sharpness
and rate (camera_health). Pure NumPy and OpenCV: no rclpy (the
nodes publish the report on /diagnostics).
Imports: `parameters/`.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from triton_perception.system.faces import lazy_face

if TYPE_CHECKING:
    from triton_perception.health.camera_health import CameraHealth, CONDITIONS, HealthReport
    from triton_perception.health.degradation import (degradations, FRAME_RATE_HZ, noisy, run_trial,
                                                      Trial, video_frames)
    from triton_perception.health.hold import ERROR, HeldLevel, LEVEL_NAMES, OK, WARN
    from triton_perception.health.image_figures import frame_figures, FrameFigures, small_grey

__all__ = ['CameraHealth', 'CONDITIONS', 'degradations', 'ERROR', 'frame_figures', 'FRAME_RATE_HZ',
           'FrameFigures', 'HealthReport', 'HeldLevel', 'LEVEL_NAMES', 'noisy', 'OK', 'run_trial',
           'small_grey', 'Trial', 'video_frames', 'WARN']
__getattr__ = lazy_face(__name__, {
    'camera_health': ('CameraHealth', 'CONDITIONS', 'HealthReport'),
    'degradation': ('degradations', 'FRAME_RATE_HZ', 'noisy', 'run_trial', 'Trial', 'video_frames'),
    'hold': ('ERROR', 'HeldLevel', 'LEVEL_NAMES', 'OK', 'WARN'),
    'image_figures': ('frame_figures', 'FrameFigures', 'small_grey'),
})
