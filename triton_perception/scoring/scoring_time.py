"""How long scoring takes: synthetic labelled frames scored for boxes, tracks and lanes."""
from __future__ import annotations

import time
from typing import TypedDict

import numpy as np
from numpy.typing import NDArray

from triton_perception.scoring.detection import score_detections
from triton_perception.scoring.lanes import score_culane
from triton_perception.scoring.tracking import score_tracks

CLASS_NAMES = tuple(f'class{index}' for index in range(80))
FRAME_SIZE = (1280, 720)
FrameRows = dict[int, NDArray[np.float64]]  # frame -> rows
FrameLanes = dict[int, list[NDArray[np.float64]]]  # frame -> [points [K, 2]] per lane


class SyntheticFrames(TypedDict):
    """Labels and outputs of synthetic frames, in the forms each scorer takes."""

    boxes: FrameRows
    tracks: FrameRows
    detections: FrameRows
    published_tracks: FrameRows
    lanes: FrameLanes
    published_lanes: FrameLanes


def synthetic_frames(frames: int, seed: int = 0, objects: int = 10,
                     lanes: int = 4) -> SyntheticFrames:
    """
    Return labels and outputs of `frames` frames: moving boxes with track ids, and lanes.

    Each object drifts across the frame with a jittered output box; one output in ten is
    dropped and one false box per frame added, so every scoring path does real matching.
    """
    generator = np.random.default_rng(seed)
    width, height = FRAME_SIZE
    start = generator.uniform([0, 0], [width - 200, height - 200], size=(objects, 2))
    velocity = generator.uniform(-2, 2, size=(objects, 2))
    sizes = generator.uniform(20, 150, size=(objects, 2))
    classes = generator.integers(0, 10, size=objects).astype(np.float64)
    boxes: FrameRows = {}
    tracks: FrameRows = {}
    detections: FrameRows = {}
    published_tracks: FrameRows = {}
    truth_lanes: FrameLanes = {}
    published_lanes: FrameLanes = {}
    rows = np.linspace(height * 0.45, height - 1, 12)
    for frame in range(1, frames + 1):
        corner = np.clip(start + velocity * frame, 0, [width - 200, height - 200])
        truth = np.concatenate([corner, corner + sizes], axis=1)
        boxes[frame] = np.column_stack([truth, classes, np.zeros(objects)])
        tracks[frame] = np.column_stack([truth, classes, np.arange(objects), np.ones(objects)])
        kept = generator.random(objects) > 0.1
        output = truth[kept] + generator.normal(0, 3, size=(int(kept.sum()), 4))
        false_box = np.concatenate([generator.uniform(0, 1000, 2), [0, 0]])
        false_box[2:] = false_box[:2] + 60
        output = np.vstack([output, false_box])
        scores = generator.uniform(0.3, 1.0, size=len(output))
        output_classes = np.append(classes[kept], 0)
        detections[frame] = np.column_stack([output, scores, output_classes])
        published_tracks[frame] = np.column_stack(
            [detections[frame], np.append(np.flatnonzero(kept), 1000 + frame)])
        lane_x = [width * (0.2 + 0.2 * lane) + (rows - height) * (0.8 - 0.4 * lane)
                  for lane in range(lanes)]
        truth_lanes[frame] = [np.column_stack([xs, rows]) for xs in lane_x]
        published_lanes[frame] = [np.column_stack([xs + generator.normal(0, 4), rows])
                                  for xs in lane_x[:-1]]
    return {'boxes': boxes, 'tracks': tracks, 'detections': detections,
            'published_tracks': published_tracks, 'lanes': truth_lanes,
            'published_lanes': published_lanes}


def scoring_benchmark(frames: int = 1000, seed: int = 0) -> float:
    """Return the seconds taken to score `frames` synthetic frames for boxes, tracks and lanes."""
    data = synthetic_frames(frames, seed)
    start = time.perf_counter()
    score_detections(data['boxes'], data['detections'], CLASS_NAMES)
    score_tracks(data['tracks'], data['published_tracks'])
    score_culane(data['lanes'], data['published_lanes'], FRAME_SIZE)
    return time.perf_counter() - start
