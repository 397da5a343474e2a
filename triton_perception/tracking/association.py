"""Matching boxes to tracks: IoU and a gated optimal assignment."""
from __future__ import annotations

import numpy as np
from numpy.typing import NDArray


def iou_matrix(boxes_a: NDArray[np.float64],
               boxes_b: NDArray[np.float64]) -> NDArray[np.float64]:
    """Compute the IoU [A, B] of boxes (x1, y1, x2, y2); 0 for empty boxes."""
    if len(boxes_a) == 0 or len(boxes_b) == 0:
        return np.zeros((len(boxes_a), len(boxes_b)))
    a = boxes_a[:, None, :4]
    b = boxes_b[None, :, :4]
    width = np.clip(np.minimum(a[..., 2], b[..., 2]) - np.maximum(a[..., 0], b[..., 0]), 0, None)
    height = np.clip(np.minimum(a[..., 3], b[..., 3]) - np.maximum(a[..., 1], b[..., 1]), 0,
                     None)
    overlap = width * height
    area_a = (a[..., 2] - a[..., 0]) * (a[..., 3] - a[..., 1])
    area_b = (b[..., 2] - b[..., 0]) * (b[..., 3] - b[..., 1])
    union = area_a + area_b - overlap
    with np.errstate(divide='ignore', invalid='ignore'):
        return np.where(union > 0, overlap / union, 0.0)


def match(similarity: NDArray[np.float64],
          gate: float) -> tuple[NDArray[np.int64], NDArray[np.intp], NDArray[np.intp]]:
    """
    Optimal one-to-one pairs of rows and columns with similarity >= gate.

    Returns (pairs [K, 2] of (row, column), unmatched rows, unmatched columns). The gate is
    applied before the assignment, so a pair under the gate never displaces a valid one.
    """
    rows, columns = similarity.shape
    if rows == 0 or columns == 0:
        return (np.zeros((0, 2), dtype=np.int64), np.arange(rows), np.arange(columns))
    candidates = similarity >= gate
    row_index, column_index = np.nonzero(candidates)
    row_list, column_list = row_index.tolist(), column_index.tolist()
    if len(set(row_list)) < len(row_list) or len(set(column_list)) < len(column_list):
        row_index, column_index = _assignment(np.where(candidates, 1.0 - similarity, 1e6))
    # Else no row or column has two candidates (boxes apart, the usual frame): the optimal
    # assignment then holds every candidate pair, since leaving one out costs a gated pair.
    pairs = np.stack([row_index, column_index], axis=1).astype(np.int64)
    free_rows = np.ones(rows, dtype=bool)
    free_rows[pairs[:, 0]] = False
    free_columns = np.ones(columns, dtype=bool)
    free_columns[pairs[:, 1]] = False
    return pairs, np.flatnonzero(free_rows), np.flatnonzero(free_columns)


def _assignment(cost: NDArray[np.float64]) -> tuple[NDArray[np.intp], NDArray[np.intp]]:
    """Minimum-cost pairs (rows sorted), without those of gated cost (>= 1e6)."""
    # Deferred: scipy costs a perception process about 20 MiB, paid only once tracking runs.
    from scipy.optimize import linear_sum_assignment  # noqa: PLC0415
    row_index, column_index = linear_sum_assignment(cost)
    valid = cost[row_index, column_index] < 1e6
    return row_index[valid], column_index[valid]
