"""
Results as Foxglove image annotations, without ROS: what is drawn is what was found, where.

Each box's corners are its detection's, its label names the class and the track, each lane line
is the lane's polyline coloured by its side, the drivable area's outline lies on the mask, and
every annotation carries the frame's stamp (how Foxglove matches it to its image).
"""
from __future__ import annotations

from builtin_interfaces.msg import Time
from foxglove_msgs.msg import PointsAnnotation
import numpy as np

from triton_perception.outputs import detection_annotations, lane_annotations
from triton_perception.outputs.overlay_drawing import SIDE_COLOURS

STAMP = Time(sec=1_700_000_123, nanosec=456)
LABELS = ['person', 'bicycle', 'car']


def test_boxes_and_labels_are_the_detections_of_the_frame() -> None:
    """One closed box per detection on its corners, one label 'name #track score' at its top."""
    detections = np.array([[10.5, 20.0, 110.0, 220.25, 0.91, 2],
                           [300.0, 40.0, 330.0, 90.0, 0.5, 0]], dtype=np.float32)
    annotations = detection_annotations(detections, LABELS, ['7', ''], STAMP)
    assert len(annotations.points) == 2 and len(annotations.texts) == 2
    assert not annotations.circles
    for box, label, row in zip(annotations.points, annotations.texts, detections.tolist()):
        x1, y1, x2, y2 = row[:4]
        assert box.type == PointsAnnotation.LINE_LOOP
        assert [(p.x, p.y) for p in box.points] == [(x1, y1), (x2, y1), (x2, y2), (x1, y2)]
        assert box.timestamp == STAMP and label.timestamp == STAMP
        assert (label.position.x, label.position.y) == (x1, y1)
        assert box.outline_color.a == 1.0 and label.background_color == box.outline_color
    assert [label.text for label in annotations.texts] == ['car #7 0.91', 'person 0.50']
    assert annotations.timestamp == STAMP
    assert [{pair.key: pair.value for pair in box.metadata} for box in annotations.points] == [
        {'class': 'car', 'score': '0.91', 'track': '7'}, {'class': 'person', 'score': '0.50'}]


def test_no_detections_give_empty_annotations() -> None:
    """A frame without detections clears what Foxglove showed: empty lists, nothing else."""
    annotations = detection_annotations(np.zeros((0, 6), np.float32), LABELS, None, STAMP)
    assert not annotations.points and not annotations.texts and not annotations.circles


def test_lanes_are_their_polylines_coloured_by_side_and_the_area_its_outline() -> None:
    """Each lane is a line strip through its points in its side's colour; the area is outlined."""
    lanes = [np.array([[100.0, 400.0], [150.0, 300.0], [190.0, 200.0]], np.float32),
             np.array([[500.0, 400.0], [450.0, 300.0]], np.float32)]
    sides = np.array([-1, 1], np.int8)
    mask = np.zeros((480, 640), np.uint8)
    mask[250:480, 120:520] = 255
    annotations = lane_annotations(lanes, sides, mask, STAMP)
    outline, *lines = annotations.points
    assert outline.type == PointsAnnotation.LINE_LOOP and 0 < outline.fill_color.a < 1
    corners = {(p.x, p.y) for p in outline.points}
    assert corners == {(120.0, 250.0), (519.0, 250.0), (519.0, 479.0), (120.0, 479.0)}
    for line, lane, side in zip(lines, lanes, sides.tolist()):
        assert line.type == PointsAnnotation.LINE_STRIP and line.timestamp == STAMP
        assert [(p.x, p.y) for p in line.points] == [tuple(point) for point in lane.tolist()]
        expected = tuple(value / 255.0 for value in SIDE_COLOURS[side])
        assert (line.outline_color.r, line.outline_color.g, line.outline_color.b) == expected
    assert outline.timestamp == STAMP and annotations.timestamp == STAMP


def test_lanes_without_a_drivable_area() -> None:
    """A lane model without a drivable area gives the lane lines alone."""
    annotations = lane_annotations([np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)],
                                   np.array([0], np.int8), None, STAMP)
    assert len(annotations.points) == 1
    assert annotations.points[0].type == PointsAnnotation.LINE_STRIP
