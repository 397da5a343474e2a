"""
The clip's labels round-tripped through CVAT's export formats score as the originals do.

The clip is made into a bag and exported with the package's own `bag export-frames --every N`;
its CULane and MOTChallenge labels are written as CVAT would export a task made from those
images (cvat_exports.py), and one set of replay outputs is scored against each form with the
options the clip is scored with (ego lines, rows from the labels, tracks on labelled frames).
Every figure must be the same to the last digit as against the CULane and MOT files of the
exported frames: with --every 10 (the recipe of docs/bags.md) those are the originals' frames it
holds; with --every 2 the export holds every labelled frame and the originals themselves are the
comparands.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from support.checkout import shared_path
from support.coco_labels import coco_from_mot
from support.cvat_exports import (culane_lanes, cvat_boxes, cvat_lanes, cvat_tracks, gt_rows,
                                  labels_of_export, mot_export)
from support.highway_clip import LABELS
from triton_perception.bag.frame_export import export_frames
from triton_perception.bag.make import make_bag
from triton_perception.evaluation.accuracy import score_replay
from triton_perception.evaluation.metrics.metric import ScoringOptions
from triton_perception.evaluation.metrics.replay_outputs import (replayed_frames, ReplayedFrames,
                                                                 ReplayOutputs)

CLASS_NAMES = ['person', 'bicycle', 'car']
CAR = 2
SIZE = (960, 540)
OPTIONS = ScoringOptions(lanes_scored='ego', lane_rows_from_labels=True, sparse_tracks=True)


@pytest.fixture(scope='module')
def clip(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, ReplayedFrames]:
    """Return the clip as a bag (JPEG frames: only names and stamps matter here) and its frames."""
    bag = tmp_path_factory.mktemp('clip') / 'bag'
    make_bag(shared_path('data', 'videos', 'solidWhiteRight.mp4'), bag, compressed=True)
    return bag, ReplayedFrames(replayed_frames(bag, '/camera/image_raw').frames, SIZE)


def outputs_of(frames: ReplayedFrames) -> ReplayOutputs:
    """
    Return what a replay might publish: the labelled cars and lines, some moved, lost or swapped.

    Cars: car 3 is shifted past IoU 0.5 every third labelled frame, car 2 is missed every
    fifth, cars 1 and 4 swap track numbers from frame 40 on, and a stray box comes on every
    frame. Lines: the right line moved 40 px on every other labelled frame, a third line on
    every third. Enough misses that no figure is 1.
    """
    stamps = {index - 1: stamp for index, stamp in frames.frames}
    rows = gt_rows(LABELS / 'gt.txt')
    lanes = culane_lanes(LABELS / 'culane')
    outputs = ReplayOutputs()
    for index, stamp in stamps.items():
        boxes = [[600.0, 100.0, 640.0, 130.0, 0.3, CAR, 99]]
        for number, (car, left, top, width, height) in enumerate(rows.get(index, [])):
            if car == 2 and index % 20 == 0:
                continue
            shift = 30.0 if car == 3 and index % 12 == 0 else 0.0
            track = {1: 4, 4: 1}.get(int(car), int(car)) if index >= 40 else int(car)
            boxes.append([left + shift, top, left + width + shift, top + height,
                          0.9 - 0.05 * number, CAR, track])
        array = np.array(boxes, dtype=np.float64)
        outputs.detections[stamp], outputs.tracks[stamp] = array[:, :6], array
        lines = [np.array(lane, dtype=np.float64) for lane in lanes.get(stamp, [])]
        if len(lines) == 2 and (stamp // 880_000_000) % 2:
            lines[1] = lines[1] + [40.0, 0.0]
        sides = [-1, 1][:len(lines)]
        if len(lines) == 2 and (stamp // 880_000_000) % 3 == 0:
            lines.append(np.array([[480.0, 520.0], [470.0, 400.0]]))
            sides.append(2)
        outputs.lanes[stamp], outputs.lane_sides[stamp] = lines, sides
    return outputs


def scores(frames: ReplayedFrames, outputs: ReplayOutputs, labels: Path) -> dict[str, Any]:
    """Return the accuracy sections and per-frame figures against `labels`, its path left out."""
    scored = score_replay(frames, outputs, [labels], CLASS_NAMES, OPTIONS)
    return {'accuracy': {kind: {key: value for key, value in section.items() if key != 'labels'}
                         for kind, section in scored.accuracy.items()},
            'per_frame': scored.per_frame}


@pytest.mark.slow
@pytest.mark.parametrize('every', [10, 2])
def test_cvat_exports_of_the_clips_labels_score_as_the_originals(
        clip: tuple[Path, ReplayedFrames], tmp_path: Path, every: int) -> None:
    """
    Lanes, boxes and tracks score the same through every CVAT form as through CULane and MOT.

    CVAT for images (polylines; boxes) against the CULane files and COCO boxes of gt.txt; CVAT
    for video and MOT 1.1 (numbered by the task, and by stamp) against gt.txt.
    """
    bag, frames = clip
    export = tmp_path / 'export'
    export_frames(bag, export, every=every, image_format='jpg')
    culane, gt = labels_of_export(LABELS / 'culane', LABELS / 'gt.txt', export, tmp_path / 'own')
    assert (culane, gt) == ((LABELS / 'culane', LABELS / 'gt.txt') if every == 2
                            else (tmp_path / 'own' / 'culane', tmp_path / 'own' / 'gt.txt'))
    outputs = outputs_of(frames)
    coco = tmp_path / 'instances.json'
    coco.write_text(json.dumps(coco_from_mot(gt, [stamp for _, stamp in frames.frames])))
    forms = {'lanes.xml': cvat_lanes(culane, export), 'boxes.xml': cvat_boxes(gt, export),
             'video/annotations.xml': cvat_tracks(gt, export)}
    for name, text in forms.items():
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text(text)
    (tmp_path / 'video' / 'frames.json').write_text((export / 'frames.json').read_text())

    lanes = scores(frames, outputs, culane)
    assert lanes == scores(frames, outputs, tmp_path / 'lanes.xml')
    boxes = scores(frames, outputs, coco)
    assert boxes == scores(frames, outputs, tmp_path / 'boxes.xml')
    tracks = scores(frames, outputs, gt)
    assert tracks == scores(frames, outputs, tmp_path / 'video' / 'annotations.xml')
    assert tracks == scores(frames, outputs, tmp_path / 'video')
    for by_stamp in (False, True):
        folder = mot_export(gt, export, tmp_path / f'mot_{by_stamp}', by_stamp)
        assert tracks == scores(frames, outputs, folder)

    lane_figures = lanes['accuracy']['lanes']
    assert lane_figures['frames'] == (3 if every == 10 else 10)
    assert 0 < lane_figures['F1'] < 1, lane_figures
    assert 0 < boxes['accuracy']['detection']['AP50'] < 1, boxes['accuracy']
    tracking = tracks['accuracy']['tracking']
    assert tracking['frames'] == (5 if every == 10 else 21)
    assert tracking['MOTA'] < 1 and tracking['IDF1'] < 1, tracking
