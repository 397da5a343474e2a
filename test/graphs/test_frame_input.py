"""
The frame itself into a served graph (triton_perception.graphs.frame_input).

The letterbox graph against the Python letterbox (triton_perception.frames.frame_preprocessing)
on 24 frame sizes (odd, portrait, 1 x 1, 4K): the letterbox vector (resized size and pads)
exact, pixels within one level; the plain resize (with and without a top crop) and the cropped
letterbox of lane models likewise.
"""
from __future__ import annotations

from typing import Any

import numpy as np
import onnxruntime
import pytest

from support.frame_input_graphs import frame_input_graph, TOP_CROP
from triton_perception.frames import frame_preprocessing as preprocessing

SIZES = [(1, 1), (1, 2), (2, 1), (3, 5), (7, 640), (640, 7), (377, 1001), (1001, 377),
         (480, 640), (720, 1280), (1080, 1920), (2160, 3840), (640, 640), (641, 639),
         (333, 999), (1, 256), (256, 1), (4000, 3), (359, 641), (1200, 1600), (600, 800),
         (101, 203), (540, 960), (17, 13)]


@pytest.fixture(scope='module')
def served(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """Return an onnxruntime session of the frame-input graph, once per module."""
    path = frame_input_graph(tmp_path_factory.mktemp('frame_input') / 'frame_input.onnx')
    return onnxruntime.InferenceSession(str(path), providers=['CPUExecutionProvider'])


def smooth_frame(height: int, width: int) -> np.ndarray:
    """Return a frame with edges and gradients, so that interpolation differences show."""
    rng = np.random.default_rng(height * 10_007 + width)
    noise = rng.integers(0, 256, (height, width, 3), dtype=np.uint8)
    rows = np.linspace(0, 255, height, dtype=np.float32)[:, None, None]
    return ((noise.astype(np.float32) + rows) / 2).astype(np.uint8)


@pytest.mark.parametrize('height,width', SIZES)
def test_the_graph_letterbox_equals_the_python_letterbox(served: Any, height: int,
                                                         width: int) -> None:
    """
    The graph's letterbox and resizes equal the Python ones for a frame of this size.

    The letterbox vector is exact and pixels are within one level.
    """
    frame = smooth_frame(height, width)
    pixels, vector = preprocessing.letterbox(frame, 640, 640)
    canvas, letterbox, stretched, cropped, cropped_letterbox = served.run(None, {'IMAGE': frame})
    np.testing.assert_array_equal(letterbox, vector)  # resized size and pads exact
    assert canvas.shape == pixels.shape
    assert np.abs(canvas - pixels.astype(np.float32)).max() <= 1.0
    plain = preprocessing.resize_frame(frame, 640, 360)
    assert np.abs(stretched - plain.astype(np.float32)).max() <= 1.0
    lane = preprocessing.lane_frame(frame, 640, 360, TOP_CROP)
    assert np.abs(cropped - lane.astype(np.float32)).max() <= 1.0
    lane = preprocessing.lane_frame(frame, 640, 360, TOP_CROP, 'letterbox')
    assert np.abs(cropped_letterbox - lane.astype(np.float32)).max() <= 1.0


def test_full_hd_to_the_lane_input_is_exact(served: Any) -> None:
    """1920 x 1080 -> 640 x 360 is an exact 3:1 reduction: bit-identical to cv2."""
    frame = smooth_frame(1080, 1920)
    plain = preprocessing.resize_frame(frame, 640, 360)
    np.testing.assert_array_equal(served.run(['stretched'], {'IMAGE': frame})[0], plain)
