"""
Lanes from the lane graph's runs: the same pieces as lane_geometry's, without touching pixels.

The served lane graph lists, per mask row, the runs of lane-mask pixels with their probability
sums (triton_perception.graphs.lane_runs) and returns the drivable area at the frame's size.
Here the runs of consecutive rows that touch (8-connected, as cv2's connected components) are
joined into components, which give each piece's row centres, pixel count and probability sum
exactly as the pixels would: O(runs), a few hundred per frame, instead of O(pixels), in plain
numpy (binary searches for the touching runs, label propagation for the components). Grouping,
fitting and sides are lane_geometry's own.
"""
from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

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


def touching_runs(rows: NDArray[np.int64], start: NDArray[np.int64],
                  end: NDArray[np.int64]) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """
    Return the pairs (upper, lower) of runs in consecutive rows that touch, 8-connected.

    Runs are given in raster order (row, then start), so within a row both starts and ends
    ascend and the runs of the row above that touch run b form one range: those ending at or
    after b's start and starting at or before b's end (ends exclusive, so diagonal neighbours
    count). Two binary searches per run find it.
    """
    stride = np.int64(1 << 20)  # beyond any column
    above = (rows - 1) * stride
    first = np.searchsorted(rows * stride + end, above + start, side='left')
    stop = np.searchsorted(rows * stride + start, above + end, side='right')
    lengths = np.maximum(stop - first, 0)
    lower = np.repeat(np.arange(len(rows)), lengths)
    offsets = np.arange(len(lower)) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    return np.repeat(first, lengths) + offsets, lower


def components(count: int, upper: NDArray[np.int64],
               lower: NDArray[np.int64]) -> NDArray[np.int64]:
    """
    Return each of `count` nodes' component, numbered by the component's lowest node.

    Edges pull both ends to the lower label and pointer jumping shortens the chains, so a line of
    L runs settles in about log(L) rounds; it stops when every edge joins equal labels.
    """
    labels = np.arange(count)
    while True:
        lowest = np.minimum(labels[upper], labels[lower])
        np.minimum.at(labels, upper, lowest)
        np.minimum.at(labels, lower, lowest)
        jumped = labels[labels]
        while not np.array_equal(jumped, labels):
            labels, jumped = jumped, jumped[jumped]
        if np.array_equal(labels[upper], labels[lower]):
            numbered: NDArray[np.int64] = np.unique(labels, return_inverse=True)[1].reshape(-1)
            return numbered


def run_pieces(runs: NDArray[np.int32], counts: NDArray[np.int32]) -> list[Piece]:
    """
    Return the lane mask's pieces from its runs (lane_runs [h, K, 3], lane_run_counts [h]).

    Components are numbered by their first run in raster order, as cv2 numbers its labels.
    """
    height, max_runs, _ = runs.shape
    listed = np.arange(max_runs)[None, :] < np.minimum(counts, max_runs)[:, None]  # [h, K]
    rows, slots = np.nonzero(listed)
    start, end, level_sum = runs[rows, slots].astype(np.int64).T
    labels = components(len(rows), *touching_runs(rows, start, end))
    lengths = (end - start).astype(np.float64)
    x_sums = (start + end - 1) * lengths / 2.0  # the columns start .. end - 1, summed
    probability_sums = np.bincount(labels, weights=level_sum,
                                   minlength=int(labels.max(initial=-1)) + 1) / 255.0
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
