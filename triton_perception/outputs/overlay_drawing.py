"""Drawing results onto frames: used by the nodes' overlay topics, the overlay node and the demo."""
from __future__ import annotations

from collections.abc import Iterable, Mapping

import cv2
import numpy as np
from numpy.typing import NDArray
from sensor_msgs.msg import Image, PointCloud2
from vision_msgs.msg import Detection2DArray

from triton_perception.outputs.result_messages import (class_name, detections_from_message,
                                                       lanes_from_cloud, mask_from_image,
                                                       track_ids_from_message)

DRIVABLE_TINT = np.array([0, 160, 255], dtype=np.float32)  # RGB
DRIVABLE_ALPHA = 0.35
SIDE_COLOURS = {  # RGB by LANE_SIDES value: ego boundaries stand out
    -1: (255, 60, 60), 1: (60, 255, 60), -2: (255, 170, 0), 2: (0, 200, 255), 0: (200, 200, 200)}


def palette(class_id: int) -> tuple[int, int, int]:
    """Return a stable, distinct colour per class id."""
    hue = (class_id * 47) % 180
    bgr = cv2.cvtColor(np.array([[[hue, 220, 255]]], np.uint8), cv2.COLOR_HSV2RGB)[0, 0]
    return int(bgr[0]), int(bgr[1]), int(bgr[2])


def caption(labels: list[str], class_id: int, score: float, track_id: str = '') -> str:
    """Return a box's label: 'name #id score' ('name score' without a track id)."""
    name = class_name(labels, class_id)
    return f'{name} #{track_id} {score:.2f}' if track_id else f'{name} {score:.2f}'


def draw_detections(rgb: NDArray[np.uint8], detections: NDArray[np.float32], labels: list[str],
                    track_ids: list[str] | None = None) -> NDArray[np.uint8]:
    """
    Draw boxes in place on an RGB image.

    Labels read 'name #id score' ('name score' without a track id).
    """
    thickness = max(1, round(max(rgb.shape[:2]) / 500))
    ids = track_ids if track_ids is not None else [''] * len(detections)
    for (x1, y1, x2, y2, score, class_id), track_id in zip(detections.tolist(), ids):
        colour = palette(int(class_id))
        text = caption(labels, int(class_id), score, track_id)
        top_left, bottom_right = (int(x1), int(y1)), (int(x2), int(y2))
        cv2.rectangle(rgb, top_left, bottom_right, colour, thickness)
        (width, height), baseline = cv2.getTextSize(text, cv2.FONT_HERSHEY_SIMPLEX, 0.5, 1)
        label_top = max(0, int(y1) - height - baseline)
        cv2.rectangle(rgb, (int(x1), label_top), (int(x1) + width, label_top + height + baseline),
                      colour, cv2.FILLED)
        cv2.putText(rgb, text, (int(x1), label_top + height), cv2.FONT_HERSHEY_SIMPLEX, 0.5,
                    (0, 0, 0), 1, cv2.LINE_AA)
    return rgb


def draw_drivable_area(rgb: NDArray[np.uint8], mask: NDArray[np.uint8]) -> NDArray[np.uint8]:
    """Tint the drivable area in place (mask 0/255 of the image size)."""
    selected = mask > 0
    if selected.any():
        tinted = rgb[selected].astype(np.float32) * (1 - DRIVABLE_ALPHA) + \
            DRIVABLE_TINT * DRIVABLE_ALPHA
        rgb[selected] = tinted.astype(np.uint8)
    return rgb


def draw_lanes(rgb: NDArray[np.uint8], lanes: Iterable[NDArray[np.float32]],
               sides: NDArray[np.int8]) -> NDArray[np.uint8]:
    """Lane polylines coloured by side, drawn in place."""
    thickness = max(2, round(max(rgb.shape[:2]) / 300))
    for polyline, side in zip(lanes, sides.tolist()):
        points = np.round(polyline).astype(np.int32).reshape(-1, 1, 2)
        cv2.polylines(rgb, [points], False, SIDE_COLOURS.get(int(side), SIDE_COLOURS[0]),
                      thickness, cv2.LINE_AA)
    return rgb


def draw_results(rgb: NDArray[np.uint8],
                 results: Mapping[str, Detection2DArray | PointCloud2 | Image],
                 labels: list[str]) -> NDArray[np.uint8]:
    """
    Draw a frame's results in place: `drivable_area` (tinted), `lanes`, then `detections`.

    Every result is read before anything is drawn, so a result that cannot be read raises
    UnreadableResult (result_messages) and leaves `rgb` as it was. A mask of another size than
    the frame is not drawn.
    """
    drivable, lanes, detections = (results.get(topic)
                                   for topic in ('drivable_area', 'lanes', 'detections'))
    mask = mask_from_image(drivable) if isinstance(drivable, Image) else None
    polylines = lanes_from_cloud(lanes) if isinstance(lanes, PointCloud2) else None
    boxes = (detections_from_message(detections, labels), track_ids_from_message(detections)) \
        if isinstance(detections, Detection2DArray) else None
    if mask is not None and mask.shape == rgb.shape[:2]:
        draw_drivable_area(rgb, mask)
    if polylines is not None:
        draw_lanes(rgb, *polylines)
    if boxes is not None:
        draw_detections(rgb, boxes[0], labels, boxes[1])
    return rgb
