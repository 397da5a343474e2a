"""
Check what Triton returned against the ensembles' output contract, before any message is built.

Triton passes on whatever a model returns: a wrong shape, another dtype or NaN would otherwise
end up in published messages (or fail deep inside message code with an obscure error). Each
check raises MalformedOutput naming the tensor, what it is and what was expected; the
inference worker counts the frame as failed with that text as the reason.
"""
from __future__ import annotations

from typing import Callable, TypeVar

import numpy as np
from numpy.typing import NDArray

from triton_perception.errors import TritonPerceptionError
from triton_perception.graphs import LANE_RUNS_OUTPUTS
from triton_perception.serving.requests.request_inputs import Tensors

ScalarT = TypeVar('ScalarT', bound=np.generic)


class MalformedOutput(TritonPerceptionError, ValueError):
    """A result tensor breaks the output contract (model_repository/README.md)."""


def check_detections(outputs: Tensors) -> NDArray[np.float32]:
    """
    Check DETECTIONS float32 [R, 6] rows padded to a fixed R, NUM_DETECTIONS int32 [1] in [0, R].

    Returns the valid rows, which must be finite.
    """
    padded = _checked(outputs, 'DETECTIONS', np.float32, '[R, 6]',
                      lambda shape: len(shape) == 2 and shape[1] == 6)
    count_tensor = _checked(outputs, 'NUM_DETECTIONS', np.int32, '[1]', lambda shape: shape == (1,))
    count = int(count_tensor[0])
    if not 0 <= count <= padded.shape[0]:
        raise MalformedOutput(f'malformed output: NUM_DETECTIONS is {count}, outside [0, '
                              f'{padded.shape[0]}] (the rows of DETECTIONS)')
    detections = padded[:count]
    _check_finite('DETECTIONS', detections)
    return detections


def check_lane_maps(outputs: Tensors) -> tuple[NDArray[np.uint8], NDArray[np.uint8]]:
    """LANE_PROBABILITY and DRIVABLE_MARGIN: uint8 [h, w] maps of the same, non-empty size."""
    probability = _checked(outputs, 'LANE_PROBABILITY', np.uint8, '[h, w]',
                           lambda shape: len(shape) == 2 and 0 not in shape)
    margin = _checked(outputs, 'DRIVABLE_MARGIN', np.uint8,
                      f'{list(probability.shape)} (the size of LANE_PROBABILITY)',
                      lambda shape: shape == probability.shape)
    return probability, margin


def check_lane_runs(outputs: Tensors, drivable: bool = True) -> Tensors:
    """
    LANE_RUNS int32 [h, K, 3], LANE_RUN_COUNTS int32 [h] (not negative), DRIVABLE_AREA [H, W].

    Without `drivable` (the request left it out) no drivable area is read or returned.
    """
    runs_name, counts_name, area_name = LANE_RUNS_OUTPUTS
    runs = _checked(outputs, runs_name, np.int32, '[h, K, 3]',
                    lambda shape: len(shape) == 3 and shape[2] == 3 and 0 not in shape)
    counts = _checked(outputs, counts_name, np.int32,
                      f'[{runs.shape[0]}] (the rows of {runs_name})',
                      lambda shape: shape == runs.shape[:1])
    if counts.size and (counts.min() < 0 or runs.min() < 0):
        raise MalformedOutput(f'malformed output: {runs_name} or {counts_name} is negative')
    if not drivable:
        return {runs_name: runs, counts_name: counts}
    area = _checked(outputs, area_name, np.uint8, '[H, W]',
                    lambda shape: len(shape) == 2 and 0 not in shape)
    return {runs_name: runs, counts_name: counts, area_name: area}


def _checked(outputs: Tensors, name: str, dtype: type[ScalarT], expected_shape: str,
             shape_ok: Callable[[tuple[int, ...]], bool]) -> NDArray[ScalarT]:
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


def _check_finite(name: str, array: NDArray[np.float32]) -> None:
    # One reason text whatever the count, so /diagnostics keys stay few.
    if not np.isfinite(array).all():
        raise MalformedOutput(f'malformed output: {name} has non-finite values (NaN or inf)')


def check_lane_outputs(outputs: Tensors, names: tuple[str, ...],
                       segmentation: bool) -> Tensors:
    """
    Return an installed lane model's outputs.

    The shipped graph's runs (as check_lane_runs), the compact uint8 maps of a segmentation model
    (as check_lane_maps), else finite FP32 tensors of at least two dimensions.
    """
    if segmentation:
        if names[:2] == LANE_RUNS_OUTPUTS[:2]:  # the drivable area only when asked for
            return check_lane_runs(outputs, drivable=len(names) > 2)
        if len(names) == 2:
            return dict(zip(names, check_lane_maps(outputs)))
        return {names[0]: _checked(outputs, names[0], np.uint8, '[h, w]',
                                   lambda shape: len(shape) == 2 and 0 not in shape)}
    checked = {}
    for name in names:
        checked[name] = _checked(outputs, name, np.float32, 'at least [rows, columns]',
                                 lambda shape: len(shape) >= 2 and 0 not in shape)
        _check_finite(name, checked[name])
    return checked
