"""
The photo the node tests send (bus.jpg), and the COCO names their detections are read with.

The fixture `bus_rgb` is the function `bus_rgb_fixture`: a module whose tests request `bus_rgb`
imports that, so that the tests' parameter does not shadow the import.
"""
from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from conftest import shared_path
from triton_perception.outputs.result_messages import load_labels

# ObjectHypothesis.class_id is the decimal class id; its name is in the node's LabelInfo.
COCO = load_labels()


@pytest.fixture(scope='module', name='bus_rgb')
def bus_rgb_fixture(shared: Path) -> np.ndarray:
    """Return the shared photo bus.jpg as RGB, once per module."""
    bgr = cv2.imread(str(shared_path('data', 'images', 'bus.jpg')))
    return cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB)
