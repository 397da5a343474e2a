"""
Detection accuracy against COCO labels, computed by faster-coco-eval's COCO evaluator.

AP, AP50 and AP75 are COCO's bbox figures over all box sizes (IoU 0.50:0.95, 101-point
interpolated, at most 100 detections per frame and class); precision and recall are those of
every published detection, matched as the evaluator matches at IoU 0.5.
"""
from __future__ import annotations

import contextlib
import io
from typing import Mapping, Sequence, TypedDict

# faster-coco-eval ships no type information.
from faster_coco_eval import COCO, COCOeval_faster  # type: ignore[import-untyped]
import numpy as np
from numpy.typing import NDArray

from triton_perception.scoring.labels import DetectionLabels

# COCO's largest maxDets, the one AP is reported at.
MAX_DETECTIONS = 100
# Frame rows as they come: float64 labels, float32 published rows (check_rows makes float64).
Rows = NDArray[np.float32 | np.float64]


class DetectionFigures(TypedDict):
    """A replay's detection accuracy, in the order report.json lists it."""

    frames: int
    frames_without_output: int
    labelled_boxes: int
    published_detections: int
    AP: float
    AP50: float
    AP75: float
    AP_per_class: dict[str, float]
    true_positives: int
    false_positives: int
    false_negatives: int
    precision: float
    recall: float


class DetectionScores(DetectionFigures, total=False):
    """The figures and each labelled frame's recall (frame -> recall)."""

    per_frame_recall: dict[int, float]


# COCO's records as faster_coco_eval reads them, typed so that a misspelt field fails here. Those
# with COCO's field `id` are declared by call, so that no class attribute shadows the builtin.
# An image record: the frame by its 1-based image id.
_CocoImage = TypedDict('_CocoImage', {'id': int})
# An annotation record: one labelled box; bbox is left, top, width, height.
_CocoAnnotation = TypedDict('_CocoAnnotation', {
    'id': int, 'image_id': int, 'category_id': int, 'iscrowd': int, 'bbox': list[float],
    'area': float})
# A category record: class ids are named by their number.
_CocoCategory = TypedDict('_CocoCategory', {'id': int, 'name': str})


class _CocoResult(TypedDict):
    """A COCO result record: one published detection."""

    image_id: int
    category_id: int
    score: float
    bbox: list[float]


class _CocoDataset(TypedDict):
    """The COCO ground-truth dataset faster_coco_eval reads."""

    images: list[_CocoImage]
    annotations: list[_CocoAnnotation]
    categories: list[_CocoCategory]


def check_rows(rows: Rows, columns: int, what: str) -> NDArray[np.float64]:
    """Return `rows` as a float64 [N, columns] array, or raise ValueError naming `what`."""
    array = np.asarray(rows, dtype=np.float64)
    if array.size == 0:
        return array.reshape(0, columns)
    if array.ndim != 2 or array.shape[1] < columns:
        raise ValueError(f'{what}: expected rows of {columns} values, found shape {array.shape}')
    if not np.isfinite(array[:, :columns]).all():
        raise ValueError(f'{what}: not every value is finite')
    return array[:, :columns]


def fraction(numerator: float, denominator: float) -> float:
    """Return numerator / denominator, 0.0 when the denominator is 0."""
    return float(numerator / denominator) if denominator else 0.0


def coco_datasets(labels: Mapping[int, Rows], predictions: Mapping[int, Rows],
                  class_count: int) -> tuple[_CocoDataset, list[_CocoResult], list[int]]:
    """Return the COCO ground-truth dataset, the result list and the frames in image-id order."""
    frames = sorted(labels)
    images: list[_CocoImage] = []
    annotations: list[_CocoAnnotation] = []
    results: list[_CocoResult] = []
    for image_id, frame in enumerate(frames, start=1):
        images.append({'id': image_id})
        truth = check_rows(labels[frame], 6, f'labels of frame {frame}')
        if ((truth[:, 4] != np.round(truth[:, 4])) | (truth[:, 4] < 0)
                | (truth[:, 4] >= class_count)).any():
            raise ValueError(f'labels of frame {frame}: class ids outside 0..{class_count - 1}')
        for x1, y1, x2, y2, class_id, crowd in truth:
            annotations.append({'id': len(annotations) + 1, 'image_id': image_id,
                                'category_id': int(class_id), 'iscrowd': int(crowd),
                                'bbox': [x1, y1, x2 - x1, y2 - y1],
                                'area': (x2 - x1) * (y2 - y1)})
        published = predictions.get(frame)
        if published is None:
            continue
        rows = check_rows(published, 6, f'detections of frame {frame}')
        classes = rows[:, 5]
        if ((classes != np.round(classes)) | (classes < 0) | (classes >= class_count)).any():
            raise ValueError(f'detections of frame {frame}: class ids outside 0..{class_count - 1}')
        for x1, y1, x2, y2, score, class_id in rows:
            results.append({'image_id': image_id, 'category_id': int(class_id), 'score': score,
                            'bbox': [x1, y1, x2 - x1, y2 - y1]})
    categories: list[_CocoCategory] = [{'id': index, 'name': str(index)}
                                       for index in range(class_count)]
    return ({'images': images, 'annotations': annotations, 'categories': categories},
            results, frames)


def _coco_evaluation(ground_truth: _CocoDataset, results: list[_CocoResult],
                     class_names: Sequence[str], matched_per_image: NDArray[np.int64]
                     ) -> tuple[tuple[float, ...], dict[str, float]]:
    """
    Run COCO's evaluation; return AP, AP50, AP75 and the AP of each class with labelled boxes.

    Counts each image's matched non-crowd boxes into `matched_per_image` (by image id), which
    precision, recall and per-frame recall are computed from.
    """
    coco_gt = COCO()
    coco_gt.dataset = ground_truth
    # The evaluator reports its progress on stdout in places; the caller reports instead.
    with contextlib.redirect_stdout(io.StringIO()):
        coco_gt.createIndex()
        coco_dt = coco_gt.loadRes(results)
        evaluator = COCOeval_faster(coco_gt, coco_dt, 'bbox', extra_calc=True,
                                    print_function=lambda *_: None)
        evaluator.params.maxDets = [1, 10, MAX_DETECTIONS]
        evaluator.evaluate()
        evaluator.accumulate()
        evaluator.summarize()
    stats = evaluator.stats
    precision = evaluator.eval['precision'][:, :, :, 0, -1]  # IoU, recall, class; all sizes
    per_class: dict[str, float] = {}
    for class_id, name in enumerate(class_names):
        values = precision[:, :, class_id]
        if (values > -1).any():
            per_class[name] = float(values[values > -1].mean())
    for pair in evaluator.eval['matched']:
        detection_id, truth_id = (int(part) for part in pair.split('_', 1))
        if not coco_gt.anns[truth_id]['iscrowd']:
            matched_per_image[coco_dt.anns[detection_id]['image_id']] += 1
    average_precision = tuple(float(max(stats[index], 0.0)) for index in range(3))
    return average_precision, per_class


def score_detections(labels: DetectionLabels | Mapping[int, Rows],
                     predictions: Mapping[int, Rows],
                     class_names: Sequence[str] | None = None) -> DetectionScores:
    """
    Score published detections against labelled boxes, frame by frame.

    `labels` maps each labelled frame to rows [x1, y1, x2, y2, class_id, iscrowd] (or is
    DetectionLabels, whose class names are used when `class_names` is None); `predictions` maps
    frames to the published rows [x1, y1, x2, y2, score, class_id], all in frame pixels. Only
    labelled frames are scored; a labelled frame missing from `predictions` had no output and its
    boxes are all misses (counted in `frames_without_output`), while an empty array is an
    output without detections. Returns AP, AP50, AP75, AP_per_class (classes with labelled
    boxes), precision, recall, the counts behind them and per_frame_recall (1.0 on a frame
    without labelled boxes). A detection on a crowd box counts as a false positive in precision
    (COCO's AP ignores it). Raises ValueError on malformed rows.
    """
    if isinstance(labels, DetectionLabels):
        class_names = labels.class_names if class_names is None else class_names
        labels = labels.frames
    if class_names is None:
        raise ValueError('score_detections needs the class names')
    ground_truth, results, frames = coco_datasets(labels, predictions, len(class_names))
    crowd_free = {frame: int(np.count_nonzero(check_rows(labels[frame], 6, 'labels')[:, 5] == 0))
                  for frame in frames}
    labelled = sum(crowd_free.values())
    without_output = sum(1 for frame in frames if frame not in predictions)
    matched_per_image = np.zeros(len(frames) + 1, dtype=np.int64)
    if results and labelled:
        average_precision, per_class = _coco_evaluation(ground_truth, results, class_names,
                                                        matched_per_image)
    else:
        classes = {int(row[4]) for frame in frames for row in labels[frame] if row[5] == 0}
        average_precision = (0.0, 0.0, 0.0)
        per_class = {class_names[index]: 0.0 for index in sorted(classes)}
    true_positives = int(matched_per_image.sum())
    return {
        'frames': len(frames), 'frames_without_output': without_output,
        'labelled_boxes': labelled, 'published_detections': len(results),
        'AP': average_precision[0], 'AP50': average_precision[1], 'AP75': average_precision[2],
        'AP_per_class': per_class, 'true_positives': true_positives,
        'false_positives': len(results) - true_positives,
        'false_negatives': labelled - true_positives,
        'precision': fraction(true_positives, len(results)),
        'recall': fraction(true_positives, labelled),
        'per_frame_recall': {frame: fraction(matched_per_image[image_id], crowd_free[frame])
                             if crowd_free[frame] else 1.0
                             for image_id, frame in enumerate(frames, start=1)}}
