"""
What the served detections are held to: reference detections and how two paths are compared.

The shared models README's detections of bus.jpg and zidane.jpg, the independent reference
detector (the upstream network, the Python letterbox and test/support/reference_detection.py's numpy
decode and NMS) and the pairing of two paths' detections within the must-not-change tolerances.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from support import reference_detection as detection
from support.checkout import shared_path
from support.served_graphs import SCORE_THRESHOLD, session
from triton_perception.frames import frame_preprocessing as preprocessing

# README of shared/models: yolov5n, onnxruntime CPU, conf 0.25, IoU 0.45 (class, score, box).
BUS_REFERENCE = [
    (0, 0.823, (219, 408, 349, 863)),
    (0, 0.816, (52, 399, 207, 895)),
    (0, 0.676, (681, 377, 810, 870)),
    (5, 0.526, (49, 237, 810, 772)),
]
ZIDANE_REFERENCE = [
    (0, 0.790, (742, 40, 1154, 716)),
    (0, 0.368, (136, 181, 739, 720)),
    (27, 0.271, (438, 434, 504, 711)),
]
# Must not change: boxes within 1 px and scores within 0.01 of the Python letterbox's, except
# boxes whose score is this close to the threshold in one path (the resize moves them across).
SCORE_TOLERANCE = 0.01
BOX_TOLERANCE_PX = 1.0


def make_reference() -> Callable[..., np.ndarray]:
    """Return the upstream model (float input) + the numpy reference decode and NMS."""
    runner = session(shared_path('models', 'yolov5n', 'yolov5n.onnx'))

    def detect(image: np.ndarray, score: float = SCORE_THRESHOLD, iou: float = 0.45,
               max_det: int = 100) -> np.ndarray:
        pixels, params = preprocessing.letterbox(image, 640, 640)
        (prediction,) = runner.run({'images': pixels.astype(np.float32) / 255.0}, ['output0'])
        return detection.postprocess(prediction, params, score, iou, max_det)
    return detect


def assert_matches_reference(detections: np.ndarray, reference: list) -> None:
    """Assert the detections are the reference's, in order, within 0.01 in score and 3 px."""
    assert detections.shape == (len(reference), 6)
    for row, (class_id, score, box) in zip(detections, reference):
        assert int(row[5]) == class_id
        assert abs(row[4] - score) <= 0.01
        np.testing.assert_allclose(row[:4], box, atol=3)


def unmatched(ours: np.ndarray, theirs: np.ndarray) -> tuple[list[int], list[int]]:
    """
    Pair the detections of two paths; return the indices of each side left without a partner.

    Partners have the same class, box corners within BOX_TOLERANCE_PX and scores within
    SCORE_TOLERANCE.
    """
    free = list(range(len(theirs)))
    lonely = []
    for index, row in enumerate(ours):
        partner = next((other for other in free if theirs[other, 5] == row[5] and abs(
            theirs[other, 4] - row[4]) <= SCORE_TOLERANCE and np.abs(
                theirs[other, :4] - row[:4]).max() <= BOX_TOLERANCE_PX), None)
        if partner is None:
            lonely.append(index)
        else:
            free.remove(partner)
    return lonely, free


def iou(first: np.ndarray, second: np.ndarray) -> float:
    """Return the intersection over union of two corner boxes; 0 when both are empty."""
    inter = (max(0.0, min(first[2], second[2]) - max(first[0], second[0]))
             * max(0.0, min(first[3], second[3]) - max(first[1], second[1])))
    union = ((first[2] - first[0]) * (first[3] - first[1])
             + (second[2] - second[0]) * (second[3] - second[1]) - inter)
    return inter / union if union > 0 else 0.0


def differences(ours: np.ndarray, theirs: np.ndarray, name: str) -> tuple[list[str], list[str]]:
    """
    Return the detections two paths disagree on beyond the must-not-change tolerances.

    (crossings, beyond): a detection only one path has, scoring within SCORE_TOLERANCE of the
    threshold, crossed it because of the resize; every other disagreement is `beyond` (the same
    object's box or score moved further, or an object only one path finds).
    """
    only_ours, only_theirs = unmatched(ours, theirs)
    crossings, beyond = [], []
    for index in only_ours:
        row = ours[index]
        partner = next((other for other in only_theirs if theirs[other, 5] == row[5]
                        and iou(theirs[other], row) >= 0.5), None)
        if partner is not None:
            only_theirs.remove(partner)
            beyond.append(f'{name}: class {int(row[5])} graph score {row[4]:.3f} box '
                          f'{[round(float(value), 1) for value in row[:4]]}, python score '
                          f'{theirs[partner, 4]:.3f} box '
                          f'{[round(float(value), 1) for value in theirs[partner, :4]]}')
            continue
        (crossings if row[4] < SCORE_THRESHOLD + SCORE_TOLERANCE else beyond).append(
            f'{name}: graph only, class {int(row[5])} score {row[4]:.3f}')
    for index in only_theirs:
        row = theirs[index]
        (crossings if row[4] < SCORE_THRESHOLD + SCORE_TOLERANCE else beyond).append(
            f'{name}: python only, class {int(row[5])} score {row[4]:.3f}')
    return crossings, beyond
