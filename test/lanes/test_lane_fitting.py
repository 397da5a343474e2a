"""Lane fits from power sums: the least-squares fits of the points, joined sets, sampled lanes."""
from __future__ import annotations

import numpy as np
import pytest

from triton_perception.lanes.lane_fitting import (fit, group, join_rms, point_sets,
                                                  QUADRATIC_MIN_SPAN, sample)
from triton_perception.lanes.run_decoding import postprocess_runs

MASK = (360, 640)  # height, width


def one_set(y: np.ndarray, x: np.ndarray) -> list:
    """Return the point set of one piece with points (y, x)."""
    return point_sets(np.zeros(len(y), np.int64), y, x, 1, MASK)


@pytest.mark.parametrize('degree, rows', [(1, (200, 260)), (2, (100, 340)), (0, (150, 151))])
def test_fit_is_the_least_squares_fit_of_the_points(degree: int, rows: tuple[int, int]) -> None:
    """Coefficients and residual equal numpy's polynomial fit of the same points."""
    generator = np.random.default_rng(degree)
    y = np.arange(*rows) + 0.5
    x = 300 + 0.4 * (y - 200) + 0.002 * (y - 200) ** 2 + generator.normal(0, 1.5, len(y))
    points = one_set(y, x)[0]
    found = fit(points, MASK[0])
    expected = np.polyfit(y, x, degree)
    fitted = np.polyval(expected, y)
    half = MASK[0] / 2
    t = (y - half) / half
    c2, c1, c0 = found.coefficients
    np.testing.assert_allclose((c2 * t + c1) * t + c0 + MASK[1] / 2, fitted, atol=1e-8)
    assert found.residual == pytest.approx(float(np.sum((fitted - x) ** 2)), rel=1e-7, abs=1e-7)
    assert (c2 != 0.0) == (degree == 2)
    assert (rows[1] - rows[0] >= QUADRATIC_MIN_SPAN * MASK[0]) == (degree == 2)


def test_two_rows_far_apart_give_a_line() -> None:
    """Points in two rows only determine a line, however far apart the rows are."""
    y = np.array([10.5, 10.5, 300.5, 300.5])
    x = np.array([100.0, 102.0, 250.0, 252.0])
    assert fit(one_set(y, x)[0], MASK[0]).coefficients[0] == 0.0


def test_joined_sets_are_the_set_of_all_points() -> None:
    """Sums, extremes and rows of two joined pieces equal those of their points together."""
    y = np.concatenate([np.arange(100, 140) + 0.5, np.arange(160, 200) + 0.5])
    x = 200 + 0.3 * y
    members = np.repeat([0, 1], 40)
    first, second = point_sets(members, y, x, 2, MASK)
    together = one_set(y, x)[0]
    joined = first.joined(second)
    np.testing.assert_allclose(joined.sums, together.sums)
    assert (joined.low, joined.high, joined.rows) == (together.low, together.high, together.rows)
    assert join_rms(first, second, MASK[0]) == pytest.approx(0.0, abs=1e-4)  # rounding


def test_group_joins_dashes_and_keeps_neighbours_apart() -> None:
    """Three dashes of one line become one lane; a parallel line 60 px away stays its own."""
    dashes = [np.arange(start, start + 30) + 0.5 for start in (100, 160, 220)]
    y = np.concatenate([*dashes, np.arange(100, 250) + 0.5])
    x = np.concatenate([200 + 0.5 * dash for dash in dashes] + [260 + 0.5 * y[90:]])
    members = np.repeat([0, 1, 2, 3], [30, 30, 30, 150])
    lanes = group(point_sets(members, y, x, 4, MASK), MASK[0])
    assert sorted(sorted(lane) for lane in lanes) == [[0, 1, 2], [3]]


def test_sample_follows_the_line_and_its_tangent_to_the_border() -> None:
    """A straight lane is sampled on its line from the bottom row up to its top row."""
    y = np.arange(150, 300) + 0.5
    x = 100 + 0.5 * y
    polylines, bottom_x = sample(one_set(y, x), MASK, 20)
    assert polylines.shape == (1, 20, 2)
    assert bottom_x[0] == pytest.approx(100 + 0.5 * MASK[0])
    np.testing.assert_allclose(polylines[0, :, 0], 100 + 0.5 * polylines[0, :, 1], atol=1e-3)
    assert polylines[0, 0, 1] == pytest.approx(MASK[0]) and polylines[0, -1, 1] == y[0]


def test_sample_stops_where_the_tangent_leaves_through_a_side() -> None:
    """A steep lane leaving through the left edge ends there, not at the bottom row."""
    y = np.arange(100, 200) + 0.5
    x = 300 - 2.0 * (y - 100)  # reaches x = 0 at y = 250
    polylines, bottom_x = sample(one_set(y, x), MASK, 20)
    assert bottom_x[0] < 0
    assert polylines[0, 0, 1] == pytest.approx(250.0, abs=0.5)
    assert polylines[0, 0, 0] == pytest.approx(0.0, abs=1.0)


def test_vertical_lanes_beyond_the_mask_width_stay_within_the_frame() -> None:
    """
    Straight vertical runs at a frame's columns past the mask's width give lanes in the frame.

    The runs of a model whose mask is the frame's size, read as a 640-wide mask: the right line
    lies beyond the mask, and its slope is of rounding size.
    """
    for height, width in ((540, 960), (720, 1280)):
        runs = np.zeros((height, 16, 3), dtype=np.int32)
        for slot, column in enumerate((int(width * 0.3), int(width * 0.7))):
            runs[height // 2:, slot] = (column - 1, column + 2, 230 * 3)
        counts = np.zeros(height, dtype=np.int32)
        counts[height // 2:] = 2
        lanes = postprocess_runs(runs, counts, None, 640, (height, width), 20, 0.1).lanes
        assert len(lanes) == 2 and np.all(np.isfinite(lanes))
        assert lanes[..., 1].max() <= height and lanes[..., 0].max() <= width
