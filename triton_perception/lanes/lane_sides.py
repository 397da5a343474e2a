"""
Which lanes bound the ego lane: side labels shared by every lane model's decoding.

Sides come from where each lane meets the frame's bottom row (extrapolated along its lowest
tangent), relative to the frame centre: the nearest line left of centre is -1 (ego-left
boundary), the next -2; the nearest right is +1, the next +2; others 0 (unknown).

Two rules keep a spurious piece from taking an ego side, since a jump of the ego lines is what
a lane-keeping consumer notices first:
- a lane may not reach the frame's border mostly by extrapolation: the rows between its lowest
  detected point and where its tangent leaves the frame (the bottom, or a side for a steep
  line) may be at most EGO_MAX_EXTRAPOLATION times its detected height;
- painted lines do not cross in the image, so of two lanes whose order at the highest row both
  cover differs from their order at the bottom, the one detected over fewer rows is a fragment
  (a road edge, a shadow, a piece of a neighbouring line) and takes no side.
Lanes ruled out still get published, with side 0.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
from numpy.typing import NDArray

EGO_MAX_EXTRAPOLATION = 2.0


def x_at(points: NDArray[np.float32 | np.float64], y: float) -> float:
    """X of a polyline (N x 2, any order) at row y, or NaN outside its rows."""
    return float(xs_at(points, np.array([y]))[0])


def xs_at(points: NDArray[np.float32 | np.float64],
          ys: NDArray[np.float64]) -> NDArray[np.float64]:
    """X of a polyline (N x 2, any order) at each row of ys, NaN outside its rows."""
    order = np.argsort(points[:, 1], kind='stable')
    rows, xs = points[order, 1], points[order, 0]
    found: NDArray[np.float64] = np.interp(ys, rows, xs)
    found[(ys < rows[0] - 1e-6) | (ys > rows[-1] + 1e-6)] = np.nan
    return found


def bottom_x(points: NDArray[np.float32 | np.float64], frame_height: float) -> float:
    """
    Return where the tangent at a polyline's lowest two points meets the bottom row.

    It may be outside the frame; a horizontal-ish or single-row polyline keeps its lowest x.
    """
    order = np.argsort(-points[:, 1], kind='stable')
    low, above = points[order[0]], points[order[min(1, len(order) - 1)]]
    rise = float(low[1] - above[1])
    if abs(rise) < 1e-6:
        return float(low[0])
    slope = float(low[0] - above[0]) / rise
    return float(low[0] + slope * (frame_height - low[1]))


def exit_row(x_low: float, y_low: float, bottom: float, frame_width: float,
             frame_height: float) -> float:
    """Return the row where the line (x_low, y_low) -> (bottom, frame_height) leaves the frame."""
    if 0.0 <= bottom <= frame_width or abs(bottom - x_low) < 1e-9:
        return frame_height
    border = 0.0 if bottom < 0.0 else frame_width
    return y_low + (border - x_low) * (frame_height - y_low) / (bottom - x_low)


def ego_eligible(polylines: Sequence[NDArray[np.float32 | np.float64]],
                 bottoms: NDArray[np.float64], detected_top: NDArray[np.float64],
                 detected_low: NDArray[np.float64], frame_width: float,
                 frame_height: float) -> NDArray[np.bool_]:
    """
    Which lanes may take a side (see the module docstring). Arrays are per lane, in frame pixels.

    detected_top/low are the rows of each lane's highest and lowest detected point.
    """
    count = len(polylines)
    heights = np.maximum(detected_low - detected_top, 1e-6)
    # Each lane is read at its own lowest detected row and at every pair's shared top row.
    shared_tops = np.maximum(detected_top[:, None], detected_top[None, :])
    read = [xs_at(polylines[i], np.append(shared_tops[i], detected_low[i])) for i in range(count)]
    exits = np.array([exit_row(read[i][-1], detected_low[i], bottoms[i], frame_width,
                               frame_height) for i in range(count)])
    eligible: NDArray[np.bool_] = (exits - detected_low) <= EGO_MAX_EXTRAPOLATION * heights
    for a in range(count):
        for b in range(a + 1, count):
            if shared_tops[a, b] > min(detected_low[a], detected_low[b]):
                continue  # no row in common: nothing to compare
            above = read[a][b] - read[b][a]
            below = bottoms[a] - bottoms[b]
            if np.isfinite(above) and above * below < 0:
                eligible[a if heights[a] < heights[b] else b] = False
    return eligible


def assign_sides(bottoms: NDArray[np.float64], centre_x: float,
                 eligible: NDArray[np.bool_] | None = None) -> NDArray[np.int8]:
    """-1/-2 for the first two eligible lines left of centre, +1/+2 to the right, 0 else."""
    sides = np.zeros(len(bottoms), dtype=np.int8)
    usable = np.ones(len(bottoms), dtype=bool) if eligible is None else eligible
    left = np.nonzero((bottoms < centre_x) & usable)[0]
    right = np.nonzero((bottoms >= centre_x) & usable)[0]
    for rank, index in enumerate(left[np.argsort(-bottoms[left])][:2]):
        sides[index] = -(rank + 1)
    for rank, index in enumerate(right[np.argsort(bottoms[right])][:2]):
        sides[index] = rank + 1
    return sides
