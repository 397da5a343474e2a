"""Track ids and tracks in messages: Detection2D.id, TrackedObject fields, markers, overlays."""
from __future__ import annotations

import math

from autoware_perception_msgs.msg import ObjectClassification, TrackedObjectKinematics
import numpy as np
from std_msgs.msg import Header
from visualization_msgs.msg import Marker

from support.published_messages import detection_array_message
from triton_perception.outputs.overlay_drawing import draw_detections
from triton_perception.outputs.result_messages import track_ids_from_message
from triton_perception.parameters import DETECTION, DetectionSettings
from triton_perception.tracking.ground_motion import GroundTrack
from triton_perception.tracking.track_markers import track_markers_message
from triton_perception.tracking.track_messages import track_uuid, tracked_object
from triton_perception.tracking.track_publishers import DetectionTracking, OFF

ROWS = np.array([[10, 20, 110, 220, 0.9, 2], [300, 40, 340, 120, 0.4, 0]], dtype=np.float32)


def ground_track(time_to_collision: float = math.inf) -> GroundTrack:
    """Return a ground track '7' at 20 m, moving at 5 m/s, with `time_to_collision`."""
    return GroundTrack('7', np.array([20.0, -1.0]), np.array([3.0, 4.0]), np.eye(2) * 0.25,
                       np.array([[0.5, 0.1], [0.1, 0.4]]), np.array([20.0, -1.0]),
                       np.array([-7.0, 4.0]), time_to_collision)


def test_detection_ids_are_the_track_ids_and_empty_without() -> None:
    """Each Detection2D's id is its track id, and empty for untracked rows or without tracking."""
    message = detection_array_message(ROWS, Header(frame_id='camera'), ['12', ''])
    assert track_ids_from_message(message) == ['12', '']
    assert track_ids_from_message(detection_array_message(ROWS, Header())) == ['', '']


def test_tracked_object_fields() -> None:
    """
    A TrackedObject carries what Autoware reads: id, class, velocity and size.

    The UUID is the session's bytes and the track number; the velocity comes with its
    covariance; an unknown class is UNKNOWN, and an unknown height 0.
    """
    session = bytes(range(8))
    tracked = tracked_object(session, '7', 'car', 0.9, ground_track(), 1.8, 1.5, absolute=True)
    assert bytes(tracked.object_id.uuid) == session + (7).to_bytes(8, 'big')
    assert tracked.classification[0].label == ObjectClassification.CAR
    kinematics = tracked.kinematics
    assert kinematics.orientation_availability == TrackedObjectKinematics.UNAVAILABLE
    assert (kinematics.twist_with_covariance.twist.linear.x,
            kinematics.twist_with_covariance.twist.linear.y) == (3.0, 4.0)
    covariance = np.array(kinematics.twist_with_covariance.covariance).reshape(6, 6)
    assert covariance[:2, :2].tolist() == [[0.5, 0.1], [0.1, 0.4]]
    assert not kinematics.is_stationary  # 5 m/s
    assert (tracked.shape.dimensions.y, tracked.shape.dimensions.z) == (1.8, 1.5)
    unknown = tracked_object(session, '8', 'kite', 0.5, ground_track(), math.nan, math.nan,
                             absolute=False)
    assert unknown.classification[0].label == ObjectClassification.UNKNOWN
    assert unknown.shape.dimensions.z == 0.0
    assert track_uuid(session, '8').uuid.tolist()[-1] == 8


def test_markers_show_the_id_speed_and_time_to_collision() -> None:
    """
    Track markers label each track with class, id, speed and time to collision.

    They clear the old markers first, and an arrow shows each track's velocity.
    """
    markers = track_markers_message(Header(frame_id='odom'),
                                    [('7', 'car', ground_track(2.5))]).markers
    assert markers[0].action == Marker.DELETEALL
    text, arrow = markers[1], markers[2]
    assert text.text == 'car #7 5.0 m/s TTC 2.5 s'
    assert arrow.type == Marker.ARROW
    assert (arrow.points[1].x - arrow.points[0].x, arrow.points[1].y - arrow.points[0].y) == \
        (3.0, 4.0)


def test_overlay_captions_carry_the_id() -> None:
    """The overlay caption of a tracked box carries its id; an untracked box is drawn as before."""
    image = np.zeros((240, 400, 3), dtype=np.uint8)
    with_ids = draw_detections(image.copy(), ROWS, ['person', 'bicycle', 'car'], ['12', ''])
    without = draw_detections(image.copy(), ROWS, ['person', 'bicycle', 'car'])
    # The caption of the tracked box is wider ('car #12 0.90' against 'car 0.90').
    assert (with_ids != without).any()
    assert (with_ids[:, 250:, :] == without[:, 250:, :]).all()  # the untracked box


def test_tracking_off_leaves_ids_empty() -> None:
    """tracking: false makes no publishers (no node is touched) and hands out no ids."""
    settings = DetectionSettings.from_values(DETECTION, {'tracking': False})
    tracking = DetectionTracking(None, lambda: settings, None, ['person'],  # type: ignore[arg-type]
                                 None)
    ids = tracking.process(Header(frame_id='camera'), ROWS, 0.0)
    assert ids is None and tracking.reason == OFF
    assert track_ids_from_message(detection_array_message(ROWS, Header(), ids)) == ['', '']
