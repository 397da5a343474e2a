"""
Lanes grouped and fitted point by point: the reference for lanes_of_pieces' power sums.

Each join concatenates the points of a lane and a piece and fits them; each lane is fitted
again from its points to be sampled. Plain and slow, so it stays a test's reference: the
package's lane_fitting must give the same lanes (test_lane_runs.py), to rounding.
"""
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray

from triton_perception.lanes.lane_fitting import (JOIN_RMS_PIXELS, MAX_SHARED_ROWS,
                                                  QUADRATIC_MIN_SPAN)
from triton_perception.lanes.lane_geometry import lane_sides, LaneResult, Piece


@dataclass
class Lane:
    """Pieces grouped as one painted line, and their points pooled for fitting."""

    pieces: list[Piece]
    y: NDArray[np.float64]
    x: NDArray[np.float64]
    rows: NDArray[np.bool_]  # [mask height]: the rows its pieces occupy

    @property
    def span(self) -> float:
        """Vertical extent of the lane's points, in mask pixels (rows)."""
        return float(self.y.max() - self.y.min())


class Curve(NamedTuple):
    """
    X = f(y) as a polynomial in t = (y - centre) / half_span, so that t spans [-1, 1].

    Fitting in t keeps the small normal equations well conditioned (rows run to a few hundred,
    their squares to 1e5), and evaluating takes two small numpy calls instead of np.poly1d's.
    """

    coefficients: NDArray[np.float64]  # highest power first, as np.polyval takes them
    centre: float
    half_span: float

    def at(self, y: NDArray[np.float64] | float) -> NDArray[np.float64]:
        """X at rows y (Horner's rule: the curves have one to three coefficients)."""
        t = (np.asarray(y, dtype=np.float64) - self.centre) / self.half_span
        coefficients = self.coefficients.tolist()
        x = np.full_like(t, coefficients[0])
        for coefficient in coefficients[1:]:
            x = x * t + coefficient
        return x

    def slope(self, y: float) -> float:
        """Dx/dy at row y."""
        coefficients: list[float] = self.coefficients.tolist()
        t = (y - self.centre) / self.half_span
        if len(coefficients) == 3:
            return (2.0 * coefficients[0] * t + coefficients[1]) / self.half_span
        return coefficients[0] / self.half_span if len(coefficients) == 2 else 0.0


def fit_curve(y: NDArray[np.float64], x: NDArray[np.float64], mask_height: int) -> Curve:
    """X = f(y) by least squares: a line, or a quadratic once the points span enough rows."""
    low, high = float(y.min()), float(y.max())
    if high == low:  # one row: no slope to fit
        return Curve(np.array([float(np.mean(x))]), low, 1.0)
    degree = 2 if high - low >= QUADRATIC_MIN_SPAN * mask_height else 1
    if degree == 2 and not np.any((y > low) & (y < high)):
        degree = 1  # two distinct rows determine a line, not a quadratic
    centre, half_span = (high + low) / 2.0, (high - low) / 2.0
    t = (y - centre) / half_span
    # The normal equations of the fit in t, from power sums (a 2x2 or 3x3 system).
    t2 = t * t
    sums = [float(len(t)), float(t.sum()), float(t2.sum())]
    right = [float(x.sum()), float(t @ x)]
    if degree == 2:
        sums += [float(t2 @ t), float(t2 @ t2)]
        right.append(float(t2 @ x))
    return Curve(np.array(_solve_normal(sums, right)), centre, half_span)


def _solve_normal(sums: list[float], right: list[float]) -> list[float]:
    """
    Solve the normal equations sum(t^(i+j)) c_j = right_i; return c highest power first.

    `sums` are the power sums of t from t^0 up, `right` the sums of x t^i: a 2x2 or 3x3
    symmetric system, solved by Cramer's rule (numpy's solve costs more than the arithmetic).
    """
    if len(right) == 2:
        (s0, s1, s2), (b0, b1) = sums, right
        determinant = s0 * s2 - s1 * s1
        return [(s0 * b1 - s1 * b0) / determinant, (s2 * b0 - s1 * b1) / determinant]
    s0, s1, s2, s3, s4 = sums
    b0, b1, b2 = right
    rows = ((s0, s1, s2), (s1, s2, s3), (s2, s3, s4))
    determinant = _det3(rows)
    return [_det3(tuple(row[:2] + (b,) for row, b in zip(rows, right))) / determinant,
            _det3(tuple((row[0], b, row[2]) for row, b in zip(rows, right))) / determinant,
            _det3(tuple((b,) + row[1:] for row, b in zip(rows, right))) / determinant]


def _det3(rows: tuple[tuple[float, float, float], ...]) -> float:
    """Return the determinant of a 3x3 matrix given by rows."""
    (a, b, c), (d, e, f), (g, h, i) = rows
    return a * (e * i - f * h) - b * (d * i - f * g) + c * (d * h - e * g)


def rows_of(y: NDArray[np.float64], mask_height: int) -> NDArray[np.bool_]:
    """Which mask rows row centres y occupy, as a bool [mask_height] occupancy."""
    occupied = np.zeros(mask_height, dtype=bool)
    occupied[y.astype(np.intp)] = True  # centres are row + 0.5
    return occupied


def joins(lane: Lane, piece: Piece, piece_rows: NDArray[np.bool_],
          mask_height: int) -> float | None:
    """RMS residual of one curve through the lane and the piece, or None if they cannot be one."""
    if np.count_nonzero(lane.rows & piece_rows) > MAX_SHARED_ROWS:
        return None
    y = np.concatenate([lane.y, piece.y])
    x = np.concatenate([lane.x, piece.x])
    residuals = fit_curve(y, x, mask_height).at(y) - x
    rms = float(np.sqrt(np.dot(residuals, residuals) / len(residuals)))
    return rms if rms <= JOIN_RMS_PIXELS else None


def group_pieces(pieces: list[Piece], mask_height: int) -> list[Lane]:
    """Group greedily, longest pieces first, so every lane is seeded by its most reliable part."""
    lanes: list[Lane] = []
    for piece in sorted(pieces, key=lambda p: p.y[-1] - p.y[0], reverse=True):
        piece_rows = rows_of(piece.y, mask_height)
        residuals = [joins(lane, piece, piece_rows, mask_height) for lane in lanes]
        candidates = [(rms, index) for index, rms in enumerate(residuals) if rms is not None]
        if not candidates:
            lanes.append(Lane([piece], piece.y, piece.x, piece_rows))
            continue
        lane = lanes[min(candidates)[1]]
        order = np.argsort(np.concatenate([lane.y, piece.y]), kind='stable')
        lane.pieces.append(piece)
        lane.y = np.concatenate([lane.y, piece.y])[order]
        lane.x = np.concatenate([lane.x, piece.x])[order]
        lane.rows = lane.rows | piece_rows
    return lanes


def sample_lane(lane: Lane, mask_width: int, mask_height: int,
                num_points: int) -> tuple[NDArray[np.float64], float]:
    """
    Points (x, y) from where the lane meets the image border up to its top, and its bottom x.

    Below the lowest detected row the curve continues along its tangent (a quadratic
    extrapolated beyond its data bends away quickly). The bottom x is where that tangent
    crosses the bottom row, even outside the image: it orders lanes for the side assignment.
    """
    curve = fit_curve(lane.y, lane.x, mask_height)
    y_top, y_low = float(lane.y[0]), float(lane.y[-1])
    x_low, slope = float(curve.at(y_low)), curve.slope(y_low)
    bottom_x = x_low + slope * (mask_height - y_low)
    y_end = float(mask_height)
    if not 0.0 <= bottom_x <= mask_width:  # leaves through a side edge before the bottom
        border = 0.0 if bottom_x < 0 else float(mask_width)
        y_end = max(y_low, y_low + (border - x_low) / slope) if slope else y_low
    y = np.linspace(y_end, y_top, num_points)
    x = np.where(y > y_low, x_low + slope * (y - y_low), curve.at(y))
    return np.stack([np.clip(x, 0, mask_width), y], axis=1), bottom_x


def point_lanes(pieces: list[Piece], mask_size: tuple[int, int], image_size: tuple[int, int],
                num_points: int, min_lane_length: float) -> LaneResult:
    """Group, fit and judge pieces point by point, as lanes_of_pieces does from power sums."""
    image_height, image_width = (int(v) for v in image_size)
    mask_height, mask_width = mask_size
    lanes = [lane for lane in group_pieces(pieces, mask_height)
             if lane.span >= min_lane_length * mask_height]
    polylines = np.empty((len(lanes), num_points, 2), dtype=np.float32)
    bottom_x = np.empty(len(lanes))
    for index, lane in enumerate(lanes):
        polylines[index], bottom_x[index] = sample_lane(lane, mask_width, mask_height, num_points)
    scores = np.array([sum(p.probability_sum for p in lane.pieces) / sum(p.pixels for p in
                                                                         lane.pieces)
                       for lane in lanes], dtype=np.float32)
    sides = lane_sides(polylines, bottom_x, np.array([lane.y[0] for lane in lanes]),
                       np.array([lane.y[-1] for lane in lanes]), mask_width, mask_height)
    order = np.argsort(bottom_x, kind='stable')
    polylines = polylines[order] * np.array([image_width / mask_width, image_height / mask_height],
                                            dtype=np.float32)
    return LaneResult(lanes=polylines, scores=scores[order], sides=sides[order],
                      drivable_area=None)
