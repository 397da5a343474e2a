"""
Images the tests build their inputs from, and how the conversion tests read a rejection.

They are made here (smooth, random) or read from the shared data (bus.jpg, any image by name).
"""
from __future__ import annotations

from typing import Any

import cv2
import numpy as np
import pytest

from support.checkout import shared_path
from triton_perception.frames.image_conversion import ImageRejected

# A pixel budget no test image reaches.
BUDGET = 10_000_000
NO_SENSOR_MSGS = 'ROS 2 sensor_msgs is not installed'


def smooth_rgb() -> np.ndarray:
    """Colour gradients: demosaicing and chroma subsampling are near-lossless on them."""
    y, x = np.mgrid[0:48, 0:64]
    return np.stack([x * 4, y * 5, 255 - (x + y) * 2], axis=-1).astype(np.uint8)


def random_rgb(height: int = 48, width: int = 64) -> np.ndarray:
    """Return seeded random pixels: the same in every run, and the hardest to compress."""
    return np.random.default_rng(7).integers(0, 256, (height, width, 3), dtype=np.uint8)


def bus_rgb() -> np.ndarray:
    """Return the shared photo bus.jpg as RGB: a real camera image."""
    bgr = cv2.imread(str(shared_path('data', 'images', 'bus.jpg')))
    return np.ascontiguousarray(bgr[..., ::-1])


def read_rgb(name: str) -> np.ndarray:
    """Return the shared image `name` as RGB."""
    path = shared_path('data', 'images', name)
    return cv2.cvtColor(cv2.imread(str(path)), cv2.COLOR_BGR2RGB)


def rejection_reason(call: Any, *args: Any) -> str:
    """Return the reason of the ImageRejected `call(*args)` raises; fail if none."""
    with pytest.raises(ImageRejected) as excinfo:
        call(*args)
    return excinfo.value.reason


def mean_abs_error(a: np.ndarray, b: np.ndarray) -> float:
    """Return the mean absolute difference of two uint8 images (no wrap-around)."""
    return float(np.abs(a.astype(np.int16) - b.astype(np.int16)).mean())
