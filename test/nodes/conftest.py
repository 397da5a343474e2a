"""Fixtures of the node tests: the photo they send."""
from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from support.checkout import shared_path


@pytest.fixture(scope='module')
def bus_rgb(shared: Path) -> np.ndarray:
    """Return the shared photo bus.jpg as RGB, once per module."""
    bgr = cv2.imread(str(shared_path('data', 'images', 'bus.jpg')))
    return cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB)
