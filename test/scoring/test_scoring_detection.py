"""
Detection scores (triton_perception.scoring.detection) against pycocotools and hand-worked cases.

The package evaluates with faster-coco-eval; pycocotools, the COCO authors' evaluator, is the
independent reference here.
"""
from __future__ import annotations

import contextlib
import io

import numpy as np
from pycocotools.coco import COCO
from pycocotools.cocoeval import COCOeval
import pytest

from triton_perception.scoring.detection import score_detections

CLASS_NAMES = ('person', 'car', 'bus', 'truck')


def random_scene(seed: int, frames: int = 30) -> tuple[dict, dict]:
    """Labels and jittered, partly missed, partly false detections on `frames` frames."""
    generator = np.random.default_rng(seed)
    labels, predictions = {}, {}
    for frame in range(frames):
        count = int(generator.integers(0, 12))
        corner = generator.uniform(0, 600, size=(count, 2))
        size = generator.uniform(8, 200, size=(count, 2))
        classes = generator.integers(0, 3, size=count)
        boxes = np.concatenate([corner, corner + size], axis=1)
        labels[1_700_000_000_000_000_000 + frame * 40_000_000] = np.column_stack(
            [boxes, classes, np.zeros(count)])
        kept = generator.random(count) > 0.2
        jitter = generator.normal(0, 0.08, size=(int(kept.sum()), 4)) * np.tile(size[kept], 2)
        output = boxes[kept] + jitter
        false = int(generator.integers(0, 4))
        false_corner = generator.uniform(0, 600, size=(false, 2))
        output = np.vstack([output, np.concatenate([false_corner, false_corner + 50], axis=1)])
        output_classes = np.concatenate([classes[kept], generator.integers(0, 4, size=false)])
        # A class swap now and then: a right box of the wrong class.
        swap = generator.random(len(output_classes)) < 0.05
        output_classes[swap] = (output_classes[swap] + 1) % 4
        predictions[1_700_000_000_000_000_000 + frame * 40_000_000] = np.column_stack(
            [output, generator.uniform(0.25, 1.0, size=len(output)), output_classes])
    return labels, predictions


def pycocotools_stats(labels: dict, predictions: dict) -> tuple[np.ndarray, np.ndarray]:
    """COCO bbox stats and the precision array by pycocotools from the same boxes."""
    frames = sorted(labels)
    dataset = {'images': [{'id': index} for index in range(1, len(frames) + 1)],
               'categories': [{'id': index} for index in range(len(CLASS_NAMES))],
               'annotations': []}
    results = []
    for image_id, frame in enumerate(frames, start=1):
        for x1, y1, x2, y2, class_id, crowd in labels[frame]:
            dataset['annotations'].append({
                'id': len(dataset['annotations']) + 1, 'image_id': image_id,
                'category_id': int(class_id), 'iscrowd': int(crowd),
                'bbox': [x1, y1, x2 - x1, y2 - y1], 'area': (x2 - x1) * (y2 - y1)})
        for x1, y1, x2, y2, score, class_id in predictions.get(frame, np.zeros((0, 6))):
            results.append({'image_id': image_id, 'category_id': int(class_id), 'score': score,
                            'bbox': [x1, y1, x2 - x1, y2 - y1]})
    with contextlib.redirect_stdout(io.StringIO()):
        truth = COCO()
        truth.dataset = dataset
        truth.createIndex()
        evaluator = COCOeval(truth, truth.loadRes(results), 'bbox')
        evaluator.evaluate()
        evaluator.accumulate()
        evaluator.summarize()
    return evaluator.stats, evaluator.eval['precision']


@pytest.mark.parametrize('seed', [0, 1, 2])
def test_ap_equals_pycocotools(seed: int) -> None:
    """
    AP, AP50, AP75 and each class's AP equal pycocotools' on random scenes, to 1e-6.

    Only labelled classes have an AP.
    """
    labels, predictions = random_scene(seed)
    assert sum(len(rows) for rows in labels.values()) > 100
    scores = score_detections(labels, predictions, CLASS_NAMES)
    stats, precision = pycocotools_stats(labels, predictions)
    assert scores['AP'] == pytest.approx(stats[0], abs=1e-6)
    assert scores['AP50'] == pytest.approx(stats[1], abs=1e-6)
    assert scores['AP75'] == pytest.approx(stats[2], abs=1e-6)
    # Only the labelled classes (0-2) have an AP; class 3 has false positives only.
    assert set(scores['AP_per_class']) == {'person', 'car', 'bus'}
    for class_id, name in enumerate(CLASS_NAMES[:3]):
        values = precision[:, :, class_id, 0, -1]
        assert scores['AP_per_class'][name] == pytest.approx(values[values > -1].mean(), abs=1e-6)
    assert 0.3 < scores['AP'] < 1.0


def test_precision_and_recall_at_the_published_detections() -> None:
    """Worked by hand: 3 labelled boxes, 4 detections, 2 of them matching at IoU >= 0.5."""
    labels = {10: np.array([[0, 0, 10, 10, 0, 0], [50, 50, 60, 60, 0, 0]], dtype=float),
              20: np.array([[0, 0, 20, 20, 1, 0]], dtype=float)}
    predictions = {
        # IoU 1 (a hit); IoU 56/144 with the first box (a miss: below 0.5).
        10: np.array([[0, 0, 10, 10, 0.9, 0], [3, 2, 13, 12, 0.8, 0]], dtype=float),
        # The right box of the wrong class (a false positive) and the right class (a hit).
        20: np.array([[0, 0, 20, 20, 0.7, 0], [1, 0, 21, 20, 0.6, 1]], dtype=float)}
    scores = score_detections(labels, predictions, CLASS_NAMES)
    assert (scores['true_positives'], scores['false_positives'], scores['false_negatives']) == \
        (2, 2, 1)
    assert scores['precision'] == pytest.approx(0.5)
    assert scores['recall'] == pytest.approx(2 / 3)
    assert scores['per_frame_recall'] == {10: pytest.approx(0.5), 20: pytest.approx(1.0)}
    assert scores['frames'] == 2 and scores['frames_without_output'] == 0
    # person: the hit comes first, then two false positives: precision 1 up to recall 0.5 (51 of
    # COCO's 101 recall points), at every IoU threshold. car: one hit of IoU 380/420 = 0.905,
    # a hit at thresholds 0.50-0.90 (9 of 10).
    assert scores['AP_per_class'] == {'person': pytest.approx(51 / 101),
                                      'car': pytest.approx(0.9)}
    assert scores['AP50'] == pytest.approx((51 / 101 + 1.0) / 2)
    assert scores['AP'] == pytest.approx((51 / 101 + 0.9) / 2)


def test_a_labelled_frame_without_output_is_all_misses() -> None:
    """A labelled frame the pipeline published nothing for counts as all misses, and is counted."""
    labels = {1: np.array([[0, 0, 10, 10, 0, 0]], dtype=float),
              2: np.array([[0, 0, 10, 10, 0, 0], [20, 20, 30, 30, 1, 0]], dtype=float),
              3: np.array([[0, 0, 10, 10, 0, 0]], dtype=float)}
    # Frame 2 had no output at all; frame 3 had an output without detections.
    predictions = {1: np.array([[0, 0, 10, 10, 0.9, 0]], dtype=float), 3: np.zeros((0, 6))}
    scores = score_detections(labels, predictions, CLASS_NAMES)
    assert scores['frames_without_output'] == 1
    assert scores['recall'] == pytest.approx(1 / 4)
    assert scores['precision'] == pytest.approx(1.0)
    assert scores['per_frame_recall'] == {1: 1.0, 2: 0.0, 3: 0.0}


def test_no_output_anywhere_scores_zero() -> None:
    """No output at all scores zero everywhere rather than failing, and counts the frame."""
    labels = {1: np.array([[0, 0, 10, 10, 2, 0]], dtype=float)}
    scores = score_detections(labels, {}, CLASS_NAMES)
    assert scores['AP'] == 0.0 and scores['recall'] == 0.0 and scores['precision'] == 0.0
    assert scores['AP_per_class'] == {'bus': 0.0}
    assert scores['frames_without_output'] == 1


def test_predictions_of_unlabelled_frames_are_not_scored() -> None:
    """Detections on frames without labels are not counted as false positives."""
    labels = {1: np.array([[0, 0, 10, 10, 0, 0]], dtype=float)}
    predictions = {1: np.array([[0, 0, 10, 10, 0.9, 0]], dtype=float),
                   2: np.array([[50, 50, 60, 60, 0.9, 0]], dtype=float)}
    scores = score_detections(labels, predictions, CLASS_NAMES)
    assert scores['precision'] == 1.0 and scores['AP'] == pytest.approx(1.0)
    assert scores['published_detections'] == 1


@pytest.mark.parametrize('rows, message', [
    (np.array([[0, 0, 10, 10, 0.9]]), 'rows of 6'),
    (np.array([[0, 0, 10, 10, 0.9, 7]]), 'class ids outside'),
    (np.array([[0, 0, np.nan, 10, 0.9, 0]]), 'finite'),
])
def test_malformed_detections_are_a_value_error(rows: np.ndarray, message: str) -> None:
    """Rows not of six, unknown class ids or non-finite values are a ValueError saying which."""
    labels = {1: np.array([[0, 0, 10, 10, 0, 0]], dtype=float)}
    with pytest.raises(ValueError, match=message):
        score_detections(labels, {1: rows}, CLASS_NAMES)
