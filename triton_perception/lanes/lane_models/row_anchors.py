"""
The row-anchor layout: Ultra-Fast-Lane-Detection v1 and v2, decoded as upstream's demos do.

v1 (cfzd/Ultra-Fast-Lane-Detection, demo.py): one output ``[1, griding_num + 1, rows, lanes]``.
Per row and lane, the softmax over the first griding_num bins gives an expected bin ``loc``
(counted from 1); when the argmax is the last bin there is no point. A lane needs more than two
points. The point is at ``x = loc * w_step - 1`` and ``y = row_anchor - 1`` in model-input pixels,
with ``w_step = (input_width - 1) / (griding_num - 1)`` (upstream's own pixel convention, kept so
that its published accuracy holds). Row anchors are per dataset (data/constant.py).

v2 (cfzd/Ultra-Fast-Lane-Detection-v2, demo.py `pred2coords`): outputs loc_row
``[1, grid_row, rows, 4]``, loc_col ``[1, grid_col, cols, 4]``, exist_row ``[1, 2, rows, 4]``
and exist_col ``[1, 2, cols, 4]``. Lanes 1 and 2 come from the row anchors (kept when more than
half their rows exist), lanes 0 and 3 from the column anchors (more than a quarter). A point is
the softmax expectation over the argmax bin and its two neighbours, plus 0.5, over
``grid - 1``; anchors are normalised to the whole frame.
"""
from __future__ import annotations

from typing import Any, NamedTuple, Sequence

import numpy as np
from numpy.typing import NDArray

# data/constant.py of v1, in pixels of its 288-row input.
CULANE_ROW_ANCHORS = (121, 131, 141, 150, 160, 170, 180, 189, 199, 209, 219, 228, 238, 248, 258,
                      267, 277, 287)
TUSIMPLE_ROW_ANCHORS = tuple(range(64, 288, 4))
V1_ANCHOR_HEIGHT = 288
V2_ROW_LANES = (1, 2)
V2_COLUMN_LANES = (0, 3)
V2_LOCAL_WIDTH = 1


class RowAnchorSettings(NamedTuple):
    """What the output shapes do not say: the anchors (and, for v2, its crop)."""

    version: int                     # 1 or 2
    row_anchors: tuple[float, ...]   # v1: model-input pixel rows; v2: fractions of frame height
    column_anchors: tuple[float, ...] = ()  # v2: fractions of frame width


def default_row_anchors(rows: int, input_height: int) -> tuple[float, ...]:
    """
    Return v1's published anchors for its CULane (18 rows) or TuSimple (56) models.

    They are scaled from its 288-row input to this model's input height.
    """
    for anchors in (CULANE_ROW_ANCHORS, TUSIMPLE_ROW_ANCHORS):
        if len(anchors) == rows:
            return tuple(float(a) * input_height / V1_ANCHOR_HEIGHT for a in anchors)
    raise ValueError(f'{rows} row anchors match neither CULane (18) nor TuSimple (56): give '
                     'row_anchors in the lane config (pixels of the model input)')


def default_v2_anchors(rows: int, columns: int) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """
    Return v2's row and column anchors, as fractions of the frame.

    These are its CULane/CurveLanes (72 x 81) and TuSimple (56 x 41) configs (configs/*.py:
    row_anchor, col_anchor).
    """
    if (rows, columns) == (72, 81):
        return tuple(np.linspace(0.42, 1.0, rows)), tuple(np.linspace(0.0, 1.0, columns))
    if (rows, columns) == (56, 41):
        return tuple(np.linspace(160, 710, rows) / 720), tuple(np.linspace(0.0, 1.0, columns))
    raise ValueError(f'{rows} row and {columns} column anchors match no published v2 config '
                     '(72 x 81 CULane, 56 x 41 TuSimple): give row_anchors and column_anchors '
                     'in the lane config (fractions of the frame)')


def _softmax(values: NDArray[np.float64], axis: int) -> NDArray[np.float64]:
    shifted = np.exp(values - values.max(axis=axis, keepdims=True))
    normalised: NDArray[np.float64] = shifted / shifted.sum(axis=axis, keepdims=True)
    return normalised


def decode_v1(output: NDArray[np.float32], input_width: int,
              row_anchors: Sequence[float]
              ) -> tuple[list[NDArray[np.float64]], NDArray[np.float32]]:
    """
    [1, griding_num + 1, rows, lanes] -> polylines in model-input px (bottom first), scores.

    A lane's score is the mean probability of its chosen bins' rows having a point.
    """
    logits = output[0].astype(np.float64) if output.ndim == 4 else output.astype(np.float64)
    bins, rows, lane_count = logits.shape
    if len(row_anchors) != rows:
        raise ValueError(f'{len(row_anchors)} row anchors for {rows} output rows')
    griding = bins - 1
    probability = _softmax(logits[:griding], axis=0)
    loc = (probability * np.arange(1, griding + 1)[:, None, None]).sum(axis=0)
    present = logits.argmax(axis=0) != griding
    point_probability = 1.0 - _softmax(logits, axis=0)[griding]
    width_step = (input_width - 1) / (griding - 1)
    lanes, scores = [], []
    for lane in range(lane_count):
        rows_with_point = np.nonzero(present[:, lane])[0]
        if len(rows_with_point) <= 2:
            continue
        xs = loc[rows_with_point, lane] * width_step - 1
        ys = np.asarray(row_anchors, dtype=np.float64)[rows_with_point] - 1
        order = np.argsort(-ys)
        lanes.append(np.stack([xs[order], ys[order]], axis=1))
        scores.append(point_probability[rows_with_point, lane].mean())
    return lanes, np.asarray(scores, dtype=np.float32)


def _local_expectation(locations: NDArray[np.float64], index: int) -> float:
    """Softmax expectation over the argmax bin and its neighbours (v2's local_width 1)."""
    grid = len(locations)
    window = np.arange(max(0, index - V2_LOCAL_WIDTH), min(grid - 1, index + V2_LOCAL_WIDTH) + 1)
    weights = _softmax(locations[window], axis=0)
    return float((weights * window).sum()) + 0.5


def decode_v2(loc_row: NDArray[np.floating[Any]], loc_col: NDArray[np.floating[Any]],
              exist_row: NDArray[np.floating[Any]], exist_col: NDArray[np.floating[Any]],
              settings: RowAnchorSettings
              ) -> tuple[list[NDArray[np.float64]], NDArray[np.float32]]:
    """
    Return the four v2 outputs -> polylines in *frame fractions* (x, y in [0, 1], bottom first).

    Scores are the mean existence probability of the lane's points.
    """
    loc_row, loc_col = loc_row[0].astype(np.float64), loc_col[0].astype(np.float64)
    exist_row, exist_col = exist_row[0].astype(np.float64), exist_col[0].astype(np.float64)
    lanes, scores = [], []
    for lane_ids, loc, exist, anchors, along_rows in (
            (V2_ROW_LANES, loc_row, exist_row, settings.row_anchors, True),
            (V2_COLUMN_LANES, loc_col, exist_col, settings.column_anchors, False)):
        grid, anchor_count = loc.shape[0], loc.shape[1]
        if len(anchors) != anchor_count:
            raise ValueError(f'{len(anchors)} anchors for {anchor_count} output '
                             f"{'rows' if along_rows else 'columns'}")
        valid = exist.argmax(axis=0)
        existence = _softmax(exist, axis=0)[1]
        needed = anchor_count / 2 if along_rows else anchor_count / 4
        for lane in lane_ids:
            if lane >= loc.shape[2] or valid[:, lane].sum() <= needed:
                continue
            points = []
            for k in np.nonzero(valid[:, lane])[0]:
                position = _local_expectation(loc[:, k, lane], int(loc[:, k, lane].argmax()))
                along = position / (grid - 1)
                points.append((along, anchors[k]) if along_rows else (anchors[k], along))
            polyline = np.asarray(points, dtype=np.float64)
            lanes.append(polyline[np.argsort(-polyline[:, 1])])
            scores.append(existence[valid[:, lane].astype(bool), lane].mean())
    return lanes, np.asarray(scores, dtype=np.float32)
