"""
Lanes from the lane graph's runs: the same pieces as lane_geometry's, without touching pixels.

The served lane graph lists, per mask row, the runs of lane-mask pixels with their probability
sums (triton_perception.graphs.lane_runs) and returns the drivable area at the frame's size.
Here the runs of consecutive rows that touch (8-connected, as cv2's connected components) are
joined into components, which give each piece's row centres, pixel count and probability sum
exactly as the pixels would: O(runs), a few hundred per frame, instead of O(pixels). Grouping,
fitting and sides are lane_geometry's own.
"""
from __future__ import annotations

import numpy as np
from numpy.typing import NDArray
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

from triton_perception.lanes.lane_geometry import (check_settings, LaneResult, lanes_of_pieces,
                                                   Piece, pieces_of)


def check_runs(runs: NDArray[np.int32], counts: NDArray[np.int32]) -> None:
    """Check lane_runs [h, K, 3] and lane_run_counts [h] (a ValueError names the fault)."""
    if runs.ndim != 3 or runs.shape[2] != 3 or 0 in runs.shape or counts.shape != runs.shape[:1]:
        raise ValueError(f'lane_runs must be [h, K, 3] and lane_run_counts [h], got '
                         f'{list(runs.shape)} and {list(counts.shape)}')


def dropped_runs(counts: NDArray[np.int32], max_runs: int) -> int:
    """Return how many runs the graph found but could not list (past the max_runs-th of a row)."""
    return int(np.maximum(counts.astype(np.int64) - max_runs, 0).sum())


def run_pieces(runs: NDArray[np.int32], counts: NDArray[np.int32]) -> list[Piece]:
    """
    Return the lane mask's pieces from its runs (lane_runs [h, K, 3], lane_run_counts [h]).

    Components are numbered by their first run in raster order, as cv2 numbers its labels.
    """
    height, max_runs, _ = runs.shape
    listed = np.arange(max_runs)[None, :] < np.minimum(counts, max_runs)[:, None]  # [h, K]
    rows, slots = np.nonzero(listed)
    start, end, level_sum = (runs[rows, slots].astype(np.int64)).T
    index = np.full(listed.shape, -1, np.int64)
    index[rows, slots] = np.arange(len(rows))
    # Runs of consecutive rows touch when their column spans meet, diagonally included.
    above, below = runs[:-1, :, None, :], runs[1:, None, :, :]
    touch = (listed[:-1, :, None] & listed[1:, None, :] & (above[..., 0] <= below[..., 1])
             & (below[..., 0] <= above[..., 1]))
    row, upper, lower = np.nonzero(touch)
    edges = coo_matrix((np.ones(len(row), np.int8), (index[row, upper], index[row + 1, lower])),
                       shape=(len(rows), len(rows)))
    count, labels = connected_components(edges, directed=False)
    lengths = (end - start).astype(np.float64)
    x_sums = (start + end - 1) * lengths / 2.0  # the columns start .. end - 1, summed
    probability_sums = np.bincount(labels, weights=level_sum, minlength=count) / 255.0
    return pieces_of(labels, rows, lengths, x_sums, probability_sums, height)


def postprocess_runs(runs: NDArray[np.int32], counts: NDArray[np.int32],
                     drivable_area: NDArray[np.uint8] | None, mask_width: int,
                     image_size: tuple[int, int], num_points: int,
                     min_lane_length: float) -> LaneResult:
    """
    Turn the lane graph's runs into lanes, scores and sides, as postprocess does the maps.

    mask_width is the lane mask's width (the runs' columns are in it); drivable_area, already
    at the frame's size, is passed through.
    """
    check_settings(num_points, min_lane_length)
    check_runs(runs, counts)
    return lanes_of_pieces(run_pieces(runs, counts), (runs.shape[0], mask_width), image_size,
                           num_points, min_lane_length)._replace(drivable_area=drivable_area)
