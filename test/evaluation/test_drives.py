"""`bag evaluate` over a directory of drives: per drive and over all of them, one Triton."""
from __future__ import annotations

from dataclasses import fields
import inspect
import json
from pathlib import Path
import shutil
from typing import Any

import pytest

from support.coco_labels import coco_from_mot
from support.highway_clip import CLIP, LABELS
from triton_perception.bag.make import DEFAULT_EPOCH_S, make_bag
from triton_perception.evaluation.drives import (drive_bags, drive_labels, evaluate_drives,
                                                 replay_test)
from triton_perception.evaluation.evaluation import EvaluationSettings, ReplayOptions
from triton_perception.scoring.labels import LabelError

FRAMES = 81
SHIFT_S = 1000  # the second drive's stamps start 1000 s later


@pytest.mark.ros
@pytest.mark.server
@pytest.mark.slow
def test_two_drives_are_scored_each_and_together(triton_server: Any, tmp_path: Path) -> None:
    """
    Two drives evaluated against one Triton are scored each and over both.

    Lane counts add up, MOTA over both lies between the drives' own and AP50 near them, and
    each drive's report and the overall one are written.
    """
    drives = tmp_path / 'drives'
    lanes, tracks, boxes = (tmp_path / 'labels' / kind for kind in ('lanes', 'tracks', 'boxes'))
    for directory in (lanes, tracks, boxes):
        directory.mkdir(parents=True)
    for name, shift_ns in (('morning', 0), ('evening', SHIFT_S * 1_000_000_000)):
        make_bag(CLIP, drives / name, max_frames=FRAMES,
                 start_time_s=DEFAULT_EPOCH_S + shift_ns // 1_000_000_000)
        (lanes / name).mkdir()
        for label in (LABELS / 'culane').glob('*.lines.txt'):
            stamp = int(label.name.split('.')[0])
            if stamp < DEFAULT_EPOCH_S * 1_000_000_000 + FRAMES * 40_000_000:
                shutil.copy(label, lanes / name / f'{stamp + shift_ns}.lines.txt')
        shutil.copy(LABELS / 'gt.txt', tracks / f'{name}.txt')
        stamps = [DEFAULT_EPOCH_S * 1_000_000_000 + shift_ns + index * 40_000_000
                  for index in range(FRAMES)]
        (boxes / f'{name}.json').write_text(json.dumps(coco_from_mot(LABELS / 'gt.txt', stamps)))
    bags = drive_bags(drives)
    assert [bag.name for bag in bags or []] == ['evening', 'morning']
    report = evaluate_drives(EvaluationSettings(
        bag=drives, output=tmp_path / 'evaluation', triton_url=triton_server.grpc_url, rate=0.5,
        labels=(lanes, tracks, boxes), lanes_scored='ego', lane_rows_from_labels=True,
        sparse_tracks=True), bags or [], print)
    each = [report['drives'][name]['accuracy'] for name in ('evening', 'morning')]
    overall = report['accuracy']
    assert overall['lanes']['true_positives'] == sum(a['lanes']['true_positives'] for a in each)
    assert min(a['tracking']['MOTA'] for a in each) <= overall['tracking']['MOTA'] <= max(
        a['tracking']['MOTA'] for a in each)
    assert min(a['detection']['AP50'] for a in each) - 0.05 <= overall['detection']['AP50'] \
        <= max(a['detection']['AP50'] for a in each) + 0.05
    assert (tmp_path / 'evaluation' / 'morning' / 'report.md').is_file()
    assert 'all drives' in (tmp_path / 'evaluation' / 'report.md').read_text()


def test_a_drive_without_labels_is_named(tmp_path: Path) -> None:
    """A drive whose labels are missing is an error naming the drive."""
    (tmp_path / 'lanes' / 'morning').mkdir(parents=True)
    assert drive_labels((tmp_path / 'lanes',), 'morning') == (tmp_path / 'lanes' / 'morning',)
    with pytest.raises(LabelError, match='no labels for the drive evening'):
        drive_labels((tmp_path / 'lanes',), 'evening')


def test_a_directory_without_bags_is_refused(tmp_path: Path) -> None:
    """A directory holding no bag is refused rather than evaluated as no drives."""
    from triton_perception.bag.bag_format import BagError
    with pytest.raises(BagError, match='holds no bag'):
        drive_bags(tmp_path)


def test_replay_test_takes_every_other_evaluation_setting_as_a_keyword() -> None:
    """ReplayOptions, the type of replay_test's **options, names each setting it does not set."""
    own = set(inspect.signature(replay_test).parameters) - {'options', 'workers', 'ray_address'}
    settings = {field.name for field in fields(EvaluationSettings)}
    assert set(ReplayOptions.__annotations__) == settings - own
