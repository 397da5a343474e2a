"""
Pieces grouped into lanes and lanes sampled, from power sums instead of points.

A least-squares polynomial x = f(y) needs only sums over its points (n, the powers of y up to
the fourth, x times the powers of y up to the second, x squared): they give the normal
equations and the residual, and the sums of two point sets are the sums of each. So each piece
is reduced to its sums once (one numpy pass over every piece's rows), and the greedy grouping
tries a piece against every lane with a dozen float operations, without concatenating, sorting
or refitting points. Rows are measured as t = (y - h/2) / (h/2), one scale for the whole mask,
which keeps the sums additive and the systems well conditioned (t within [-1, 1]); x is
measured from the mask's centre column, which keeps the residual's subtraction exact enough
(a least-squares fit does not depend on where x or t start). The fits, and so the lanes, are
those of fitting the points themselves, to rounding.

Rows a lane occupies are kept as an integer bit mask, so the rows two sets share are one AND
and a bit count.
"""
from __future__ import annotations

import math
from typing import NamedTuple, Sequence

import numpy as np
from numpy.typing import NDArray

JOIN_RMS_PIXELS = 3.0       # joint-fit residual (mask pixels) below which two pieces are one line
MAX_SHARED_ROWS = 3         # dashes of one line follow each other: they hardly share rows
QUADRATIC_MIN_SPAN = 0.25   # fraction of mask height a lane must span before it may curve


class PointSet(NamedTuple):
    """
    What a fit needs of a set of (y, x) points, all additive but the extremes.

    `sums`: n, sum t, t^2, t^3, t^4, sum x', x' t, x' t^2, x'^2 (t and x' as the module says).
    """

    sums: tuple[float, ...]
    low: float   # smallest y (mask pixels)
    high: float  # largest y
    rows: int    # bit r set: the set has a point in mask row r

    def joined(self, other: PointSet) -> PointSet:
        """Return the union of two disjoint point sets."""
        return PointSet(tuple(a + b for a, b in zip(self.sums, other.sums)),
                        min(self.low, other.low), max(self.high, other.high),
                        self.rows | other.rows)


class Fit(NamedTuple):
    """X' = c2 t^2 + c1 t + c0 (c2, c1 zero for lower degrees) and its residual sum of squares."""

    coefficients: tuple[float, float, float]
    residual: float


def point_sets(members: NDArray[np.int64], y: NDArray[np.float64], x: NDArray[np.float64],
               count: int, mask_size: tuple[int, int]) -> list[PointSet]:
    """
    Return the point sets of `count` sets from their points (y, x), point i in set members[i].

    Every set must have a point.
    """
    mask_height, mask_width = mask_size
    half = mask_height / 2.0
    t = (y - half) / half
    centred = x - mask_width / 2.0
    t2 = t * t
    weights = (np.ones_like(t), t, t2, t2 * t, t2 * t2, centred, centred * t, centred * t2,
               centred * centred)
    sums = np.stack([np.bincount(members, weights=w, minlength=count) for w in weights], axis=1)
    low = np.full(count, np.inf)
    np.minimum.at(low, members, y)
    high = np.full(count, -np.inf)
    np.maximum.at(high, members, y)
    occupied = np.zeros((count, mask_height), dtype=bool)
    occupied[members, y.astype(np.intp)] = True  # row centres are row + 0.5
    packed = np.packbits(occupied, axis=1, bitorder='little')
    return [PointSet(tuple(row), lo, hi, int.from_bytes(bits.tobytes(), 'little'))
            for row, lo, hi, bits in zip(sums.tolist(), low.tolist(), high.tolist(), packed)]


def fit(points: PointSet, mask_height: int) -> Fit:
    """X = f(y) by least squares: a line, or a quadratic once the points span enough rows."""
    n, t1, t2, t3, t4, b0, b1, b2, xx = points.sums
    if points.high == points.low:  # one row: no slope to fit
        return Fit((0.0, 0.0, b0 / n), max(xx - b0 * b0 / n, 0.0))
    quadratic = (points.high - points.low >= QUADRATIC_MIN_SPAN * mask_height
                 and points.rows.bit_count() > 2)  # two rows determine a line, not a quadratic
    if not quadratic:
        determinant = n * t2 - t1 * t1
        slope = (n * b1 - t1 * b0) / determinant
        offset = (t2 * b0 - t1 * b1) / determinant
        return Fit((0.0, slope, offset), max(xx - offset * b0 - slope * b1, 0.0))
    rows = ((n, t1, t2), (t1, t2, t3), (t2, t3, t4))
    right = (b0, b1, b2)
    determinant = _det3(rows)
    c0 = _det3(tuple((b,) + row[1:] for row, b in zip(rows, right))) / determinant
    c1 = _det3(tuple((row[0], b, row[2]) for row, b in zip(rows, right))) / determinant
    c2 = _det3(tuple(row[:2] + (b,) for row, b in zip(rows, right))) / determinant
    return Fit((c2, c1, c0), max(xx - c0 * b0 - c1 * b1 - c2 * b2, 0.0))


def _det3(rows: tuple[tuple[float, float, float], ...]) -> float:
    """Return the determinant of a 3x3 matrix given by rows."""
    (a, b, c), (d, e, f), (g, h, i) = rows
    return a * (e * i - f * h) - b * (d * i - f * g) + c * (d * h - e * g)


def join_rms(lane: PointSet, piece: PointSet, mask_height: int) -> float | None:
    """RMS residual of one curve through the lane and the piece, or None if they cannot be one."""
    if (lane.rows & piece.rows).bit_count() > MAX_SHARED_ROWS:
        return None
    joined = lane.joined(piece)
    rms = math.sqrt(fit(joined, mask_height).residual / joined.sums[0])
    return rms if rms <= JOIN_RMS_PIXELS else None


def group(pieces: Sequence[PointSet], mask_height: int) -> list[list[int]]:
    """
    Group pieces into lanes, longest first, so every lane is seeded by its most reliable part.

    A piece joins the lane whose joint fit has the smallest residual, if any is small enough
    and they barely share rows. Returns each lane's piece indices, lanes in the order seeded.
    """
    lanes: list[PointSet] = []
    members: list[list[int]] = []
    for index in sorted(range(len(pieces)), key=lambda i: pieces[i].high - pieces[i].low,
                        reverse=True):
        piece = pieces[index]
        candidates = [(rms, lane) for lane, rms in
                      enumerate(join_rms(points, piece, mask_height) for points in lanes)
                      if rms is not None]
        if not candidates:
            lanes.append(piece)
            members.append([index])
            continue
        chosen = min(candidates)[1]
        lanes[chosen] = lanes[chosen].joined(piece)
        members[chosen].append(index)
    return members


def sample(lanes: Sequence[PointSet], mask_size: tuple[int, int],
           num_points: int) -> tuple[NDArray[np.float32], NDArray[np.float64]]:
    """
    Points (x, y) of each lane from where it meets the image border up to its top, and bottom x.

    Below the lowest detected row the curve continues along its tangent (a quadratic
    extrapolated beyond its data bends away quickly). The bottom x is where that tangent
    crosses the bottom row, even outside the image: it orders lanes for the side assignment.
    All lanes at once: polylines [L, num_points, 2] and bottom x [L], in mask pixels.
    """
    mask_height, mask_width = mask_size
    half = mask_height / 2.0
    c2, c1, c0 = np.array([fit(lane, mask_height).coefficients for lane in lanes],
                          dtype=np.float64).reshape(-1, 3).T
    centre = mask_width / 2.0
    y_top = np.array([lane.low for lane in lanes])
    y_low = np.array([lane.high for lane in lanes])
    t_low = (y_low - half) / half
    x_low = (c2 * t_low + c1) * t_low + c0 + centre
    slope = (2.0 * c2 * t_low + c1) / half
    bottom_x = x_low + slope * (mask_height - y_low)
    leaves = (bottom_x < 0.0) | (bottom_x > mask_width)  # through a side edge before the bottom
    border = np.where(bottom_x < 0.0, 0.0, float(mask_width))
    with np.errstate(divide='ignore', invalid='ignore'):
        # Not below the bottom row: a lane already beyond a side that turns back in only
        # slowly (a slope of rounding size) would meet the border rows past the image.
        side_row = np.minimum(np.maximum(y_low, y_low + (border - x_low) / slope),
                              float(mask_height))
    y_end = np.where(leaves, np.where(slope != 0.0, side_row, y_low), float(mask_height))
    steps = np.arange(num_points) / (num_points - 1)
    y = y_end[:, None] + (y_top - y_end)[:, None] * steps
    y[:, -1] = y_top
    t = (y - half) / half
    on_curve = (c2[:, None] * t + c1[:, None]) * t + c0[:, None] + centre
    x = np.where(y > y_low[:, None], x_low[:, None] + slope[:, None] * (y - y_low[:, None]),
                 on_curve)
    polylines = np.stack([np.clip(x, 0, mask_width), y], axis=2).astype(np.float32)
    return polylines, bottom_x
