"""
Malformed model outputs are named, and fuzzed camera frames are rejected without a crash.

The pure checks, without ROS or Triton.
"""
from __future__ import annotations

import random
from types import SimpleNamespace
from typing import Any

import cv2
import numpy as np
import pytest

from support.fault_plumbing import SEED
from support.image_fuzz import fuzzed_compressed, fuzzed_image
from triton_perception.frames.image_conversion import (check_compressed, check_image,
                                                       compressed_to_rgb, image_to_rgb,
                                                       ImageRejected)
from triton_perception.serving.requests.output_checks import (check_detections, check_lane_maps,
                                                              MalformedOutput)

# The nodes' default max_image_pixels: a damaged JPEG/PNG header may claim up to this much.
DEFAULT_MAX_PIXELS = 3840 * 2160


# --- the pure output checks ------------------------------------------------------------------

def lane_outputs(height: int = 36, width: int = 64) -> dict[str, np.ndarray]:
    """Return well-formed lane maps of `height` x `width`."""
    return {'LANE_PROBABILITY': np.zeros((height, width), np.uint8),
            'DRIVABLE_MARGIN': np.full((height, width), 128, np.uint8)}


def detection_outputs(rows: np.ndarray, count: int) -> dict[str, np.ndarray]:
    """Return DETECTIONS `rows` with NUM_DETECTIONS `count`."""
    return {'DETECTIONS': rows, 'NUM_DETECTIONS': np.array([count], np.int32)}


def test_well_formed_outputs_pass() -> None:
    """Well-formed outputs pass, and padding rows past the count are never read."""
    rows = np.zeros((300, 6), np.float32)
    rows[:3, 4] = 0.5
    assert check_detections(detection_outputs(rows, 3)).shape == (3, 6)
    assert check_detections(detection_outputs(rows, 0)).shape == (0, 6)
    # Padding past the count is never read (it may hold anything).
    rows[3:] = np.nan
    assert check_detections(detection_outputs(rows, 3)).shape == (3, 6)
    probability, margin = check_lane_maps(lane_outputs())
    assert probability.shape == margin.shape == (36, 64)


@pytest.mark.parametrize('outputs,message', [
    ({}, 'DETECTIONS is missing'),
    ({'DETECTIONS': np.zeros((3, 6), np.float32)}, 'NUM_DETECTIONS is missing'),
    (detection_outputs(np.zeros((3, 5), np.float32), 1),
     'DETECTIONS has shape (3, 5), expected [R, 6]'),
    (detection_outputs(np.zeros(6, np.float32), 1), 'DETECTIONS has shape (6,), expected [R, 6]'),
    (detection_outputs(np.zeros((1, 6), np.float64), 1),
     'DETECTIONS has dtype float64, expected float32'),
    (detection_outputs(np.zeros((3, 6), np.float32), 4),
     'NUM_DETECTIONS is 4, outside [0, 3] (the rows of DETECTIONS)'),
    (detection_outputs(np.zeros((3, 6), np.float32), -1),
     'NUM_DETECTIONS is -1, outside [0, 3] (the rows of DETECTIONS)'),
    (detection_outputs(np.array([[0, 0, 1, 1, np.nan, 0]], np.float32), 1),
     'DETECTIONS has non-finite values (NaN or inf)'),
    (detection_outputs(np.array([[0, 0, np.inf, 1, 0.5, 0]], np.float32), 1),
     'DETECTIONS has non-finite values (NaN or inf)'),
])
def test_malformed_detections_are_named(outputs: dict, message: str) -> None:
    """Each kind of malformed detection output is a MalformedOutput saying exactly what is wrong."""
    with pytest.raises(MalformedOutput) as error:
        check_detections(outputs)
    assert str(error.value) == f'malformed output: {message}'


@pytest.mark.parametrize('name,value,message', [
    ('LANE_PROBABILITY', np.zeros((36, 64), np.float32),
     'LANE_PROBABILITY has dtype float32, expected uint8'),
    ('LANE_PROBABILITY', np.zeros((1, 36, 64), np.uint8),
     'LANE_PROBABILITY has shape (1, 36, 64), expected [h, w]'),
    ('DRIVABLE_MARGIN', np.zeros((18, 64), np.uint8),
     'DRIVABLE_MARGIN has shape (18, 64), expected [36, 64] (the size of LANE_PROBABILITY)'),
    ('DRIVABLE_MARGIN', None, 'DRIVABLE_MARGIN is missing'),
])
def test_malformed_lane_outputs_are_named(name: str, value: Any, message: str) -> None:
    """Each kind of malformed lane output is a MalformedOutput saying exactly what is wrong."""
    outputs = lane_outputs()
    outputs[name] = value
    with pytest.raises(MalformedOutput, match=message.replace('(', r'\(').replace(')', r'\)')
                       .replace('[', r'\[').replace(']', r'\]')):
        check_lane_maps(outputs)


# --- fuzzing the converters without ROS -------------------------------------------------------

def test_image_conversion_survives_fuzzing() -> None:
    """
    Every damaged Image is either converted to [H, W, 3] uint8 or rejected with a reason.

    The cheap callback check agrees with the full conversion.
    """
    rng = random.Random(SEED)
    outcomes: dict[str, int] = {}
    for _ in range(10_000):
        message = SimpleNamespace(**fuzzed_image(rng))
        budget = rng.choice((64 * 64, DEFAULT_MAX_PIXELS))
        try:
            rgb = image_to_rgb(message, budget)
        except ImageRejected as rejection:
            with pytest.raises(ImageRejected) as check:
                check_image(message, budget)
            assert check.value.reason == rejection.reason
            outcomes[rejection.reason] = outcomes.get(rejection.reason, 0) + 1
            continue
        check_image(message, budget)
        assert rgb.dtype == np.uint8 and rgb.shape == (message.height, message.width, 3)
        outcomes['converted'] = outcomes.get('converted', 0) + 1
    assert {'converted', 'unsupported_encoding', 'empty', 'too_large', 'bad_step', 'odd_width',
            'truncated'} <= set(outcomes), outcomes


def test_compressed_conversion_survives_fuzzing() -> None:
    """
    Every fuzzed CompressedImage is converted within its budget or rejected with a reason.

    A rejection by the cheap callback check is the full conversion's rejection too.
    """
    rng = random.Random(SEED)
    outcomes: dict[str, int] = {}
    for _ in range(5_000):
        message = SimpleNamespace(**fuzzed_compressed(rng))
        budget = rng.choice((64 * 64, DEFAULT_MAX_PIXELS))
        try:
            check_compressed(message, budget)
        except ImageRejected as rejection:
            with pytest.raises(ImageRejected) as conversion:
                compressed_to_rgb(message, budget)
            assert conversion.value.reason == rejection.reason
            outcomes[rejection.reason] = outcomes.get(rejection.reason, 0) + 1
            continue
        try:
            rgb = compressed_to_rgb(message, budget)
        except ImageRejected as rejection:
            outcomes[rejection.reason] = outcomes.get(rejection.reason, 0) + 1
            continue
        assert rgb.dtype == np.uint8 and rgb.ndim == 3 and rgb.shape[2] == 3
        assert rgb.shape[0] * rgb.shape[1] <= budget
        outcomes['converted'] = outcomes.get('converted', 0) + 1
    assert {'converted', 'empty', 'too_large', 'truncated', 'unsupported_format',
            'undecodable'} <= set(outcomes), outcomes


def test_a_png_chunk_longer_than_its_data_is_rejected_before_decoding() -> None:
    """A PNG whose chunk claims more bytes than it holds is rejected by the cheap check."""
    ok, png = cv2.imencode('.png', np.zeros((4, 49, 3), np.uint8))
    assert ok
    data = bytearray(png.tobytes())
    length_at = data.index(b'IDAT') - 4
    data[length_at:length_at + 4] = (2**31 - 1).to_bytes(4, 'big')
    with pytest.raises(ImageRejected):
        check_compressed(SimpleNamespace(format='png', data=bytes(data)), DEFAULT_MAX_PIXELS)
