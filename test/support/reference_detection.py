"""
An independent reference for the served detection graph.

Raw YOLOv5 rows -> final detections in original-image pixels, in plain numpy (greedy class-aware
NMS).

This is what the package's NMS step computed before the decode and NMS moved into the ONNX
graph; the graph must reproduce it (test_detection_processing.py).

Input rows are ``[cx, cy, w, h, objectness, class scores...]`` in letterboxed model-input
pixels, already decoded (no anchors or sigmoid left). The letterbox vector is the one the
preprocess step produced: ``[scale_x, scale_y, pad_left, pad_top, image_width, image_height]``.
Output rows are ``[x1, y1, x2, y2, score, class_id]``, clipped to the image, best first.
"""
import numpy as np

# Class-aware NMS in one pass: shift each class's boxes this far apart so that boxes of
# different classes never overlap. Larger than any model-input coordinate.
CLASS_OFFSET = 8192.0


def check_thresholds(score_threshold: float, iou_threshold: float, max_detections: int) -> None:
    """Reject values that would silently produce nonsense instead of an error."""
    if not 0.0 <= score_threshold <= 1.0:
        raise ValueError(f'score threshold must be in [0, 1], got {score_threshold}')
    if not 0.0 <= iou_threshold <= 1.0:
        raise ValueError(f'IoU threshold must be in [0, 1], got {iou_threshold}')
    if max_detections < 0:
        raise ValueError(f'max detections must be >= 0, got {max_detections}')


def candidates(prediction: np.ndarray,
               score_threshold: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """
    Best class per row, score = objectness x class score, rows below the threshold dropped.

    Returns xyxy boxes (model-input pixels), scores and class ids.
    """
    rows = prediction.reshape(-1, prediction.shape[-1])
    # A class score is at most 1, so objectness alone rules out most rows cheaply.
    rows = rows[rows[:, 4] >= score_threshold]
    class_scores = rows[:, 5:] * rows[:, 4:5]
    class_ids = class_scores.argmax(axis=1)
    scores = class_scores[np.arange(len(rows)), class_ids]
    keep = scores >= score_threshold
    rows, scores, class_ids = rows[keep], scores[keep], class_ids[keep]
    half_size = rows[:, 2:4] / 2
    boxes = np.concatenate([rows[:, 0:2] - half_size, rows[:, 0:2] + half_size], axis=1)
    return boxes, scores, class_ids


def box_iou(box: np.ndarray, boxes: np.ndarray) -> np.ndarray:
    """Compute the IoU of one xyxy box against many (continuous coordinates, no +1)."""
    inter_w = np.clip(np.minimum(box[2], boxes[:, 2]) - np.maximum(box[0], boxes[:, 0]), 0, None)
    inter_h = np.clip(np.minimum(box[3], boxes[:, 3]) - np.maximum(box[1], boxes[:, 1]), 0, None)
    inter = inter_w * inter_h
    area = (box[2] - box[0]) * (box[3] - box[1])
    areas = (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])
    return inter / np.maximum(area + areas - inter, np.finfo(np.float64).tiny)


def nms(boxes: np.ndarray, scores: np.ndarray, class_ids: np.ndarray,
        iou_threshold: float, max_detections: int) -> np.ndarray:
    """
    Greedy class-aware NMS; indices of kept boxes, best score first.

    A box is suppressed by a better-scoring kept box of the same class with IoU above the
    threshold. Stops once max_detections are kept, which bounds the work even when a very low
    score threshold lets thousands of candidates through.
    """
    order = np.argsort(-scores, kind='stable')
    shifted = boxes.astype(np.float64) + (class_ids.astype(np.float64) * CLASS_OFFSET)[:, None]
    keep: list[int] = []
    while order.size and len(keep) < max_detections:
        best = order[0]
        keep.append(int(best))
        rest = order[1:]
        order = rest[box_iou(shifted[best], shifted[rest]) <= iou_threshold]
    return np.array(keep, dtype=np.int64)


def undo_letterbox(boxes: np.ndarray, letterbox: np.ndarray) -> np.ndarray:
    """Map xyxy boxes from model-input pixels to original-image pixels, clipped to the image."""
    scale_x, scale_y, pad_left, pad_top, image_width, image_height = (float(v) for v in letterbox)
    out = np.empty_like(boxes, dtype=np.float32)
    out[:, [0, 2]] = np.clip((boxes[:, [0, 2]] - pad_left) / scale_x, 0, image_width)
    out[:, [1, 3]] = np.clip((boxes[:, [1, 3]] - pad_top) / scale_y, 0, image_height)
    return out


def postprocess(prediction: np.ndarray, letterbox: np.ndarray, score_threshold: float,
                iou_threshold: float, max_detections: int) -> np.ndarray:
    """
    Raw [1, N, 5 + classes] model output -> float32 [K, 6] detections, best first.

    Boxes that lie entirely in the letterbox padding collapse to zero area when clipped and
    are dropped: they describe nothing in the image.
    """
    check_thresholds(score_threshold, iou_threshold, max_detections)
    boxes, scores, class_ids = candidates(prediction, score_threshold)
    keep = nms(boxes, scores, class_ids, iou_threshold, max_detections)
    detections = np.empty((len(keep), 6), dtype=np.float32)
    detections[:, :4] = undo_letterbox(boxes[keep], letterbox)
    detections[:, 4] = scores[keep]
    detections[:, 5] = class_ids[keep]
    has_area = (detections[:, 2] > detections[:, 0]) & (detections[:, 3] > detections[:, 1])
    return detections[has_area]
