"""
Lane scores (triton_perception.scoring.lanes) on hand-made lanes whose answers are worked out here.

CULane: the published evaluate tool draws lanes 30 px wide at 1640 px and matches them one to one
at mask IoU > 0.5. TuSimple: LaneEval.bench of the published lane.py (20 px / cos(angle) at the
h_samples rows, 85 % of a lane's points, at most 4 lanes counted).
"""
from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest
from scipy.interpolate import CubicSpline

from triton_perception.scoring.labels import LaneLabels
from triton_perception.scoring.lanes import (culane_ious, culane_lane_width, culane_resample,
                                             score_culane, score_tusimple, tusimple_bench,
                                             tusimple_x)

CULANE_SIZE = (1640, 590)


def vertical(x: float, top: float = 250.0, bottom: float = 580.0, points: int = 5) -> np.ndarray:
    """Return a vertical lane at `x` from row `bottom` up to row `top`, in `points` points."""
    return np.column_stack([np.full(points, x), np.linspace(bottom, top, points)])


def curve(offset: float = 0.0) -> np.ndarray:
    """Return a curved lane of five points, shifted right by `offset` px."""
    return np.array([[400.0, 589], [520, 480], [620, 400], [700, 330], [760, 280]]) + [offset, 0]


def test_identical_lanes_score_f1_one() -> None:
    """Published lanes identical to the labels score F1 1 on every frame, at a 30 px width."""
    labels = {1: [curve(), curve(500)], 2: [vertical(300)]}
    scores = score_culane(labels, {1: [curve(), curve(500)], 2: [vertical(300)]}, CULANE_SIZE)
    assert scores['F1'] == 1.0 and scores['precision'] == 1.0 and scores['recall'] == 1.0
    assert scores['per_frame_F1'] == {1: 1.0, 2: 1.0}
    assert scores['lane_width_px'] == 30 and scores['frame_width'] == 1640


def test_a_lane_shifted_by_more_than_the_width_does_not_match() -> None:
    """A lane 40 px from its label, more than the 30 px width, is a false positive and a miss."""
    scores = score_culane({1: [vertical(300)]}, {1: [vertical(340)]}, CULANE_SIZE)
    assert (scores['true_positives'], scores['false_positives'], scores['false_negatives']) == \
        (0, 1, 1)
    assert scores['F1'] == 0.0


def test_one_extra_prediction_gives_precision_two_thirds() -> None:
    """One published lane beyond the two labelled gives precision 2/3, recall 1."""
    scores = score_culane({1: [vertical(300), vertical(700)]},
                          {1: [vertical(302), vertical(698), vertical(1100)]}, CULANE_SIZE)
    assert scores['precision'] == pytest.approx(2 / 3)
    assert scores['recall'] == 1.0
    assert scores['F1'] == pytest.approx(2 * (2 / 3) / (2 / 3 + 1))


def test_matching_is_one_to_one() -> None:
    """Two published lanes on one labelled lane are one hit and one false positive."""
    # Two predictions on one labelled lane: one is a hit, the other a false positive.
    scores = score_culane({1: [vertical(300)]}, {1: [vertical(301), vertical(303)]}, CULANE_SIZE)
    assert (scores['true_positives'], scores['false_positives'], scores['false_negatives']) == \
        (1, 1, 0)


def test_the_width_scales_with_the_frame_width() -> None:
    """The lane width scales with the frame width: an 8 px shift matches at 1640 px, not at 820."""
    # Two 30 px wide vertical bands 8 px apart overlap by about 22/38 (a match); at half CULane's
    # width the lines are 15 px wide and overlap by about 7/23 (no match).
    assert culane_lane_width(820) == 15 and culane_lane_width(1280) == 23
    wide = score_culane({1: [vertical(300)]}, {1: [vertical(308)]}, CULANE_SIZE)
    narrow = score_culane({1: [vertical(300)]}, {1: [vertical(308)]}, (820, 590))
    assert wide['true_positives'] == 1 and narrow['true_positives'] == 0
    assert narrow['lane_width_px'] == 15


def test_iou_of_two_bands_is_their_overlap() -> None:
    """The IoU of two parallel vertical bands is their overlap over their union."""
    # Vertical bands: IoU is about (30 - shift) / (30 + shift) away from the round ends.
    for shift, expected in [(5, 25 / 35), (15, 15 / 45)]:
        iou = culane_ious([vertical(300, 100, 500)], [vertical(300 + shift, 100, 500)],
                          CULANE_SIZE, 30)[0, 0]
        assert iou == pytest.approx(expected, abs=0.03)


def test_a_frame_without_output_is_all_misses() -> None:
    """A labelled frame the pipeline published nothing for counts as all misses, and is counted."""
    scores = score_culane({1: [vertical(300)], 2: [vertical(300), vertical(700)]},
                          {1: [vertical(300)]}, CULANE_SIZE)
    assert scores['frames_without_output'] == 1
    assert (scores['true_positives'], scores['false_negatives']) == (1, 2)
    assert scores['per_frame_F1'] == {1: 1.0, 2: 0.0}


def test_resampling_is_a_natural_cubic_spline_over_chord_length() -> None:
    """
    Lanes are resampled as the CULane tool does: a natural cubic spline over chord length.

    Fifty points a segment; a lane of two points stays two points.
    """
    lane = curve()
    chords = np.hypot(*np.diff(lane, axis=0).T)
    knots = np.concatenate([[0.0], np.cumsum(chords)])
    spline = CubicSpline(knots, lane, bc_type='natural')
    at = (knots[:-1, None] + chords[:, None] * np.arange(50)[None, :] / 50).ravel()
    resampled = culane_resample(lane)
    assert len(resampled) == 4 * 50 + 1
    np.testing.assert_allclose(resampled[:-1], spline(at), atol=1e-9)
    np.testing.assert_array_equal(resampled[-1], lane[-1])
    # Two points stay two points, as in the tool.
    np.testing.assert_array_equal(culane_resample(lane[:2]), lane[:2])


def test_masks_equal_the_tools_per_segment_lines_on_the_whole_frame() -> None:
    """The masks drawn over each lane's own box give the IoU of cv2.line on the whole frame."""
    def whole_frame(lane: np.ndarray) -> np.ndarray:
        image = np.zeros(CULANE_SIZE[::-1], dtype=np.uint8)
        points = np.rint(culane_resample(lane)).astype(int)
        for start, end in zip(points[:-1], points[1:]):
            cv2.line(image, tuple(int(v) for v in start), tuple(int(v) for v in end), 1, 30)
        return image.astype(bool)
    # One lane runs off the frame's left and bottom edges.
    lanes = [curve(), curve(37) + [0, -12], np.array([[-80.0, 640], [60, 500], [200, 380]])]
    other = [curve(10), np.array([[-60.0, 620], [70, 495], [205, 370]])]
    ious = culane_ious(lanes, other, CULANE_SIZE, 30)
    for row, lane in enumerate(lanes):
        for column, predicted in enumerate(other):
            a, b = whole_frame(lane), whole_frame(predicted)
            expected = np.count_nonzero(a & b) / np.count_nonzero(a | b)
            assert ious[row, column] == pytest.approx(expected, abs=1e-12)


ROWS = np.arange(160.0, 720.0, 10.0)  # TuSimple's 56 h_samples


def tusimple_lane(x_at_bottom: float, slope: float = 0.0, first_row: float = 160.0) -> np.ndarray:
    """
    Return a TuSimple lane's x at every h_samples row, -2 above `first_row`.

    The lane meets the bottom row at `x_at_bottom` and moves `slope` px per row.
    """
    xs = x_at_bottom + slope * (ROWS - ROWS[-1])
    return np.where(ROWS >= first_row, xs, -2.0)


def test_tusimple_exact_lanes_score_one() -> None:
    """Exact lanes score accuracy 1 with no false positives or negatives in TuSimple's bench."""
    truth = [tusimple_lane(300), tusimple_lane(600)]
    assert tusimple_bench(truth, truth, ROWS) == (1.0, 0.0, 0.0)


def test_tusimple_point_threshold_is_20_px_on_an_upright_lane() -> None:
    """An upright lane's points match within 20 px: 19 px off is a hit, 21 px off a miss."""
    truth = [tusimple_lane(300)]
    assert tusimple_bench([tusimple_lane(319)], truth, ROWS) == (1.0, 0.0, 0.0)
    # 21 px off at every row: no point matches, the lane is missed and the prediction false.
    assert tusimple_bench([tusimple_lane(321)], truth, ROWS) == (0.0, 1.0, 1.0)


def test_tusimple_threshold_widens_by_the_lanes_angle() -> None:
    """The point threshold widens with the lane's angle: 20 / cos(45 deg) px on a diagonal lane."""
    # dx/dy = 1: 45 degrees, so points match within 20 / cos(45 deg) = 28.3 px.
    truth = [tusimple_lane(600, slope=1.0)]
    assert tusimple_bench([tusimple_lane(625, slope=1.0)], truth, ROWS) == (1.0, 0.0, 0.0)
    assert tusimple_bench([tusimple_lane(630, slope=1.0)], truth, ROWS) == (0.0, 1.0, 1.0)


def test_tusimple_lane_matches_at_85_percent_of_its_points() -> None:
    """A lane matches when 85 % of its points do: 48 of 56 rows is a hit, 47 a miss."""
    truth = [tusimple_lane(300)]
    # The prediction lacks the top rows: 48 of 56 rows agree (0.857, a match), then 47 (0.839).
    matched = tusimple_lane(300, first_row=ROWS[8])
    missed = tusimple_lane(300, first_row=ROWS[9])
    assert tusimple_bench([matched], truth, ROWS) == (pytest.approx(48 / 56), 0.0, 0.0)
    assert tusimple_bench([missed], truth, ROWS) == (pytest.approx(47 / 56), 1.0, 1.0)


def test_tusimple_rows_without_a_point_on_either_lane_agree() -> None:
    """Rows where neither lane has a point count as agreeing, as LaneEval counts them."""
    # LaneEval puts missing points at x = -100, so rows where both lack a point count as right.
    truth = [tusimple_lane(300, first_row=400)]
    assert tusimple_bench([tusimple_lane(300, first_row=400)], truth, ROWS) == (1.0, 0.0, 0.0)


def test_tusimple_lane_count_rules() -> None:
    """
    The lane count rules of TuSimple's bench hold.

    More than two predictions beyond the labelled lanes score the frame 0 with a miss; of five
    labelled lanes only four count; one hit and one false lane score a half each.
    """
    two = [tusimple_lane(300), tusimple_lane(600)]
    # More than two predictions beyond the labelled count: the frame scores (0, 0, 1).
    assert tusimple_bench(two + [tusimple_lane(x) for x in (100, 800, 1000)], two, ROWS) == \
        (0.0, 0.0, 1.0)
    # Five labelled lanes, four found: the miss is forgiven and the worst lane dropped.
    five = [tusimple_lane(x) for x in (100, 300, 500, 700, 900)]
    assert tusimple_bench(five[:4], five, ROWS) == (1.0, 0.0, 0.0)
    # Two labelled lanes, one found and one false: accuracy 1/2, FP 1/2, FN 1/2.
    assert tusimple_bench([two[0], tusimple_lane(1000)], two, ROWS) == (0.5, 0.5, 0.5)


def test_tusimple_samples_polylines_at_the_rows() -> None:
    """A polyline is sampled at the h_samples rows it spans, and -2 outside them."""
    polyline = np.array([[300.0, 700], [400, 400]])
    xs = tusimple_x(polyline, ROWS)
    assert xs[ROWS == 700][0] == pytest.approx(300.0)
    assert xs[ROWS == 550][0] == pytest.approx(350.0)
    assert (xs[ROWS < 400] == -2).all() and (xs[ROWS > 700] == -2).all()


def test_score_tusimple_averages_frames() -> None:
    """The TuSimple scores average over labelled frames; a frame without output is 0, a miss."""
    truth = {1: np.array([tusimple_lane(300), tusimple_lane(600)]),
             2: np.array([tusimple_lane(300)])}
    labels = LaneLabels(source=Path('labels.json'), form='tusimple',
                        frames={}, h_samples={1: ROWS, 2: ROWS}, tusimple_x=truth)
    exact = [np.column_stack([tusimple_lane(300), ROWS]), np.column_stack([tusimple_lane(600),
                                                                           ROWS])]
    scores = score_tusimple(labels, {1: exact})
    # Frame 1 perfect; frame 2 had no output: accuracy 0, FP 0, FN 1.
    assert scores['tusimple_accuracy'] == pytest.approx(0.5)
    assert scores['FP'] == 0.0 and scores['FN'] == pytest.approx(0.5)
    assert scores['frames_without_output'] == 1
    assert scores['per_frame_accuracy'] == {1: 1.0, 2: 0.0}
