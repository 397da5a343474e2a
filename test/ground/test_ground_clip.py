"""
The highway clip on the ground, with the calibration in test/data/highway_clip.

The lane and detection steps run in-process exactly as the ensembles chain them
(test/support/served_graphs.py, which test_lane_processing and test_detection_processing check), on
every second frame.
"""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
import yaml

from support.highway_clip import CALIBRATION, read_clip
from support.served_graphs import make_detector, make_lane_detector
from triton_perception.ground.camera import GroundCamera, Intrinsics, Mounting
from triton_perception.ground.ground_projection import ground_boxes, ground_lane_points

VEHICLES = (2, 5, 7)  # COCO car, bus, truck


def clip_camera() -> GroundCamera:
    """Return the highway clip's camera, from the calibration in test/data."""
    info = yaml.safe_load((CALIBRATION / 'camera_info.yaml').read_text())
    pose = yaml.safe_load((CALIBRATION / 'camera_pose.yaml').read_text())
    camera_info = SimpleNamespace(k=info['camera_matrix']['data'],
                                  d=info['distortion_coefficients']['data'],
                                  distortion_model=info['distortion_model'],
                                  width=info['image_width'], height=info['image_height'])
    return GroundCamera(Intrinsics.from_camera_info(camera_info),
                        Mounting.from_camera_pose(pose['/**']['ros__parameters']['camera_pose']))


def lateral_at(points: np.ndarray, x: float) -> float:
    """Y of a ground lane at distance x (NaN outside the part it covers)."""
    order = np.argsort(points['x'])
    return float(np.interp(x, points['x'][order], points['y'][order], left=np.nan,
                           right=np.nan))


@pytest.fixture(scope='module')
def clip_on_the_ground(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    """
    Return, for every second clip frame, the ego lines' offsets and the nearest vehicle ahead.

    Offsets are at 6, 8 and 20 m; the distance is NaN where no vehicle is ahead.
    """
    graphs = tmp_path_factory.mktemp('graphs')
    camera = clip_camera()
    detect_lanes, detect_objects = make_lane_detector(graphs), make_detector(graphs)
    frames = []
    for frame in read_clip(range(0, 221))[::2]:
        lanes = detect_lanes(frame)
        points = ground_lane_points(camera, lanes.lanes, lanes.sides)
        left, right = points[points['side'] == -1], points[points['side'] == 1]
        objects = detect_objects(frame)
        vehicles = objects[np.isin(objects[:, 5], VEHICLES)]
        contacts, _widths, _heights = ground_boxes(camera, vehicles)
        ahead = contacts[np.isfinite(contacts[:, 0]) & (contacts[:, 0] > 0), 0]
        frames.append({
            'left': {x: lateral_at(left, x) for x in (6.0, 8.0, 20.0)},
            'right': {x: lateral_at(right, x) for x in (6.0, 8.0, 20.0)},
            'nearest_vehicle': float(ahead.min()) if len(ahead) else np.nan})
    return frames


def test_ego_lines_are_parallel_and_the_width_agrees(clip_on_the_ground: list[dict]) -> None:
    """
    On 90 % of frames the ego lines on the ground are parallel and the lane width holds.

    Within 3 degrees over 6-20 m, and the width at 20 m within 10 % of that at 8 m: the
    projection keeps the road's geometry.
    """
    parallel = agreeing = 0
    for frame in clip_on_the_ground:
        left, right = frame['left'], frame['right']
        heading_left = np.degrees(np.arctan2(left[20.0] - left[6.0], 14.0))
        heading_right = np.degrees(np.arctan2(right[20.0] - right[6.0], 14.0))
        parallel += bool(abs(heading_left - heading_right) <= 3.0)  # NaN (not seen) fails
        width_8, width_20 = left[8.0] - right[8.0], left[20.0] - right[20.0]
        agreeing += bool(abs(width_20 - width_8) <= 0.1 * width_8)
    count = len(clip_on_the_ground)
    print(f'{count} frames: ego lines parallel (within 3 deg over 6-20 m) in {parallel} '
          f'({parallel / count:.1%}); widths at 8 m and 20 m within 10 % in {agreeing} '
          f'({agreeing / count:.1%})')
    assert parallel >= 0.9 * count and agreeing >= 0.9 * count


def test_distance_to_the_nearest_car_ahead_is_stable(clip_on_the_ground: list[dict]) -> None:
    """
    The distance to the nearest vehicle ahead is stable from frame to frame.

    It changes less than 20 % on 95 % of consecutive pairs: ground contact points do not jump.
    """
    distances = np.array([frame['nearest_vehicle'] for frame in clip_on_the_ground])
    changes = np.abs(np.diff(distances)) / distances[:-1]
    pairs = int(np.isfinite(changes).sum())  # NaN: no vehicle ahead in one of the two frames
    stable = int((changes[np.isfinite(changes)] < 0.2).sum())
    print(f'nearest vehicle ahead: {np.isfinite(distances).sum()} of {len(distances)} frames, '
          f'{distances[np.isfinite(distances)].min():.1f}-'
          f'{distances[np.isfinite(distances)].max():.1f} m; change < 20 % in {stable} of '
          f'{pairs} consecutive pairs ({stable / max(1, pairs):.1%})')
    assert pairs >= 0.9 * (len(distances) - 1)
    assert stable >= 0.95 * pairs
