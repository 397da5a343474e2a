"""
Ego lines that do not jump.

The side rules (triton_perception.lanes.lane_sides) on drawn cases, and on the whole highway clip as
lane_node serves it (in-process, the served graph and geometry).
"""
from __future__ import annotations

import cv2
import numpy as np
import pytest

from support.checkout import REPO, shared_path
from triton_perception.bench.references import lane_reference
from triton_perception.lanes.lane_sides import assign_sides, bottom_x, ego_eligible, x_at

ROWS = (1.0, 0.8, 0.7)      # fractions of the frame height where the ego lines are compared
NEIGHBOURS = 3              # frames either side whose median an ego line must stay near
MAX_JUMP_PX = 20.0


def line(x_bottom: float, slope: float, top: float, low: float, height: float = 360.0
         ) -> np.ndarray:
    """Points of x = x_bottom + slope * (height - y), from row `low` up to row `top`."""
    ys = np.linspace(low, top, 10)
    return np.stack([x_bottom + slope * (height - ys), ys], axis=1)


def test_a_fragment_crossing_a_longer_line_takes_no_side() -> None:
    """A fragment crossing a longer line takes no side: it would otherwise replace the ego line."""
    ego_left = line(100, 1.5, 200, 360)
    fragment = line(130, 0.2, 240, 340)  # right of ego-left at the bottom, left of it above
    polylines = [ego_left, fragment]
    bottoms = np.array([bottom_x(p, 360) for p in polylines])
    eligible = ego_eligible(polylines, bottoms, np.array([200.0, 240]), np.array([360.0, 340]),
                            640, 360)
    assert eligible.tolist() == [True, False]
    assert assign_sides(bottoms, 320, eligible).tolist() == [-1, 0]


def test_a_short_piece_far_up_takes_no_side_by_extrapolation_alone() -> None:
    """A short piece far up takes no side when only its extrapolation comes near the centre."""
    ego_left = line(100, 1.5, 200, 360)
    far_piece = line(250, 0.3, 210, 240)  # 30 rows seen, 120 extrapolated: nearer the centre
    polylines = [ego_left, far_piece]
    bottoms = np.array([bottom_x(p, 360) for p in polylines])
    eligible = ego_eligible(polylines, bottoms, np.array([200.0, 210]), np.array([360.0, 240]),
                            640, 360)
    assert eligible.tolist() == [True, False]
    assert assign_sides(bottoms, 320, eligible).tolist() == [-1, 0]


def test_a_steep_line_leaving_through_a_side_is_not_extrapolated_past_it() -> None:
    """A steep line leaving through a side stays eligible: it is not extrapolated past the edge."""
    steep = line(-300, 3.0, 200, 250)  # leaves the left edge at row 260: 10 rows extrapolated
    bottoms = np.array([bottom_x(steep, 360)])
    assert ego_eligible([steep], bottoms, np.array([200.0]), np.array([250.0]), 640,
                        360).tolist() == [True]


@pytest.fixture(scope='module')
def clip_ego_lines(triton_server) -> dict[int, np.ndarray]:
    """Per side (-1, +1): [frames, len(ROWS)] x of the served ego line (NaN where absent)."""
    detect = lane_reference(REPO / 'model_repository')
    capture = cv2.VideoCapture(str(shared_path('data', 'videos', 'solidWhiteRight.mp4')))
    per_side: dict[int, list[list[float]]] = {-1: [], 1: []}
    while True:
        ok, bgr = capture.read()
        if not ok:
            break
        height = bgr.shape[0]
        result = detect(cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB))
        for side, values in per_side.items():
            index = np.nonzero(result.sides == side)[0]
            values.append([x_at(result.lanes[index[0]], min(row * height, height - 0.5))
                           if index.size else np.nan for row in ROWS])
    capture.release()
    return {side: np.array(values) for side, values in per_side.items()}


@pytest.mark.slow
def test_ego_lines_stay_near_their_neighbours_on_the_whole_clip(
        clip_ego_lines: dict[int, np.ndarray]) -> None:
    """
    On every frame of the clip, each ego line stays within MAX_JUMP_PX of its neighbours' median.

    An ego line that jumps from frame to frame is of no use to a controller.
    """
    jumps = []
    for side, xs in clip_ego_lines.items():
        assert len(xs) == 221
        assert np.isnan(xs[:, 0]).sum() <= 5, f'side {side} missing on too many frames'
        for frame in range(len(xs)):
            window = xs[max(0, frame - NEIGHBOURS):frame + NEIGHBOURS + 1]
            with np.errstate(all='ignore'):
                deviation = np.abs(xs[frame] - np.nanmedian(window, axis=0))
            if np.nanmax(np.nan_to_num(deviation, nan=0.0)) > MAX_JUMP_PX:
                jumps.append((frame, side, np.round(xs[frame]).tolist()))
    assert not jumps, f"ego lines off their neighbours' median by > {MAX_JUMP_PX} px: {jumps}"
