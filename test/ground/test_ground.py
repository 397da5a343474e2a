"""Ground geometry without ROS: projection math, a synthetic pinhole view, the output builders."""
from __future__ import annotations

import json
import os
from pathlib import Path
import sys
from types import SimpleNamespace

import numpy as np
import pytest
from rosbags.typesys import get_typestore, Stores
from std_msgs.msg import Header

from triton_perception.ground.camera import (CameraModelError, GroundCamera, Intrinsics, Mounting,
                                             rotation_rpy)
from triton_perception.ground.ground_messages import (ground_cloud_message,
                                                      ground_detections_message,
                                                      lane_markers_message, occupancy_grid_message,
                                                      read_ground_points)
from triton_perception.ground.ground_projection import (GridSampler, GridSpec, ground_boxes,
                                                        ground_lane_points)
from triton_perception.ground.static_tf import StaticTransforms
from triton_perception.parameters import GROUND, GroundSettings, ParameterError, specs_by_name

F, CX, CY = 1000.0, 640.0, 360.0
K = np.array([[F, 0, CX], [0, F, CY], [0, 0, 1.0]])


def camera(pose: list[float], d: tuple[float, ...] = (), max_range: float = 100.0,
           k: np.ndarray = K) -> GroundCamera:
    """
    Return a 1280x720 camera with intrinsics `k` and distortion `d`, mounted at `pose`.

    `pose` is x, y, z, roll, pitch, yaw in the target frame; points beyond `max_range` metres
    are dropped.
    """
    return GroundCamera(Intrinsics(k, np.array(d, dtype=float), 'plumb_bob', 1280, 720),
                        Mounting.from_camera_pose(pose), max_range)


def ground(cam: GroundCamera, *pixels: tuple[float, float]) -> np.ndarray:
    """Return the ground points of `pixels`, asserting that every one reaches the ground."""
    points, valid = cam.to_ground(np.array(pixels, dtype=float))
    assert valid.all()
    return points


# 1. Projection math against hand-computed points.
def test_level_camera_points_by_hand() -> None:
    """A level camera's pixels land where the hand computation puts them."""
    # Level camera 1.5 m up: a pixel 100 px below the centre looks down by 0.1 (x = 1.5 / 0.1);
    # 200 px right of it is 0.2 of that range to the right (y = -3).
    points = ground(camera([0, 0, 1.5, 0, 0, 0]), (CX, CY + 100), (CX + 200, CY + 100))
    np.testing.assert_allclose(points, [[15, 0, 0], [15, -3, 0]], atol=1e-9)


def test_pitched_camera_centre_ray() -> None:
    """A camera pitched down sees its optical axis meet the ground at h / tan(pitch)."""
    # The optical axis, pitched down by 0.1 rad, meets the ground at h / tan(0.1).
    points = ground(camera([0.5, 0.2, 1.5, 0, 0.1, 0]), (CX, CY))
    np.testing.assert_allclose(points, [[0.5 + 1.5 / np.tan(0.1), 0.2, 0]], atol=1e-9)


def test_rolled_camera_by_hand() -> None:
    """A rolled camera's pixels land where the hand computation puts them."""
    # Roll 0.05 rad: the optical ray (0, t, 1) is (1, t sin r, -t cos r) in target_frame, which
    # meets z = 0 at x = h / (t cos r), y = h tan r.
    roll, t, h = 0.05, 0.1, 1.5
    points = ground(camera([0, 0, h, roll, 0, 0]), (CX, CY + t * F))
    np.testing.assert_allclose(points, [[h / (t * np.cos(roll)), h * np.tan(roll), 0]],
                               atol=1e-9)


def test_distorted_pixel_is_undistorted_first() -> None:
    """A distorted pixel is undistorted before projection: it lands where its ideal ray does."""
    # plumb_bob k1 = -0.2: the undistorted normalised point (0.2, 0.1) (r^2 = 0.05) is imaged
    # at 0.99 x (0.2, 0.1) -> pixel (838, 459). It must land where (0.2, 0.1) does: (15, -3).
    points = ground(camera([0, 0, 1.5, 0, 0, 0], d=(-0.2, 0, 0, 0, 0)), (CX + 198, CY + 99))
    np.testing.assert_allclose(points, [[15, -3, 0]], atol=1e-6)


def test_rays_at_or_above_the_horizon_and_too_far_are_dropped() -> None:
    """Rays at or above the horizon, and those meeting the ground beyond max_range, give NaN."""
    cam = camera([0, 0, 1.5, 0, 0, 0], max_range=50.0)
    points, valid = cam.to_ground(np.array([[CX, CY - 10], [CX, CY], [CX, CY + 20],
                                            [CX, CY + 100]]))
    assert valid.tolist() == [False, False, False, True]  # 1.5 / 0.02 = 75 m > 50 m
    assert np.isnan(points[0]).all()


def test_rotation_follows_rep103() -> None:
    """Roll, pitch and yaw follow REP 103: positive pitch looks down, positive yaw turns left."""
    # Positive pitch turns x forward towards -z (looks down); positive yaw turns x to the left.
    np.testing.assert_allclose(rotation_rpy(0, 0.3, 0) @ [1, 0, 0],
                               [np.cos(0.3), 0, -np.sin(0.3)], atol=1e-12)
    np.testing.assert_allclose(rotation_rpy(0, 0, 0.3) @ [1, 0, 0],
                               [np.cos(0.3), np.sin(0.3), 0], atol=1e-12)


def test_image_round_trip_with_distortion() -> None:
    """Ground points projected into a distorted, tilted camera and back land where they started."""
    cam = camera([1.0, -0.3, 1.3, 0.02, 0.08, -0.05], d=(-0.25, 0.07, 0.001, -0.0005, 0))
    points = np.array([[6.0, 1.0, 0], [12.0, -2.5, 0], [30.0, 3.0, 0]])
    pixels, in_front = cam.to_image(points)
    assert in_front.all()
    np.testing.assert_allclose(cam.to_ground(pixels)[0], points, atol=1e-4)


def test_unusable_camera_info_and_pose_are_explained() -> None:
    """
    Unusable calibration or mounting is a CameraModelError saying what is wrong.

    An uncalibrated CameraInfo, an unsupported distortion model and a camera below the ground
    are each explained.
    """
    info = SimpleNamespace(k=[0.0] * 9, d=[], distortion_model='plumb_bob', width=1, height=1)
    with pytest.raises(CameraModelError, match='not calibrated'):
        Intrinsics.from_camera_info(info)
    info.k, info.distortion_model = K.ravel().tolist(), 'double_sphere'
    with pytest.raises(CameraModelError, match='double_sphere'):
        Intrinsics.from_camera_info(info)
    with pytest.raises(CameraModelError, match='above the ground'):
        Mounting.from_camera_pose([0, 0, -1.0, 0, 0, 0]).check()


# 2. A synthetic pinhole view: lines at known lateral offsets, seen at a known height and pitch.
@pytest.mark.parametrize('height,pitch', [(1.2, 0.02), (1.6, 0.08), (2.5, 0.15)])
def test_synthetic_lines_are_recovered_within_2_percent_at_10_m(height: float,
                                                                pitch: float) -> None:
    """
    Lines seen by a synthetic pinhole camera land within 2 % of their offsets at 10 m.

    This holds at each height and pitch, with pixels rounded as detections give them.
    """
    cam = camera([0, 0, height, 0, pitch, 0])
    offsets = (1.75, -1.95, 5.45)
    lanes = []
    for offset in offsets:
        xs = np.linspace(5.0, 40.0, 20)
        pixels, in_front = cam.to_image(np.stack([xs, np.full(20, offset), np.zeros(20)], 1))
        assert in_front.all()
        lanes.append(np.round(pixels))  # detections come in whole pixels
    points = ground_lane_points(cam, np.array(lanes, dtype=np.float32),
                                np.array([-1, 1, -2], dtype=np.int8))
    for lane_id, offset in zip((1, 2, 0), offsets):  # lane_id: left to right
        lane = points[points['lane_id'] == lane_id]
        order = np.argsort(lane['x'])
        at_10_m = np.interp(10.0, lane['x'][order], lane['y'][order])
        assert abs(at_10_m - offset) <= 0.02 * abs(offset), (offset, at_10_m)


# Outputs.
def test_lane_points_cloud_and_markers() -> None:
    """
    Ground lane points become a PointCloud2 that reads back the same, and line markers.

    The markers clear the old ones first, and show one line a lane with at least two points, the
    ego boundaries in green.
    """
    cam = camera([0, 0, 1.5, 0, 0.05, 0])
    lanes = np.array([[[400, 720], [600, 420]], [[900, 720], [700, 420]],
                      [[0, 500], [100, 300]]], dtype=np.float32)  # the last is above the horizon
    points = ground_lane_points(cam, lanes, np.array([-1, 1, 0], dtype=np.int8))
    assert len(points) == 5 and set(points['lane_id'].tolist()) == {0, 1, 2}
    cloud = ground_cloud_message(points, stamped_header())
    np.testing.assert_array_equal(read_ground_points(cloud), points)
    assert [field.name for field in cloud.fields] == ['x', 'y', 'z', 'lane_id', 'side']
    markers = lane_markers_message(points, stamped_header()).markers
    assert markers[0].action == markers[0].DELETEALL
    assert [m.id for m in markers[1:]] == [1, 2]  # lane 0 kept one point: no line
    assert all(m.type == m.LINE_STRIP and len(m.points) == 2 for m in markers[1:])
    assert markers[1].color.g > 0.8 and markers[2].color.g > 0.8  # ego boundaries


def stamped_header() -> Header:
    """Return a header in base_link stamped at 12 s."""
    header = Header(frame_id='base_link')
    header.stamp.sec = 12
    return header


def test_grid_marks_drivable_blocked_and_unseen_cells() -> None:
    """
    The occupancy grid marks drivable cells 0, others 100 and those out of view -1.

    The message has the grid's size and an origin centred on the vehicle's axis.
    """
    cam = camera([0, 0, 1.5, 0, 0.1, 0])
    grid = GridSpec(length=40.0, width=20.0, resolution=0.2)
    mask = np.zeros((720, 1280), dtype=np.uint8)
    mask[:, :640] = 255  # the left half of the image (y > 0) is drivable
    sampler = GridSampler(cam, grid, mask.shape)
    cells = sampler.values(mask).reshape(grid.shape)
    x0, y0 = grid.origin

    def cell(x: float, y: float) -> int:
        return int(cells[int((y - y0) / grid.resolution), int((x - x0) / grid.resolution)])
    assert cell(20.0, 2.0) == 0 and cell(20.0, -2.0) == 100
    assert cell(0.5, 0.0) == -1  # under the camera, out of its view
    message = occupancy_grid_message(sampler.values(mask), grid, stamped_header())
    assert (message.info.width, message.info.height) == (200, 100)
    assert message.info.origin.position.y == pytest.approx(-10.0)
    assert len(message.data) == 200 * 100


def test_grid_costs_a_gather_per_frame() -> None:
    """
    The cell -> pixel lookup is computed once per geometry; each frame is a gather.

    Each frame's cells are exactly the mask's values at the looked-up pixels (no projection
    again), and a frame never changes the lookup.
    """
    cam = camera([0, 0, 1.5, 0, 0.1, 0])
    grid = GridSpec(length=40.0, width=20.0, resolution=0.1)
    rng = np.random.default_rng(0)
    sampler = GridSampler(cam, grid, (720, 1280))
    lookup = sampler.flat_index.copy()
    assert 0 < lookup.size < sampler.size
    for _ in range(3):
        mask = (rng.random((720, 1280)) > 0.5).astype(np.uint8) * 255
        cells = sampler.values(mask)
        expected = np.where(mask.reshape(-1)[lookup] > 0, 0, 100)
        np.testing.assert_array_equal(cells[sampler.visible], expected)
        assert (cells[~sampler.visible] == -1).all()
    np.testing.assert_array_equal(sampler.flat_index, lookup)


def test_ground_detections_keep_hypotheses_and_id() -> None:
    """
    A ground detection keeps its 2D detection's id, class and score, with a size from the box.

    A box whose bottom is above the horizon has no ground detection.
    """
    cam = camera([0, 0, 1.5, 0, 0, 0])
    rows = np.array([[540, 300, 740, 460, 0.9, 2],  # bottom centre 100 px below the centre
                     [600, 100, 700, 300, 0.8, 0]], dtype=np.float32)  # above the horizon
    contacts, widths, heights = ground_boxes(cam, rows)
    np.testing.assert_allclose(contacts[0], [15, 0, 0], atol=1e-9)
    assert widths[0] == pytest.approx(3.0)  # 200 px at 15 m with f = 1000
    # The top is 60 px above the centre: 0.06 x 15 m above the camera's 1.5 m.
    assert heights[0] == pytest.approx(1.5 + 0.9)
    message = ground_detections_message(rows, ['track-7', ''], contacts, widths, heights,
                                        stamped_header())
    assert len(message.detections) == 1
    ground_detection = message.detections[0]
    assert ground_detection.id == 'track-7'
    assert ground_detection.bbox.size.y == pytest.approx(3.0)
    assert ground_detection.bbox.size.z == pytest.approx(2.4)
    assert ground_detection.results[0].hypothesis.class_id == '2'  # the id, as in detections
    assert ground_detection.results[0].hypothesis.score == pytest.approx(0.9)


def test_static_transform_chain() -> None:
    """
    A chain of static transforms to the optical frame gives the camera its camera_pose gives.

    A frame with no transform to it gives None.
    """
    def stamped(parent: str, child: str, xyz: tuple, quaternion: tuple) -> SimpleNamespace:
        return SimpleNamespace(
            header=SimpleNamespace(frame_id=parent), child_frame_id=child,
            transform=SimpleNamespace(translation=SimpleNamespace(x=xyz[0], y=xyz[1], z=xyz[2]),
                                      rotation=SimpleNamespace(x=quaternion[0], y=quaternion[1],
                                                               z=quaternion[2], w=quaternion[3])))
    tree = StaticTransforms()
    # base_link -> camera_link (1.5 m up), camera_link -> camera_optical (REP 103 optical).
    tree.add(SimpleNamespace(transforms=[
        stamped('base_link', 'camera_link', (1.0, 0.0, 1.5), (0, 0, 0, 1)),
        stamped('camera_link', 'camera_optical', (0, 0, 0), (-0.5, 0.5, -0.5, 0.5))]))
    matrix = tree.lookup('base_link', 'camera_optical')
    from_tf = GroundCamera(Intrinsics(K, np.zeros(0)), Mounting.from_matrix(matrix))
    from_pose = camera([1.0, 0.0, 1.5, 0, 0, 0])
    pixels = np.array([[CX + 50, CY + 80]])
    np.testing.assert_allclose(from_tf.to_ground(pixels)[0], from_pose.to_ground(pixels)[0],
                               atol=1e-9)
    assert tree.lookup('base_link', 'elsewhere') is None


def test_camera_pose_parameter() -> None:
    """camera_pose takes six numbers with the camera above the ground; anything else is refused."""
    spec = specs_by_name(GROUND)['camera_pose']
    assert spec.validate([0, 0, 1, 0, 0.1, 0]) == [0.0, 0.0, 1.0, 0.0, 0.1, 0.0]
    assert spec.validate((0.0,) * 6) == [0.0] * 6  # unset
    for bad in ([0, 0, 1], [0, 0, -1, 0, 0, 0], ['a'] * 6, 1.5):
        with pytest.raises(ParameterError, match='camera_pose'):
            spec.validate(bad)


def test_tf2_msgs_is_wire_compatible_with_upstream() -> None:
    """
    The dev-only tf2_msgs (dev/tf2_msgs) must hash like upstream's TFMessage.

    As rosbags' Jazzy type store (built from upstream definitions) computes it, or /tf_static never
    matches a real robot_state_publisher.
    """
    prefixes = [sys.prefix, *os.environ.get('AMENT_PREFIX_PATH', '').split(os.pathsep)]
    found = [Path(prefix) / 'share' / 'tf2_msgs' / 'msg' / 'TFMessage.json'
             for prefix in prefixes if prefix]
    found = [path for path in found if path.is_file()]
    if not found:
        pytest.skip('no tf2_msgs type description (Humble has no type hashes)')
    installed = json.loads(found[0].read_text())['type_hashes'][0]['hash_string']
    assert installed == get_typestore(Stores.ROS2_JAZZY).hash_rihs01('tf2_msgs/msg/TFMessage')


@pytest.mark.ros
def test_geometry_source_reasons_and_camera_pose(ros_node: object) -> None:
    """Without DDS traffic: the source's reasons, then camera_pose once CameraInfo is known."""
    from sensor_msgs.msg import CameraInfo

    from triton_perception.ground.camera_lookup import CameraGeometrySource

    settings = GroundSettings.from_values(GROUND, {})
    source = CameraGeometrySource(ros_node, lambda: settings)
    assert source.camera('cam') is None and 'no CameraInfo on' in source.reason
    info = CameraInfo(width=1280, height=720, distortion_model='plumb_bob',
                      k=K.ravel().tolist(), d=[0.0] * 5)
    info.header.frame_id = 'other'
    source._on_camera_info(info)
    assert source.camera('cam') is None and 'frames other' in source.reason
    info.header.frame_id = 'cam'
    source._on_camera_info(info)
    assert source.camera('cam') is None
    assert source.reason.startswith('no transform base_link <- cam')
    settings = settings.changed({'camera_pose': [0.0, 0.0, 1.5, 0.0, 0.0, 0.0]})  # set live
    camera = source.camera('cam')
    assert camera is not None and source.reason == 'on (camera_pose)'
    np.testing.assert_allclose(camera.to_ground(np.array([[CX, CY + 100]]))[0], [[15, 0, 0]])
    source._on_camera_info(info)  # the same calibration again: the same camera (grid cache)
    assert source.camera('cam') is camera
    off = CameraGeometrySource(ros_node, lambda: settings.changed({'ground_outputs': False}))
    assert off.camera('cam') is None and off.reason.startswith('off')
