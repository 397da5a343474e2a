"""
Lane accuracy by the CULane and TuSimple benchmarks' rules.

CULane follows its published `evaluate` tool (SCNN's tools/lane_evaluation, as shipped with
Ultra-Fast-Lane-Detection's evaluation/culane: lane_compare.cpp, spline.cpp, counter.cpp): a
lane of more than two points is resampled by a natural cubic spline over chord length, 50
points per segment; each lane is drawn with cv2 lines of the lane width on an image of the frame
size; a predicted and a labelled lane's IoU is that of their masks; lanes are matched one to one
maximising the summed IoU (Hungarian), and a pair is a true positive when its IoU is above the
threshold. The width is 30 px at CULane's 1640 px wide frames, scaled by the frame's width.

TuSimple follows LaneEval.bench of its published lane.py (tusimple-benchmark evaluate/lane.py):
a labelled lane's points match where a prediction's x lies within 20 px / cos(angle of the
labelled lane) at the h_samples rows, a lane matches when 85 % of its points do, and the
per-frame accuracy, FP and FN rates are averaged over the frames. Its run-time rule (a frame
slower than 200 ms scores 0) is left out: a replay has no per-frame run time of that benchmark.
"""
from __future__ import annotations

from typing import Mapping, Sequence, TypedDict

import cv2
import numpy as np
from numpy.typing import NDArray
from scipy.optimize import linear_sum_assignment

from triton_perception.scoring.labels import LaneLabels

CULANE_LANE_WIDTH_PX = 30
CULANE_FRAME_WIDTH_PX = 1640
CULANE_IOU = 0.5
# Points the CULane tool draws per spline segment (splineInterpTimes(lane, 50)).
SPLINE_STEPS = 50
TUSIMPLE_PIXEL_THRESH = 20.0
TUSIMPLE_POINT_THRESH = 0.85
# TuSimple's line_accuracy puts a missing point at this x, so two missing points agree.
TUSIMPLE_MISSING_X = -100.0

FrameSize = tuple[int, int]
# A lane's [N, 2] (x, y) frame pixels: float32 as published, float64 as labelled.
Points = NDArray[np.float32 | np.float64]


class CulaneFigures(TypedDict):
    """A replay's lane accuracy by CULane's rules, as report.json lists it."""

    F1: float
    precision: float
    recall: float
    true_positives: int
    false_positives: int
    false_negatives: int
    frames: int
    frames_without_output: int
    lane_width_px: int  # what the lanes were drawn with
    frame_width: int
    frame_height: int
    iou_threshold: float


class CulaneScores(CulaneFigures, total=False):
    """The figures and each labelled frame's F1 (frame -> F1)."""

    per_frame_F1: dict[int, float]


class TusimpleFigures(TypedDict):
    """TuSimple's accuracy, FP and FN rates, averaged over the frames."""

    tusimple_accuracy: float
    FP: float
    FN: float
    frames: int
    frames_without_output: int


class TusimpleScores(TusimpleFigures, total=False):
    """The figures and each labelled frame's accuracy (frame -> accuracy)."""

    per_frame_accuracy: dict[int, float]


def culane_lane_width(frame_width: int) -> int:
    """Return CULane's 30 px lane width scaled from its 1640 px frames to `frame_width`."""
    return max(1, int(round(CULANE_LANE_WIDTH_PX * frame_width / CULANE_FRAME_WIDTH_PX)))


def culane_resample(lane: Points) -> NDArray[np.float64]:
    """
    Resample a lane as CULane's tool does before drawing it.

    Two points stay as they are; more get a natural cubic spline in x and y over the chord
    length, sampled 50 times per segment plus the last point. Repeated consecutive points are
    dropped first (the tool would divide by their zero chord).
    """
    points = np.asarray(lane, dtype=np.float64).reshape(-1, 2)
    if len(points) > 1:
        keep = np.concatenate([[True], np.any(np.diff(points, axis=0) != 0, axis=1)])
        points = points[keep]
    if len(points) <= 2:
        return points
    # The tool's cal_fun: second derivatives M of a natural spline (M = 0 at both ends) from
    # its tridiagonal system, solved as it does (Thomas algorithm), for x and y at once.
    steps = np.diff(points, axis=0)
    chords = np.hypot(steps[:, 0], steps[:, 1])
    slopes = steps / chords[:, None]
    h = chords.tolist()
    right = (6.0 * (slopes[1:] - slopes[:-1])).tolist()
    upper = [0.0] * len(right)
    for row in range(len(right)):
        below = h[row] if row else 0.0
        pivot = 2.0 * (h[row] + h[row + 1]) - (below * upper[row - 1] if row else 0.0)
        upper[row] = h[row + 1] / pivot
        previous = right[row - 1] if row else [0.0, 0.0]
        right[row] = [(right[row][axis] - below * previous[axis]) / pivot for axis in (0, 1)]
    moments = np.zeros_like(points)
    for row in range(len(right) - 1, -1, -1):
        following = moments[row + 2] if row + 1 < len(right) else (0.0, 0.0)
        moments[row + 1] = [right[row][axis] - upper[row] * following[axis] for axis in (0, 1)]
    linear = slopes - chords[:, None] * (2.0 * moments[:-1] + moments[1:]) / 6.0
    square = moments[:-1] / 2.0
    cubic = (moments[1:] - moments[:-1]) / (6.0 * chords[:, None])
    t = (chords[:, None] * (np.arange(SPLINE_STEPS) / SPLINE_STEPS)[None, :])[..., None]
    samples = (points[:-1, None, :] + linear[:, None, :] * t + square[:, None, :] * t ** 2
               + cubic[:, None, :] * t ** 3)
    return np.concatenate([samples.reshape(-1, 2), points[-1:]])


def lane_mask(lane: Points, frame_size: FrameSize,
              width: int) -> tuple[NDArray[np.bool_], int, int]:
    """
    Return a lane's drawn mask over its own box in the frame, with the box's left and top.

    Drawing only the box the lane can reach gives the pixels drawing on the whole frame gives:
    cv2 clips at the frame's edges either way. Repeated rounded points are dropped, which draws
    the same pixels with fewer segments.
    """
    frame_width, frame_height = frame_size
    points = np.rint(culane_resample(lane)).astype(np.int64)
    if len(points) > 1:
        points = points[np.concatenate([[True], np.any(np.diff(points, axis=0) != 0, axis=1)])]
    if not len(points):
        return np.zeros((0, 0), dtype=bool), 0, 0
    margin = width + 2
    low, high = points.min(axis=0).tolist(), points.max(axis=0).tolist()
    left = min(max(low[0] - margin, 0), frame_width)
    right = min(max(high[0] + margin + 1, 0), frame_width)
    top = min(max(low[1] - margin, 0), frame_height)
    bottom = min(max(high[1] + margin + 1, 0), frame_height)
    canvas = np.zeros((max(bottom - top, 0), max(right - left, 0)), dtype=np.uint8)
    if canvas.size:
        # cv2 takes 32-bit coordinates: points far off the frame are pulled in along their side.
        limit = 1 << 20
        shifted = np.clip(points - [left, top], -limit, limit).astype(np.int32)
        cv2.polylines(canvas, [shifted.reshape(-1, 1, 2)], False, (1,), thickness=width,
                      lineType=cv2.LINE_8)
    return canvas.view(bool), left, top


def culane_ious(truth: Sequence[Points], predicted: Sequence[Points],
                frame_size: FrameSize, width: int) -> NDArray[np.float64]:
    """Return the [truth, predicted] IoU of the lanes' drawn masks (CULane's similarity)."""
    truth_masks = [lane_mask(lane, frame_size, width) for lane in truth]
    predicted_masks = [lane_mask(lane, frame_size, width) for lane in predicted]
    truth_areas = [np.count_nonzero(mask) for mask, _, _ in truth_masks]
    predicted_areas = [np.count_nonzero(mask) for mask, _, _ in predicted_masks]
    ious = np.zeros((len(truth), len(predicted)))
    for row, (mask_a, left_a, top_a) in enumerate(truth_masks):
        for column, (mask_b, left_b, top_b) in enumerate(predicted_masks):
            left = max(left_a, left_b)
            right = min(left_a + mask_a.shape[1], left_b + mask_b.shape[1])
            top = max(top_a, top_b)
            bottom = min(top_a + mask_a.shape[0], top_b + mask_b.shape[0])
            if right <= left or bottom <= top:
                continue
            intersection = np.count_nonzero(
                mask_a[top - top_a:bottom - top_a, left - left_a:right - left_a]
                & mask_b[top - top_b:bottom - top_b, left - left_b:right - left_b])
            union = truth_areas[row] + predicted_areas[column] - intersection
            ious[row, column] = intersection / union if union else 0.0
    return ious


def culane_pairs(truth: Sequence[Points], predicted: Sequence[Points],
                 frame_size: FrameSize, width: int,
                 iou_threshold: float = CULANE_IOU) -> list[tuple[int, int]]:
    """Return the (truth, predicted) index pairs CULane's one-to-one matching counts as TP."""
    if not len(truth) or not len(predicted):
        return []
    ious = culane_ious(truth, predicted, frame_size, width)
    # The tool gives a lane of fewer than two points no similarity to anything.
    ious[[len(lane) < 2 for lane in truth], :] = 0.0
    ious[:, [len(lane) < 2 for lane in predicted]] = 0.0
    rows, columns = linear_sum_assignment(ious, maximize=True)
    return [(int(row), int(column)) for row, column in zip(rows, columns)
            if ious[row, column] > iou_threshold]


def culane_counts(truth: Sequence[Points], predicted: Sequence[Points],
                  frame_size: FrameSize, width: int,
                  iou_threshold: float = CULANE_IOU) -> tuple[int, int, int]:
    """Return one frame's (TP, FP, FN) by CULane's one-to-one matching of lanes."""
    true_positives = len(culane_pairs(truth, predicted, frame_size, width, iou_threshold))
    return true_positives, len(predicted) - true_positives, len(truth) - true_positives


def f1_of(true_positives: int, false_positives: int, false_negatives: int) -> float:
    """Return F1 = 2 TP / (2 TP + FP + FN); 1.0 on a frame with neither lanes nor predictions."""
    denominator = 2 * true_positives + false_positives + false_negatives
    return 2.0 * true_positives / denominator if denominator else 1.0


def lanes_of(labels: LaneLabels | Mapping[int, Sequence[Points]]
             ) -> Mapping[int, Sequence[Points]]:
    """Return the frame -> lanes mapping of LaneLabels or of a mapping itself."""
    return labels.frames if isinstance(labels, LaneLabels) else labels


def score_culane(labels: LaneLabels | Mapping[int, Sequence[Points]],
                 predictions: Mapping[int, Sequence[Points]], frame_size: FrameSize,
                 iou_threshold: float = CULANE_IOU) -> CulaneScores:
    """
    Score published lanes against labelled lanes by the CULane protocol.

    `labels` maps each labelled frame to its lanes (or is LaneLabels); `predictions` maps frames
    to the published lanes, each lane an [N, 2] array of (x, y) frame pixels; `frame_size` is
    the frames' (width, height). A labelled frame missing from `predictions` had no output: its
    lanes are all misses (counted in `frames_without_output`). Returns F1, precision, recall,
    the TP/FP/FN counts, per_frame_F1, and the lane_width_px and frame size used.
    """
    truth_of = lanes_of(labels)
    width = culane_lane_width(frame_size[0])
    totals = np.zeros(3, dtype=np.int64)
    per_frame = {}
    for frame in sorted(truth_of):
        counts = culane_counts(truth_of[frame], predictions.get(frame, []), frame_size, width,
                               iou_threshold)
        totals += counts
        per_frame[frame] = f1_of(*counts)
    true_positives, false_positives, false_negatives = (int(value) for value in totals)
    predicted, labelled = true_positives + false_positives, true_positives + false_negatives
    return {
        'F1': f1_of(true_positives, false_positives, false_negatives) if predicted + labelled
        else 0.0,
        'precision': true_positives / predicted if predicted else 0.0,
        'recall': true_positives / labelled if labelled else 0.0,
        'true_positives': true_positives, 'false_positives': false_positives,
        'false_negatives': false_negatives,
        'per_frame_F1': per_frame,
        'frames': len(per_frame),
        'frames_without_output': sum(1 for frame in truth_of if frame not in predictions),
        'lane_width_px': width, 'frame_width': int(frame_size[0]),
        'frame_height': int(frame_size[1]), 'iou_threshold': iou_threshold,
    }


def tusimple_x(lane: Points, h_samples: Points) -> NDArray[np.float64]:
    """
    Return a polyline's x at the h_samples rows, -2 where it has no point (TuSimple's form).

    x is interpolated linearly between the polyline's points (sorted by y); rows above or below
    the polyline, and points left of the frame (x < 0), have none.
    """
    points = np.asarray(lane, dtype=np.float64).reshape(-1, 2)
    rows = np.asarray(h_samples, dtype=np.float64)
    result = np.full(len(rows), -2.0)
    if len(points) == 0:
        return result
    order = np.argsort(points[:, 1], kind='stable')
    ys, xs = points[order, 1], points[order, 0]
    inside = (rows >= ys[0]) & (rows <= ys[-1])
    result[inside] = np.interp(rows[inside], ys, xs)
    result[result < 0] = -2.0
    return result


def tusimple_angle(xs: NDArray[np.float64], h_samples: NDArray[np.float64]) -> float:
    """Return the angle of LaneEval.get_angle: arctan of the least-squares slope dx/dy."""
    valid = xs >= 0
    if np.count_nonzero(valid) <= 1:
        return 0.0
    ys, lane_xs = h_samples[valid], xs[valid]
    spread = ys - ys.mean()
    denominator = float(spread @ spread)
    slope = float(spread @ (lane_xs - lane_xs.mean())) / denominator if denominator else 0.0
    return float(np.arctan(slope))


def tusimple_line_accuracy(predicted: NDArray[np.float64], truth: NDArray[np.float64],
                           thresh: float) -> float:
    """Return LaneEval.line_accuracy: the share of rows where the x values agree within thresh."""
    predicted = np.where(predicted >= 0, predicted, TUSIMPLE_MISSING_X)
    truth = np.where(truth >= 0, truth, TUSIMPLE_MISSING_X)
    return float(np.count_nonzero(np.abs(predicted - truth) < thresh)) / len(truth)


def tusimple_bench(predicted: Sequence[NDArray[np.float64]], truth: Sequence[NDArray[np.float64]],
                   h_samples: NDArray[np.float64]) -> tuple[float, float, float]:
    """
    Return one frame's (accuracy, FP, FN) as TuSimple's LaneEval.bench computes them.

    Each lane is its x at the h_samples rows (negative: no point). As there: more than two
    predicted lanes beyond the labelled count score (0, 0, 1); with more than 4 labelled lanes
    one miss is forgiven and the worst lane's accuracy dropped; the rates are per
    min(4, labelled lanes) and per predicted lane.
    """
    rows = np.asarray(h_samples, dtype=np.float64)
    if any(len(lane) != len(rows) for lane in predicted):
        raise ValueError('a predicted lane has not one x per h_samples row')
    if len(truth) + 2 < len(predicted):
        return 0.0, 0.0, 1.0
    line_accuracies = []
    false_negatives, matched = 0.0, 0.0
    for truth_x in truth:
        thresh = TUSIMPLE_PIXEL_THRESH / np.cos(tusimple_angle(np.asarray(truth_x), rows))
        accuracies = [tusimple_line_accuracy(np.asarray(lane), np.asarray(truth_x), thresh)
                      for lane in predicted]
        best = max(accuracies) if accuracies else 0.0
        if best < TUSIMPLE_POINT_THRESH:
            false_negatives += 1
        else:
            matched += 1
        line_accuracies.append(best)
    false_positives = len(predicted) - matched
    if len(truth) > 4 and false_negatives > 0:
        false_negatives -= 1
    total = sum(line_accuracies)
    if len(truth) > 4:
        total -= min(line_accuracies)
    return (total / max(min(4.0, len(truth)), 1.0),
            false_positives / len(predicted) if len(predicted) > 0 else 0.0,
            false_negatives / max(min(len(truth), 4.0), 1.0))


def score_tusimple(labels: LaneLabels,
                   predictions: Mapping[int, Sequence[Points]]) -> TusimpleScores:
    """
    Score published lanes against TuSimple labels by LaneEval.bench, averaged over frames.

    `predictions` maps frames to the published lanes ([N, 2] arrays of (x, y) frame pixels),
    sampled at each frame's h_samples rows (tusimple_x). A labelled frame missing from
    `predictions` had no output and is scored as a frame without lanes (counted in
    `frames_without_output`). Returns tusimple_accuracy, FP and FN (means of the per-frame
    figures, as the benchmark's bench_one_submit) and per_frame_accuracy.
    """
    if labels.form != 'tusimple':
        raise ValueError(f'{labels.source}: TuSimple scoring needs TuSimple labels (h_samples), '
                         f'these are {labels.form}')
    per_frame = {}
    totals = np.zeros(3)
    for frame in sorted(labels.tusimple_x):
        rows = labels.h_samples[frame]
        predicted = [tusimple_x(lane, rows) for lane in predictions.get(frame, [])]
        result = tusimple_bench(predicted, list(labels.tusimple_x[frame]), rows)
        totals += result
        per_frame[frame] = result[0]
    count = max(len(per_frame), 1)
    return {
        'tusimple_accuracy': float(totals[0] / count), 'FP': float(totals[1] / count),
        'FN': float(totals[2] / count), 'per_frame_accuracy': per_frame,
        'frames': len(per_frame),
        'frames_without_output': sum(1 for frame in per_frame if frame not in predictions),
    }
