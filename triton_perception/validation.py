"""Check what Triton returned against the ensembles' output contract, before any message is built.

Triton passes on whatever a model returns: a wrong shape, another dtype or NaN would otherwise
end up in published messages (or fail deep inside message code with an obscure error). Each
check raises MalformedOutput naming the tensor, what it is and what was expected; the
inference worker counts the frame as failed with that text as the reason.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

Tensors = dict[str, np.ndarray]


class MalformedOutput(ValueError):
    """A result tensor breaks the output contract (model_repository/README.md)."""


def check_detections(outputs: Tensors) -> np.ndarray:
    """DETECTIONS must be float32 [N, 6] and finite; returns it."""
    detections = _checked(outputs, 'DETECTIONS', np.float32, '[N, 6]',
                          lambda shape: len(shape) == 2 and shape[1] == 6)
    _check_finite('DETECTIONS', detections)
    return detections


def check_lane_outputs(outputs: Tensors, image_shape: tuple[int, ...]) -> None:
    """LANES float32 [L, P, 2] finite, LANE_SCORES float32 [L] finite, LANE_SIDES int8 [L],
    DRIVABLE_AREA uint8 at the input image's height and width."""
    lanes = _checked(outputs, 'LANES', np.float32, '[L, P, 2]',
                     lambda shape: len(shape) == 3 and shape[2] == 2)
    _check_finite('LANES', lanes)
    count = lanes.shape[0]
    scores = _checked(outputs, 'LANE_SCORES', np.float32, f'[{count}] (one per lane)',
                      lambda shape: shape == (count,))
    _check_finite('LANE_SCORES', scores)
    _checked(outputs, 'LANE_SIDES', np.int8, f'[{count}] (one per lane)',
             lambda shape: shape == (count,))
    height, width = image_shape[:2]
    _checked(outputs, 'DRIVABLE_AREA', np.uint8, f'[{height}, {width}] (the input size)',
             lambda shape: shape == (height, width))


def _checked(outputs: Tensors, name: str, dtype: type, expected_shape: str,
             shape_ok: Callable[[tuple[int, ...]], bool]) -> np.ndarray:
    array = outputs.get(name)
    if array is None:
        raise MalformedOutput(f'malformed output: {name} is missing')
    if array.dtype != dtype:
        raise MalformedOutput(f'malformed output: {name} has dtype {array.dtype}, expected '
                              f'{np.dtype(dtype)}')
    if not shape_ok(array.shape):
        raise MalformedOutput(f'malformed output: {name} has shape {array.shape}, expected '
                              f'{expected_shape}')
    return array


def _check_finite(name: str, array: np.ndarray) -> None:
    # One reason text whatever the count, so /diagnostics keys stay few.
    if not np.isfinite(array).all():
        raise MalformedOutput(f'malformed output: {name} has non-finite values (NaN or inf)')
