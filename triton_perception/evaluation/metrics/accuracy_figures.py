"""
The figures of a scored replay, drawn with OpenCV: what report.md shows beside its tables.

- `precision_recall.png`: a precision-recall curve per labelled class at IoU 0.5, from the
  published detections ranked by score (the curve COCO's AP50 integrates);
- `lane_f1.png`: each labelled frame's lane F1 along the drive;
- `worst_frames.png`: the frames with the lowest lane F1 or detection recall, labels drawn in
  green and outputs in magenta.
"""
from __future__ import annotations

from pathlib import Path
from typing import Sequence, TypedDict

import cv2
import numpy as np
from numpy.typing import NDArray

from triton_perception.bag import read_images

PLOT_SIZE = (640, 360)          # width, height of a chart (px)
MARGIN = 40                      # px around a chart's axes
LABEL_COLOUR = (0, 200, 0)       # RGB: what the labels say
OUTPUT_COLOUR = (230, 0, 200)    # RGB: what the nodes published
PALETTE = [(31, 119, 180), (255, 127, 14), (44, 160, 44), (214, 39, 40), (148, 103, 189),
           (140, 86, 75), (227, 119, 194), (127, 127, 127)]
SHEET_TILE = (480, 270)
MATCH_IOU = 0.5


def precision_recall(labels: dict[int, NDArray[np.float64]],
                     detections: dict[int, NDArray[np.float64]],
                     class_id: int) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """
    Return (recall, precision) of one class along the detections ranked by score.

    `labels` rows are [x1, y1, x2, y2, class_id, iscrowd] per frame, `detections` rows
    [x1, y1, x2, y2, score, class_id]; each detection is matched greedily, best score first,
    to the unmatched label of its class with the highest IoU >= 0.5, as COCO's evaluation does.
    """
    scored: list[tuple[float, bool]] = []
    total = 0
    for frame, truth in labels.items():
        truth = truth[(truth[:, 4] == class_id) & (truth[:, 5] == 0)]
        total += len(truth)
        found = detections.get(frame, np.zeros((0, 6)))
        found = found[found[:, 5] == class_id]
        free = np.ones(len(truth), dtype=bool)
        for row in found[np.argsort(-found[:, 4])]:
            ious = _ious(row[:4], truth[:, :4])
            ious[~free] = 0.0
            best = int(np.argmax(ious)) if len(ious) else -1
            hit = best >= 0 and ious[best] >= MATCH_IOU
            if hit:
                free[best] = False
            scored.append((float(row[4]), hit))
    if not scored or total == 0:
        return np.zeros(0), np.zeros(0)
    hits = np.array([hit for _score, hit in sorted(scored, key=lambda item: -item[0])])
    true_positives = np.cumsum(hits)
    return true_positives / total, true_positives / np.arange(1, len(hits) + 1)


def _ious(box: NDArray[np.float64], boxes: NDArray[np.float64]) -> NDArray[np.float64]:
    width = np.clip(np.minimum(box[2], boxes[:, 2]) - np.maximum(box[0], boxes[:, 0]), 0, None)
    height = np.clip(np.minimum(box[3], boxes[:, 3]) - np.maximum(box[1], boxes[:, 1]), 0, None)
    overlap = width * height
    union = ((box[2] - box[0]) * (box[3] - box[1])
             + (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1]) - overlap)
    with np.errstate(divide='ignore', invalid='ignore'):
        return np.where(union > 0, overlap / union, 0.0)


def chart(series: Sequence[tuple[str, NDArray[np.float64], NDArray[np.float64]]], x_label: str,
          y_label: str, x_range: tuple[float, float] = (0.0, 1.0)) -> NDArray[np.uint8]:
    """Draw lines (name, x, y) with y in [0, 1] on a white RGB chart with axes and a legend."""
    width, height = PLOT_SIZE
    image = np.full((height + 2 * MARGIN, width + 2 * MARGIN, 3), 255, np.uint8)
    origin = (MARGIN, MARGIN + height)
    cv2.rectangle(image, (MARGIN, MARGIN), (MARGIN + width, MARGIN + height), (0, 0, 0), 1)
    low, high = x_range
    span = (high - low) or 1.0
    for tick in (0.0, 0.5, 1.0):
        y = int(origin[1] - tick * height)
        cv2.putText(image, f'{tick:.1f}', (4, y + 4), cv2.FONT_HERSHEY_SIMPLEX, 0.4, (0, 0, 0), 1)
    cv2.putText(image, x_label, (MARGIN + width // 2 - 40, height + 2 * MARGIN - 8),
                cv2.FONT_HERSHEY_SIMPLEX, 0.45, (0, 0, 0), 1)
    cv2.putText(image, y_label, (MARGIN + 4, MARGIN - 10), cv2.FONT_HERSHEY_SIMPLEX, 0.45,
                (0, 0, 0), 1)
    for number, (name, xs, ys) in enumerate(series):
        colour = PALETTE[number % len(PALETTE)]
        points = np.stack([origin[0] + (np.asarray(xs) - low) / span * width,
                           origin[1] - np.clip(np.asarray(ys), 0, 1) * height], axis=1)
        if len(points) == 1:
            cv2.circle(image, tuple(int(v) for v in points[0]), 3, colour, cv2.FILLED)
        else:
            cv2.polylines(image, [np.round(points).astype(np.int32)], False, colour, 2,
                          cv2.LINE_AA)
        cv2.putText(image, name, (MARGIN + width - 150, MARGIN + 16 + 16 * number),
                    cv2.FONT_HERSHEY_SIMPLEX, 0.45, colour, 1)
    return image


class Drawn(TypedDict, total=False):
    """What is drawn on one frame: boxes [N, >= 4] and lane polylines [P, 2]."""

    boxes: NDArray[np.float64]
    lanes: Sequence[NDArray[np.float64]]


Drawing = tuple[tuple[int, int, int], dict[int, Drawn]]  # colour, stamp -> drawn


def drawn_frames(bag: Path, topic: str, stamps: list[int],
                 panels: Sequence[Sequence[Drawing]]) -> dict[int, list[NDArray[np.uint8]]]:
    """
    Return, per frame of `stamps` found in `bag`, one tile per panel with its drawings on it.

    Each drawing maps a stamp to {'boxes': [N, >=4], 'lanes': [[P, 2], ...]} in one colour.
    """
    wanted = set(stamps)
    tiles: dict[int, list[NDArray[np.uint8]]] = {}
    for image in read_images(bag, topic):
        if image.header_stamp_ns not in wanted:
            continue
        tiles[image.header_stamp_ns] = []
        for panel in panels:
            rgb = image.rgb.copy()
            for colour, drawn in panel:
                shapes = drawn.get(image.header_stamp_ns, {})
                for box in shapes.get('boxes', np.zeros((0, 4))):
                    cv2.rectangle(rgb, (int(box[0]), int(box[1])), (int(box[2]), int(box[3])),
                                  colour, 2)
                for lane in shapes.get('lanes', []):
                    cv2.polylines(rgb, [np.round(lane).astype(np.int32).reshape(-1, 1, 2)],
                                  False, colour, 3, cv2.LINE_AA)
            tile = cv2.resize(rgb, SHEET_TILE, interpolation=cv2.INTER_AREA).astype(np.uint8)
            cv2.putText(tile, str(image.header_stamp_ns), (6, 18), cv2.FONT_HERSHEY_SIMPLEX, 0.5,
                        (255, 255, 255), 1, cv2.LINE_AA)
            tiles[image.header_stamp_ns].append(tile)
    return tiles


def sheet(tiles: list[NDArray[np.uint8]], columns: int) -> NDArray[np.uint8]:
    """Tile images of one size in rows of `columns`, the last row filled with black."""
    blank = np.zeros_like(tiles[0])
    rows = [np.hstack((tiles[start:start + columns] + [blank] * columns)[:columns])
            for start in range(0, len(tiles), columns)]
    return np.vstack(rows)


def worst_frame_sheet(bag: Path, topic: str, stamps: list[int],
                      truth: dict[int, Drawn], outputs: dict[int, Drawn]
                      ) -> NDArray[np.uint8] | None:
    """
    Tile the frames `stamps` of `bag` with labels (green) and outputs (magenta) drawn on them.

    `truth` and `outputs` map a stamp to {'boxes': [N, >=4], 'lanes': [[P, 2], ...]}.
    """
    tiles = drawn_frames(bag, topic, stamps, [[(LABEL_COLOUR, truth), (OUTPUT_COLOUR, outputs)]])
    ordered = [tiles[stamp][0] for stamp in stamps if stamp in tiles]
    if not ordered:
        return None
    return sheet(ordered, min(3, len(ordered)))


def save_rgb(path: Path, rgb: NDArray[np.uint8]) -> None:
    """Write an RGB image as PNG."""
    cv2.imwrite(str(path), cv2.cvtColor(rgb, cv2.COLOR_RGB2BGR))
