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
   steps 2 and 3 work on each piece's power sums (triton_perception.lanes.lane_fitting), not
   its points;
4. sides come from where each lane's extrapolation crosses the image bottom
   (triton_perception.lanes.lane_sides, shared by every lane model).

All geometry runs at mask resolution in continuous pixel coordinates (pixel (r, c) covers
[c, c+1) x [r, r+1)) and is scaled to the original image at the end.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import reduce
from typing import cast, NamedTuple

import cv2
import numpy as np
from numpy.typing import NDArray

from triton_perception.lanes.lane_fitting import group, point_sets, PointSet, sample
from triton_perception.lanes.lane_sides import assign_sides, ego_eligible

MIN_PIECE_PIXELS = 8        # smaller mask blobs are speckle


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
    kept = np.nonzero(areas >= MIN_PIECE_PIXELS)[0]
    piece_rows = row_pixels[kept]
    members, occupied = np.nonzero(piece_rows)  # by piece, then row: ascending rows
    y = occupied + 0.5
    x = row_x_sums[kept][members, occupied] / piece_rows[members, occupied] + 0.5
    bounds = np.cumsum(np.bincount(members, minlength=len(kept)))[:-1]
    return [Piece(y=piece_y, x=piece_x, pixels=int(area), probability_sum=float(total))
            for piece_y, piece_x, area, total in zip(
                np.split(y, bounds), np.split(x, bounds), areas[kept].tolist(),
                probability_sums[kept].tolist())]


def lane_sides(polylines: NDArray[np.float32], bottom_x: NDArray[np.float64],
               tops: NDArray[np.float64], lows: NDArray[np.float64], mask_width: int,
               mask_height: int) -> NDArray[np.int8]:
    """Side labels of sampled lanes (mask pixels), judged on their detected rows tops..lows."""
    eligible = ego_eligible(list(polylines), bottom_x, tops, lows, float(mask_width),
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
    area (None). Lanes are returned left to right (by where they meet the image bottom).
    """
    image_height, image_width = (int(v) for v in image_size)
    mask_height, mask_width = mask_size
    sets = point_sets(np.repeat(np.arange(len(pieces)), [len(p.y) for p in pieces]),
                      np.concatenate([p.y for p in pieces] or [np.empty(0)]),
                      np.concatenate([p.x for p in pieces] or [np.empty(0)]), len(pieces),
                      mask_size)
    grouped = group(sets, mask_height)
    joined = [reduce(PointSet.joined, (sets[i] for i in members)) for members in grouped]
    kept = [index for index, lane in enumerate(joined)
            if lane.high - lane.low >= min_lane_length * mask_height]
    lanes = [joined[index] for index in kept]
    polylines, bottom_x = sample(lanes, mask_size, num_points)
    scores = np.array([sum(pieces[i].probability_sum for i in grouped[index])
                       / sum(pieces[i].pixels for i in grouped[index]) for index in kept],
                      dtype=np.float32)
    sides = lane_sides(polylines, bottom_x, np.array([lane.low for lane in lanes]),
                       np.array([lane.high for lane in lanes]), mask_width, mask_height)
    order = np.argsort(bottom_x, kind='stable')
    polylines = polylines[order] * np.array([image_width / mask_width, image_height / mask_height],
                                            dtype=np.float32)
    return LaneResult(lanes=polylines, scores=scores[order], sides=sides[order],
                      drivable_area=None)
