"""
The lane chain without a server.

The served lane graph (built from the shipped weights, run with onnxruntime; it takes the frame
itself and resizes it) and the package's lane geometry.

Synthetic lane masks pin down grouping, ordering and sides; real frames check that the served
maps give the lanes the float heads gave (test/support/reference_lanes.py) and that the whole
chain finds the ego lane where the shared models README says it is.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import cv2
import numpy as np
import pytest

from support import reference_lanes
from support.checkout import shared_path
from support.highway_clip import has_ego_lanes, read_clip
from support.served_graphs import make_lane_detector, NUM_POINTS, session
from triton_perception.frames import frame_preprocessing as preprocessing
from triton_perception.graphs.lane_graph import MARGIN_SCALE
from triton_perception.lanes import lane_geometry as geometry
from triton_perception.lanes.lane_sides import assign_sides

MASK_HEIGHT, MASK_WIDTH = 360, 640
VANISHING_POINT = (320.0, 180.0)


def to_map(mask: np.ndarray) -> np.ndarray:
    """Return the lane model's uint8 probability map of a mask (probability 1/(1+e^-5) inside)."""
    return np.where(mask, np.uint8(round(255 / (1 + np.exp(-5.0)))),
                    np.uint8(round(255 / (1 + np.exp(5.0))))).astype(np.uint8)


def to_margin(mask: np.ndarray) -> np.ndarray:
    """Return the lane model's uint8 drivable margin of a mask (logit margin +-5 inside/outside)."""
    return np.where(mask, np.uint8(128 + 5 * MARGIN_SCALE),
                    np.uint8(128 - 5 * MARGIN_SCALE)).astype(np.uint8)


def line_x(bottom_x: float, y: float) -> float:
    """X at row y of a straight lane through the vanishing point meeting the bottom at bottom_x."""
    vx, vy = VANISHING_POINT
    return vx + (bottom_x - vx) * (y - vy) / (MASK_HEIGHT - vy)


def draw_lane(mask: np.ndarray, bottom_x: float, y_top: float = 200.0,
              y_bottom: float = MASK_HEIGHT, thickness: int = 4) -> None:
    """
    Draw a straight lane through the vanishing point into `mask`, from row `y_top` to `y_bottom`.

    `bottom_x` is where the lane, extended, meets the mask's bottom row.
    """
    start = (round(line_x(bottom_x, y_top)), round(y_top))
    end = (round(line_x(bottom_x, y_bottom)), round(y_bottom))
    cv2.line(mask, start, end, 1, thickness)


def draw_dashed_lane(mask: np.ndarray, bottom_x: float) -> None:
    """Five dashes with gaps as long as the dashes, like a real broken lane marking."""
    for y0 in (196, 228, 260, 292, 324):
        draw_lane(mask, bottom_x, y0, y0 + 16)


def run(mask: np.ndarray, image_size: tuple[int, int] = (MASK_HEIGHT * 2, MASK_WIDTH * 2),
        min_lane_length: float = 0.1, drivable: np.ndarray | None = None):
    """Return the lane geometry of `mask` (and `drivable`) for an image of `image_size`."""
    drivable = np.zeros_like(mask) if drivable is None else drivable
    return geometry.postprocess(to_map(mask), to_margin(drivable), image_size, NUM_POINTS,
                                min_lane_length)


def empty_mask() -> np.ndarray:
    """Return a mask of the lane model's output size with nothing on it."""
    return np.zeros((MASK_HEIGHT, MASK_WIDTH), dtype=np.uint8)


def bottom_u(lane: np.ndarray) -> float:
    """Return the x of a lane's first point, the one nearest the image bottom."""
    return float(lane[0, 0])


# --- synthetic masks -----------------------------------------------------------------------

def test_two_straight_lines_are_the_ego_boundaries() -> None:
    """
    Two straight lines are the ego boundaries, followed from the image bottom to their top.

    The points are scaled to the image, ordered bottom up, and the score is the map's
    probability.
    """
    mask = empty_mask()
    draw_lane(mask, 120)
    draw_lane(mask, 540)
    result = run(mask)  # original image 1280x720: twice the mask size

    assert result.lanes.shape == (2, NUM_POINTS, 2) and result.lanes.dtype == np.float32
    assert result.sides.tolist() == [-1, 1] and result.sides.dtype == np.int8
    for lane, expected_bottom in zip(result.lanes, (120, 540)):
        assert lane[0, 1] == pytest.approx(720)                      # starts at the image bottom
        assert bottom_u(lane) == pytest.approx(2 * expected_bottom, abs=3)
        assert lane[-1, 1] == pytest.approx(2 * 200, abs=3)         # ends at the top of the paint
        assert np.all(np.diff(lane[:, 1]) < 0)                       # bottom upward
        expected_u = [2 * line_x(expected_bottom, v / 2) for v in lane[:, 1]]
        np.testing.assert_allclose(lane[:, 0], expected_u, atol=3)
    # The probability travels as a byte: within half a step of 1/255.
    np.testing.assert_allclose(result.scores, 1 / (1 + np.exp(-5.0)), atol=0.5 / 255)


def test_dashes_of_one_marking_are_one_lane() -> None:
    """The dashes of one broken marking are one lane, extended down to the image bottom."""
    mask = empty_mask()
    draw_dashed_lane(mask, 120)
    draw_lane(mask, 540)
    result = run(mask)

    assert result.sides.tolist() == [-1, 1]
    dashed = result.lanes[0]
    assert bottom_u(dashed) == pytest.approx(240, abs=4)
    assert dashed[-1, 1] == pytest.approx(2 * 196, abs=3)  # spans the top dash too
    assert dashed[0, 1] == pytest.approx(720)  # extended over the gap below the last dash


def test_lines_further_out_are_second_and_unknown() -> None:
    """
    Lines beyond the ego boundaries are second left and right, and lines beyond those unknown.

    A line leaving through a side edge starts on that edge.
    """
    mask = empty_mask()
    for bottom_x in (-900, -300, 120, 540, 1000):
        draw_lane(mask, bottom_x)
    result = run(mask, min_lane_length=0.05)  # the outermost line leaves the image after 27 rows

    assert result.sides.tolist() == [0, -2, -1, 1, 2]  # left to right
    # Lines that leave the image through a side edge start on that edge, above the bottom.
    assert bottom_u(result.lanes[1]) == pytest.approx(0) and result.lanes[1, 0, 1] < 720
    assert bottom_u(result.lanes[4]) == pytest.approx(1280) and result.lanes[4, 0, 1] < 720


def test_side_ranking() -> None:
    """Sides rank outward from the centre: ego, then second, and 0 (unknown) further out."""
    sides = assign_sides(np.array([-500.0, 100, 250, 400, 600, 900]), centre_x=320)
    assert sides.tolist() == [0, -2, -1, 1, 2, 0]


def test_curved_lane_is_followed() -> None:
    """A curved lane is followed along its curve, within 2.5 px."""
    mask = empty_mask()
    rows = np.arange(200, 360)
    curve = 180 - 0.6 * (rows - 200) + 0.004 * (rows - 200) ** 2
    cv2.polylines(mask, [np.stack([curve, rows], axis=1).round().astype(np.int32)], False, 1, 4)
    result = run(mask, image_size=(MASK_HEIGHT, MASK_WIDTH))

    assert len(result.lanes) == 1
    lane = result.lanes[0]
    expected = 180 - 0.6 * (lane[:, 1] - 200) + 0.004 * (lane[:, 1] - 200) ** 2
    np.testing.assert_allclose(lane[:, 0], expected, atol=2.5)


def test_short_blobs_are_dropped_by_min_lane_length() -> None:
    """A lane shorter than min_lane_length (a share of the height) is dropped, a longer one kept."""
    mask = empty_mask()
    draw_lane(mask, 120)
    draw_lane(mask, 540, y_top=320)  # spans 40 rows: 11 % of the height
    assert len(run(mask, min_lane_length=0.2).lanes) == 1
    assert len(run(mask, min_lane_length=0.05).lanes) == 2


def test_empty_mask_gives_no_lanes_with_correct_shapes() -> None:
    """
    No lanes still gives arrays of the contract's shapes and types.

    The drivable area is scaled to the image and holds 0 or 255 only.
    """
    drivable = empty_mask()
    drivable[:, :MASK_WIDTH // 2] = 1
    result = run(empty_mask(), image_size=(540, 960), drivable=drivable)

    assert result.lanes.shape == (0, NUM_POINTS, 2) and result.lanes.dtype == np.float32
    assert result.scores.shape == (0,) and result.scores.dtype == np.float32
    assert result.sides.shape == (0,) and result.sides.dtype == np.int8
    assert result.drivable_area.shape == (540, 960) and result.drivable_area.dtype == np.uint8
    assert set(np.unique(result.drivable_area)) == {0, 255}
    assert np.all(result.drivable_area[:, :470] == 255)
    assert np.all(result.drivable_area[:, 490:] == 0)


def test_tiny_image_keeps_its_size() -> None:
    """A 1x1 image gets a 1x1 drivable area."""
    result = run(empty_mask(), image_size=(1, 1))
    assert result.drivable_area.shape == (1, 1)


@pytest.mark.parametrize('num_points, min_lane_length', [(1, 0.1), (20, -0.1), (20, 1.5)])
def test_bad_settings_are_rejected(num_points: int, min_lane_length: float) -> None:
    """Fewer than two points, or a min_lane_length outside [0, 1], is a ValueError."""
    with pytest.raises(ValueError):
        geometry.postprocess(to_map(empty_mask()), to_margin(empty_mask()), (10, 10),
                             num_points, min_lane_length)


# --- preprocessing -------------------------------------------------------------------------

def test_resize_frame_keeps_uint8() -> None:
    """resize_frame gives a uint8 NCHW tensor of the pixels' values: the graph scales them."""
    image = np.full((540, 960, 3), 255, dtype=np.uint8)
    tensor = preprocessing.resize_frame(image, 640, 360)
    assert tensor.shape == (1, 3, 360, 640) and tensor.dtype == np.uint8
    assert (tensor == 255).all()


def test_maps_of_different_sizes_are_rejected() -> None:
    """Probability and margin maps of different sizes are a ValueError, not misaligned silently."""
    with pytest.raises(ValueError, match='differ in size'):
        geometry.postprocess(np.zeros((36, 64), np.uint8), np.zeros((35, 64), np.uint8),
                             (10, 10), NUM_POINTS, 0.1)


@pytest.mark.parametrize('image', [np.zeros((0, 4, 3), np.uint8), np.zeros((4, 4, 1), np.uint8),
                                   np.zeros((4, 4, 3), np.float32)])
def test_resize_frame_rejects_bad_images(image: np.ndarray) -> None:
    """An empty, single-channel or float image is a ValueError naming IMAGE."""
    with pytest.raises(ValueError, match='IMAGE'):
        preprocessing.resize_frame(image, 640, 360)


# --- real frames ---------------------------------------------------------------------------


def make_reference_lanes() -> Callable[..., Any]:
    """
    Return the Python resize, the upstream model's float heads and reference_lanes' geometry.

    The former Python step's resize (cv2), so that the comparison also covers the graph's own.
    """
    runner = session(shared_path('models', 'twinlitenet', 'twinlitenet.onnx'), 'lane_model')

    def detect(frame: np.ndarray, min_lane_length: float = 0.1):
        tensor = preprocessing.resize_frame(frame, 640, 360)
        drivable, lanes = runner.run({'images': tensor.astype(np.float32) / 255.0}, ['da', 'll'])
        return reference_lanes.postprocess(drivable, lanes, np.array(frame.shape[:2]),
                                           NUM_POINTS, min_lane_length)

    return detect


@pytest.fixture(scope='module')
def graph_directory(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Return a directory for the module's lane graph."""
    return tmp_path_factory.mktemp('lane_graph')


@pytest.mark.slow
def test_served_maps_give_the_lanes_of_the_float_heads(graph_directory: Path) -> None:
    """
    Must not change: the graph's resize and compact uint8 maps against cv2 and the float heads.

    On the road frames and every 4th clip frame the same ego lanes within 2 px, their scores
    within 0.02 and the drivable area within IoU 0.98. Lanes beside the ego lane may come and go
    at the length threshold; those frames are counted.
    """
    detect, reference = make_lane_detector(graph_directory), make_reference_lanes()
    road = sorted(shared_path('data', 'road', 'bdd').glob('*.jpg'))
    frames = [cv2.cvtColor(cv2.imread(str(path)), cv2.COLOR_BGR2RGB) for path in road]
    frames += read_clip(range(0, 221, 4))
    worst = {'ego_px': 0.0, 'score': 0.0, 'iou': 1.0, 'other_lanes_differ': 0}
    for index, frame in enumerate(frames):
        ours, theirs = detect(frame), reference(frame)
        for side in (-1, 1):
            mine, other = ours.sides == side, theirs.sides == side
            assert mine.sum() == other.sum() <= 1, (index, side)
            np.testing.assert_allclose(ours.lanes[mine], theirs.lanes[other], atol=2.0,
                                       err_msg=f'frame {index}, side {side}')
            np.testing.assert_allclose(ours.scores[mine], theirs.scores[other], atol=0.02)
            if mine.any():
                worst['ego_px'] = max(worst['ego_px'], float(np.abs(
                    ours.lanes[mine] - theirs.lanes[other]).max()))
                worst['score'] = max(worst['score'], float(np.abs(
                    ours.scores[mine] - theirs.scores[other]).max()))
        worst['other_lanes_differ'] += ours.sides.tolist() != theirs.sides.tolist()
        ours_area, theirs_area = ours.drivable_area > 0, theirs.drivable_area > 0
        union = (ours_area | theirs_area).sum()
        overlap = 1.0 if union == 0 else (ours_area & theirs_area).sum() / union
        assert overlap >= 0.98, index
        worst['iou'] = min(worst['iou'], float(overlap))
    print(f'\nlanes, graph resize against cv2 on {len(frames)} frames: {worst}')


def test_clip_frames_have_ego_lanes(graph_directory: Path) -> None:
    """
    Frames across the clip have 3 to 6 lanes, with both ego lanes in the README's bands.

    Both run up towards the vanishing point.
    """
    detect = make_lane_detector(graph_directory)
    for frame in read_clip(range(0, 221, 55)):
        result = detect(frame)
        assert result.drivable_area.shape == (540, 960)
        assert 3 <= len(result.lanes) <= 6  # README: 3 to 5 painted lines per frame
        assert has_ego_lanes(result.lanes, result.sides, 540)
        # Both boundaries run up towards the vanishing point near (480, 315).
        by_side = dict(zip(result.sides.tolist(), result.lanes))
        for side in (-1, 1):
            assert np.hypot(*(by_side[side][-1] - (480, 315))) < 60
