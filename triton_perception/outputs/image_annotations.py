"""
Results as foxglove_msgs/ImageAnnotations: what Foxglove draws on the image they were found in.

Each annotation, and the message itself, carries the frame's header stamp, which is how
Foxglove's image panel puts it on the matching image. Fields are foxglove_msgs 3.4.3's (the
release Humble, Jazzy and Kilted ship): labels go in `texts`; each box's metadata names its
class, score and track, which Foxglove shows beside it. Positions are pixels of the input image,
origin at the top-left corner of the top-left pixel, as the results have them. Boxes and their
labels are coloured per class and lanes per side, as in the overlay images (overlay_drawing); the
drivable area is its outline, filled with the overlay's tint.
"""
from __future__ import annotations

from collections.abc import Iterable

from builtin_interfaces.msg import Time
import cv2
from foxglove_msgs.msg import (Color, ImageAnnotations, KeyValuePair, Point2, PointsAnnotation,
                               TextAnnotation)
import numpy as np
from numpy.typing import NDArray

from triton_perception.outputs.overlay_drawing import (caption, DRIVABLE_ALPHA, DRIVABLE_TINT,
                                                       palette, SIDE_COLOURS)
from triton_perception.outputs.result_messages import class_name

BOX_THICKNESS_PX = 2.0
LANE_THICKNESS_PX = 3.0
OUTLINE_THICKNESS_PX = 1.0
FONT_SIZE_PX = 12.0
OUTLINE_TOLERANCE_PX = 2.0  # the drivable area's outline follows the mask within this
BLACK = (0, 0, 0)


def colour(rgb: Iterable[float], alpha: float = 1.0) -> Color:
    """Return 0-255 RGB as a foxglove_msgs/Color (components 0-1)."""
    red, green, blue = (float(value) / 255.0 for value in rgb)
    return Color(r=red, g=green, b=blue, a=float(alpha))


def _points(kind: int, pixels: Iterable[tuple[float, float]], outline: Color, stamp: Time,
            thickness: float, fill: Color | None = None,
            metadata: dict[str, str] | None = None) -> PointsAnnotation:
    return PointsAnnotation(
        timestamp=stamp, type=kind, thickness=thickness, outline_color=outline,
        fill_color=fill if fill is not None else Color(),
        points=[Point2(x=float(x), y=float(y)) for x, y in pixels],
        metadata=[KeyValuePair(key=key, value=value) for key, value in (metadata or {}).items()])


def detection_annotations(detections: NDArray[np.float32], labels: list[str],
                          track_ids: list[str] | None, stamp: Time) -> ImageAnnotations:
    """
    Return one closed box and one label per detection row (x1, y1, x2, y2, score, class).

    The label reads as the overlay's ('name #id score', 'name score' without a track id) and
    sits on the box's top-left corner; the box's metadata holds `class`, `score` and, with a
    track id, `track`.
    """
    ids = track_ids if track_ids is not None else [''] * len(detections)
    boxes, texts = [], []
    for (x1, y1, x2, y2, score, class_id), track_id in zip(detections.tolist(), ids):
        class_colour = colour(palette(int(class_id)))
        metadata = {'class': class_name(labels, int(class_id)), 'score': f'{score:.2f}',
                    **({'track': track_id} if track_id else {})}
        boxes.append(_points(PointsAnnotation.LINE_LOOP, ((x1, y1), (x2, y1), (x2, y2), (x1, y2)),
                             class_colour, stamp, BOX_THICKNESS_PX, metadata=metadata))
        texts.append(TextAnnotation(
            timestamp=stamp, position=Point2(x=float(x1), y=float(y1)),
            text=caption(labels, int(class_id), score, track_id), font_size=FONT_SIZE_PX,
            text_color=colour(BLACK), background_color=class_colour))
    return ImageAnnotations(timestamp=stamp, points=boxes, texts=texts)


def lane_annotations(lanes: Iterable[NDArray[np.float32]], sides: NDArray[np.int8],
                     drivable_area: NDArray[np.uint8] | None, stamp: Time) -> ImageAnnotations:
    """
    Return the drivable area's outline (if any), then one line per lane coloured by side.

    `lanes` are [N, 2] polylines of (u, v) pixels; `drivable_area` a 0/255 mask of the image.
    """
    points = [] if drivable_area is None else drivable_outline(drivable_area, stamp)
    for polyline, side in zip(lanes, sides.tolist()):
        points.append(_points(PointsAnnotation.LINE_STRIP, polyline.tolist(),
                              colour(SIDE_COLOURS.get(int(side), SIDE_COLOURS[0])), stamp,
                              LANE_THICKNESS_PX))
    return ImageAnnotations(timestamp=stamp, points=points)


def drivable_outline(mask: NDArray[np.uint8], stamp: Time) -> list[PointsAnnotation]:
    """Return the outer outline of each drivable region as a closed, tinted polygon."""
    contours, _hierarchy = cv2.findContours((mask > 0).astype(np.uint8), cv2.RETR_EXTERNAL,
                                            cv2.CHAIN_APPROX_SIMPLE)
    tint = DRIVABLE_TINT.tolist()
    outlines = []
    for contour in contours:
        polygon = cv2.approxPolyDP(contour, OUTLINE_TOLERANCE_PX, True).reshape(-1, 2)
        if len(polygon) >= 3:
            outlines.append(_points(PointsAnnotation.LINE_LOOP, polygon.tolist(), colour(tint),
                                    stamp, OUTLINE_THICKNESS_PX, colour(tint, DRIVABLE_ALPHA)))
    return outlines
