"""
Lane polylines, ego sides and the drivable area from the lane model's compact outputs.

The lane_detection ensemble ends at the model step (on an Orin a TensorRT engine, whose GPU
output JetPack's Python backend cannot take), returning two uint8 maps at model resolution
(triton_perception.graphs.lane_graph): `lane_probability` (x 255, >= 128 exactly on the lane mask)
and `drivable_margin` (128 + 16 x logit margin, > 128 exactly where drivable). This module turns
them into final lanes; lane_node runs it on its worker thread, and any client outside ROS can
call `postprocess` on what the ensemble returns. Plain numpy/OpenCV.

TwinLiteNet marks every painted line in one binary mask; it gives no lane list. Here:
1. the lane mask's connected components become *pieces*, each reduced to one centre x per
   image row (robust to line thickness);
2. pieces are grouped into lanes, longest first: a piece joins a lane when one low-order curve
   x = f(y) fits both with a small residual and they barely share rows, which reunites the
   dashes of a dashed marking (gaps and all) without merging neighbouring lines;
3. each lane gets a curve fit (a line, or a quadratic when it spans enough rows) and is sampled
   from where it meets the image border (extrapolated along the tangent below its lowest
   pixel) up to its highest pixel;
4. sides come from where each lane's extrapolation crosses the image bottom
   (triton_perception.lanes.lane_sides, shared by every lane model).

All geometry runs at mask resolution in continuous pixel coordinates (pixel (r, c) covers
[c, c+1) x [r, r+1)) and is scaled to the original image at the end.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import cast, NamedTuple

import cv2
import numpy as np
from numpy.typing import NDArray

from triton_perception.lanes.lane_sides import assign_sides, ego_eligible

MIN_PIECE_PIXELS = 8        # smaller mask blobs are speckle
JOIN_RMS_PIXELS = 3.0       # joint-fit residual (mask pixels) below which two pieces are one line
MAX_SHARED_ROWS = 3         # dashes of one line follow each other: they hardly share rows
QUADRATIC_MIN_SPAN = 0.25   # fraction of mask height a lane must span before it may curve


NUM_POINTS = 20          # points per lane polyline
LANE_MASK_MIN = 128      # lane_probability values on the lane mask
DRIVABLE_ZERO = 128      # drivable_margin value of a zero logit margin


class LaneResult(NamedTuple):
    """Final lanes, in original-image pixels."""

    lanes: NDArray[np.float32]  # [L, P, 2] (u, v), from the lane's bottom upward
    scores: NDArray[np.float32]  # [L], mean lane-line probability of the lane's pixels
    sides: NDArray[np.int8]  # [L], -2/-1/+1/+2 from the ego lane outward, 0 unknown
    drivable_area: NDArray[np.uint8] | None  # [H, W], 0 or 255; None: the model has none


@dataclass
class Piece:
    """One connected blob of the lane mask, reduced to row centres."""

    y: NDArray[np.float64]  # row centres (ascending), mask pixels
    x: NDArray[np.float64]  # centre x of the blob in each of those rows
    pixels: int
    probability_sum: float  # sum of lane-line probabilities over the blob's pixels


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


def check_settings(num_points: int, min_lane_length: float) -> None:
    """Reject values that would silently produce nonsense instead of an error."""
    if num_points < 2:
        raise ValueError(f'the number of points per lane must be >= 2, got {num_points}')
    if not 0.0 <= min_lane_length <= 1.0:
        raise ValueError(
            f'minimum lane length is a fraction of image height in [0, 1], got {min_lane_length}')


def lane_pieces(lane_probability: NDArray[np.uint8]) -> list[Piece]:
    """
    Find the connected components of the lane mask, as row-centre pieces.

    lane_probability: uint8 [h, w], probability x 255 (>= LANE_MASK_MIN on the mask).
    """
    height = lane_probability.shape[0]
    mask = (lane_probability >= LANE_MASK_MIN).view(np.uint8)  # a bool is one byte: 0 or 1
    # Grana's block-based scan, without the per-label statistics (bincount below gives the
    # areas): a quarter of the default's CPU on one thread, the same labels in raster order.
    count, labels = cv2.connectedComponentsWithAlgorithm(mask, 8, cv2.CV_32S, cv2.CCL_GRANA)
    # The mask's pixels in row-major order, as np.nonzero gives them, in a quarter of its time.
    points = cv2.findNonZero(mask)
    xs, ys = (points.reshape(-1, 2).T if points is not None
              else (np.empty(0, np.int32), np.empty(0, np.int32)))
    ids = labels[ys, xs]
    probability_sums = np.bincount(ids, weights=lane_probability[ys, xs], minlength=count) / 255.0
    # Label 0, the background, has no pixels in ids: no piece.
    return pieces_of(ids, ys, np.ones(len(ids)), xs.astype(np.float64), probability_sums,
                     height)


def pieces_of(labels: NDArray[np.int32 | np.int64], rows: NDArray[np.int32 | np.int64],
              pixels: NDArray[np.float64], x_sums: NDArray[np.float64],
              probability_sums: NDArray[np.float64], height: int) -> list[Piece]:
    """
    Pieces from labelled stretches of mask pixels (single pixels, or a row's runs).

    Stretch i lies in row rows[i], holds pixels[i] pixels whose columns sum to x_sums[i], and
    belongs to component labels[i]; probability_sums[label] is the component's total. Returns
    the pieces in label order, without components under MIN_PIECE_PIXELS (speckle).
    """
    count = len(probability_sums)
    areas = np.bincount(labels, weights=pixels, minlength=count)
    cells = labels * height + rows
    row_pixels = np.bincount(cells, weights=pixels, minlength=count * height).reshape(count,
                                                                                      height)
    row_x_sums = np.bincount(cells, weights=x_sums, minlength=count * height).reshape(count,
                                                                                      height)
    pieces = []
    for label in np.nonzero(areas >= MIN_PIECE_PIXELS)[0]:
        occupied = np.nonzero(row_pixels[label])[0]
        pieces.append(Piece(
            y=occupied + 0.5,
            x=row_x_sums[label, occupied] / row_pixels[label, occupied] + 0.5,
            pixels=int(areas[label]),
            probability_sum=float(probability_sums[label]),
        ))
    return pieces


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


def lane_sides(lanes: list[Lane], polylines: NDArray[np.float32], bottom_x: NDArray[np.float64],
               mask_width: int, mask_height: int) -> NDArray[np.int8]:
    """Side labels of sampled lanes (mask pixels), judged on their detected rows."""
    eligible = ego_eligible(list(polylines), bottom_x,
                            np.array([lane.y[0] for lane in lanes]),
                            np.array([lane.y[-1] for lane in lanes]), float(mask_width),
                            float(mask_height))
    return assign_sides(bottom_x, mask_width / 2, eligible)


def drivable_area(drivable_margin: NDArray[np.uint8], image_height: int,
                  image_width: int) -> NDArray[np.uint8]:
    """
    0/255 mask at input resolution.

    The margin is resized (not the binary mask) for smooth edges.
    """
    margin: NDArray[np.float32] = drivable_margin.astype(np.float32) - DRIVABLE_ZERO
    if margin.shape != (image_height, image_width):
        # OpenCV's stubs return any integer or float array; a float32 map stays float32.
        margin = cast(NDArray[np.float32], cv2.resize(
            margin, (image_width, image_height), interpolation=cv2.INTER_LINEAR))
    positive: NDArray[np.bool_] = margin > 0
    return positive.view(np.uint8) * np.uint8(255)  # a bool is one byte: 0 or 1


def check_maps(lane_probability: NDArray[np.uint8], drivable_margin: NDArray[np.uint8]) -> None:
    """Check the lane model's two maps: uint8, 2-D, the same size (a ValueError names the fault)."""
    for name, array in (('lane_probability', lane_probability),
                        ('drivable_margin', drivable_margin)):
        if array.dtype != np.uint8 or array.ndim != 2 or 0 in array.shape:
            raise ValueError(f'{name} must be a non-empty uint8 [h, w] map, got {array.dtype} '
                             f'{list(array.shape)}')
    if lane_probability.shape != drivable_margin.shape:
        raise ValueError(f'lane_probability {list(lane_probability.shape)} and drivable_margin '
                         f'{list(drivable_margin.shape)} differ in size')


def postprocess(lane_probability: NDArray[np.uint8], drivable_margin: NDArray[np.uint8],
                image_size: tuple[int, int], num_points: int,
                min_lane_length: float) -> LaneResult:
    """
    Turn the lane model's maps (uint8 [h, w] each) into lanes, scores, sides and drivable area.

    image_size is (image_height, image_width) of the original frame. min_lane_length is the
    vertical extent a lane's detected pixels must cover, as a fraction of image height.
    Lanes are returned left to right (by where they meet the image bottom).
    """
    check_settings(num_points, min_lane_length)
    check_maps(lane_probability, drivable_margin)
    image_height, image_width = (int(v) for v in image_size)
    mask_height, mask_width = lane_probability.shape
    return lanes_of_pieces(lane_pieces(lane_probability), (mask_height, mask_width), image_size,
                           num_points, min_lane_length)._replace(
        drivable_area=drivable_area(drivable_margin, image_height, image_width))


def lanes_of_pieces(pieces: list[Piece], mask_size: tuple[int, int],
                    image_size: tuple[int, int], num_points: int,
                    min_lane_length: float) -> LaneResult:
    """
    Group, fit and judge the mask's pieces (mask pixels) into lanes in image pixels.

    The part of the decoding that both the full maps and the graph's runs feed; no drivable
    area (None).
    """
    image_height, image_width = (int(v) for v in image_size)
    mask_height, mask_width = mask_size
    lanes = [lane for lane in group_pieces(pieces, mask_height)
             if lane.span >= min_lane_length * mask_height]
    polylines = np.empty((len(lanes), num_points, 2), dtype=np.float32)
    bottom_x = np.empty(len(lanes))
    for index, lane in enumerate(lanes):
        polylines[index], bottom_x[index] = sample_lane(lane, mask_width, mask_height, num_points)
    scores = np.array([sum(p.probability_sum for p in lane.pieces)
                       / sum(p.pixels for p in lane.pieces) for lane in lanes], dtype=np.float32)
    sides = lane_sides(lanes, polylines, bottom_x, mask_width, mask_height)

    order = np.argsort(bottom_x, kind='stable')
    polylines = polylines[order] * np.array([image_width / mask_width, image_height / mask_height],
                                            dtype=np.float32)
    return LaneResult(
        lanes=polylines,
        scores=scores[order],
        sides=sides[order],
        drivable_area=None,
    )
