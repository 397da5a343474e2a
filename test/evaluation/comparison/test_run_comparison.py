"""
Two runs compared frame by frame without labels: `bag compare` and `bag evaluate --expected`.

The runs are real outputs bags written as the recorder writes them (the nodes' own messages,
serialized by rclpy, in the distribution's bag format) beside a report.json, over a real camera
bag made by `bag make`; no Triton is needed. A change is planted in known frames.
"""
from __future__ import annotations

import json
from pathlib import Path
import shutil
import time
from typing import Any

import cv2
import numpy as np
import pytest

from support.evaluation_runs import Frame, FRAMES, scene, write_run
from triton_perception.bag.bag_format import BagError
from triton_perception.cli import main
from triton_perception.evaluation.comparison.pair_evaluations import CompareOptions
from triton_perception.evaluation.comparison.run_comparison import DEFAULT_THRESHOLDS
from triton_perception.evaluation.figures import detection_labels
from triton_perception.evaluation.folder_comparison import compare

SHIFTED = {index for index in range(FRAMES) if index % 4 == 1}   # boxes moved 60 px
RENAMED = {index for index in range(FRAMES) if index % 4 == 3}   # one box's class renamed
NO_LANE = {index for index in range(FRAMES) if index % 4 == 2}   # the right ego line removed


def changed(index: int) -> Frame:
    """Return the scene with the planted change of its frame."""
    frame = scene(index)
    if index in SHIFTED:
        frame['boxes'][:, [0, 2]] += 60
    if index in RENAMED:
        frame['boxes'][1, 5] = 5
    if index in NO_LANE:
        frame['lanes'], frame['sides'] = frame['lanes'][:1], [-1]
    return frame


def jittered(index: int) -> Frame:
    """Return the scene moved by up to a pixel, with a weak box lost on two frames."""
    frame = scene(index)
    rng = np.random.default_rng(index)
    frame['boxes'][:, :4] += rng.uniform(-1, 1, (3, 4))
    frame['lanes'] = [lane + rng.uniform(-1, 1, lane.shape) for lane in frame['lanes']]
    if index in (7, 29):  # a score threshold moved by 0.01 loses the weakest box
        frame['boxes'] = frame['boxes'][:2]
    return frame


def run_compare(old: Path, new: Path, output: Path | None = None, **options: Any
                ) -> tuple[bool, dict[str, Any]]:
    """Compare two runs; return the verdict and the comparison of the (one) drive."""
    options.setdefault('class_names', detection_labels(None))
    flagged, _text = compare(old, new, output, CompareOptions(**options), 1, '', print)
    document = json.loads((output / 'comparison.json').read_text()) if output else {}
    return flagged, document


def test_identical_runs_agree_everywhere_and_export_nothing(
        camera: tuple[Path, list[int]], tmp_path: Path) -> None:
    """The same outputs twice: every agreement 1.0, nothing flagged, no frame exported."""
    old = write_run(tmp_path / 'old', camera, scene)
    new = write_run(tmp_path / 'new', camera, scene)
    flagged, document = run_compare(old, new, tmp_path / 'out',
                                    export_changed=(10, tmp_path / 'label'))
    comparison = document['drives']['new']['comparison']
    assert not flagged and comparison['flagged'] == [] and comparison['frames'] == FRAMES
    for name, figure in comparison['figures'].items():
        assert figure['agreement'] == 1.0 and figure['interval'] == [1.0, 1.0], name
    assert set(comparison['figures']) == set(DEFAULT_THRESHOLDS)
    assert comparison['tracking']['IDF1'] == 1.0 and comparison['changed_frames'] == []
    assert json.loads((tmp_path / 'label' / 'frames.json').read_text())['frames'] == []
    assert not (tmp_path / 'label' / 'changed_frames.png').exists()
    assert (tmp_path / 'out' / 'agreement.png').is_file()
    assert 'no change beyond the thresholds' in (tmp_path / 'out' / 'report.md').read_text()


def test_a_planted_change_is_flagged_and_exactly_its_frames_are_exported(
        camera: tuple[Path, list[int]], tmp_path: Path) -> None:
    """
    Boxes moved, a class renamed and an ego line removed in known frames.

    Detections, identities and the ego lane are flagged; the exported frames are exactly the
    changed ones, in CVAT's and Label Studio's frames.json, with the contact sheet.
    """
    _bag, stamps = camera
    old = write_run(tmp_path / 'old', camera, scene)
    new = write_run(tmp_path / 'new', camera, changed)
    flagged, document = run_compare(old, new, tmp_path / 'out',
                                    export_changed=(FRAMES, tmp_path / 'label'))
    comparison = document['drives']['new']['comparison']
    assert flagged and {'detection', 'identity', 'ego_lane'} <= set(comparison['flagged'])
    assert 'drivable_area' not in comparison['flagged']
    assert comparison['figures']['drivable_area']['agreement'] == 1.0
    boxes = comparison['detection']
    assert boxes['class_changes'] == len(RENAMED)
    assert boxes['old_only'] == boxes['new_only'] == 3 * len(SHIFTED)
    assert comparison['per_class']['car']['changed_from'] == len(RENAMED)
    lanes = comparison['lanes']
    assert lanes['ego_lane_old_only'] == len(NO_LANE) and lanes['lanes_matched'] == 2 * FRAMES - \
        len(NO_LANE)
    planted = {stamps[index] for index in SHIFTED | RENAMED | NO_LANE}
    exported = json.loads((tmp_path / 'label' / 'frames.json').read_text())['frames']
    assert {entry['stamp_ns'] for entry in exported} == planted
    assert all((tmp_path / 'label' / entry['file']).is_file() for entry in exported)
    sheet = cv2.imread(str(tmp_path / 'label' / 'changed_frames.png'))
    assert sheet.shape[1] == 2 * 480  # old | new
    # Fewer frames asked for: the highest scores first (moved boxes, a lost ego line).
    _flagged, _document = run_compare(old, new, None, export_changed=(5, tmp_path / 'five'))
    five = json.loads((tmp_path / 'five' / 'frames.json').read_text())['frames']
    assert {entry['stamp_ns'] for entry in five} <= {stamps[index]
                                                     for index in SHIFTED | NO_LANE}
    assert len(five) == 5


def test_jitter_and_a_nudged_threshold_are_not_flagged(camera: tuple[Path, list[int]],
                                                       tmp_path: Path) -> None:
    """Boxes and lanes moved by up to a pixel and a weak box lost twice: within noise."""
    old = write_run(tmp_path / 'old', camera, scene)
    new = write_run(tmp_path / 'new', camera, jittered)
    flagged, document = run_compare(old, new, tmp_path / 'out')
    comparison = document['drives']['new']['comparison']
    assert not flagged and comparison['flagged'] == []
    assert comparison['figures']['detection']['agreement'] < 1.0
    assert comparison['figures']['lanes']['agreement'] == 1.0


def test_a_threshold_of_the_users_decides_what_is_flagged(camera: tuple[Path, list[int]],
                                                          tmp_path: Path) -> None:
    """A looser detection threshold lets the planted change pass; an unknown figure is refused."""
    old = write_run(tmp_path / 'old', camera, scene)
    new = write_run(tmp_path / 'new', camera, changed)
    _flagged, document = run_compare(old, new, tmp_path / 'out',
                                     thresholds={'detection': 0.5})
    comparison = document['drives']['new']['comparison']
    assert comparison['figures']['detection']['threshold'] == 0.5
    assert 'detection' not in comparison['flagged'] and 'identity' in comparison['flagged']
    with pytest.raises(BagError, match='no such figure'):
        run_compare(old, new, None, thresholds={'boxes': 0.1})


def drives(directory: Path, camera: tuple[Path, list[int]], changed_drive: str) -> Path:
    """Write four drives' evaluations, the change planted in `changed_drive` only."""
    for name in ('a', 'b', 'c', 'd'):
        write_run(directory / name, camera, changed if name == changed_drive else scene,
                  masks=False)
    return directory


def test_four_drives_name_the_one_that_changed_alone_and_on_ray(
        camera: tuple[Path, list[int]], tmp_path: Path) -> None:
    """
    A change in drive c of four: the per-drive table and the ranking name c.

    Over drives the interval reaches 1.0 (three drives unchanged); drive c's own is flagged.
    Two Ray workers give the figures of one after another.
    """
    old = drives(tmp_path / 'old', camera, '')
    new = drives(tmp_path / 'new', camera, 'c')
    started = time.monotonic()
    flagged, text = compare(old, new, tmp_path / 'one', CompareOptions(), 1, '', print)
    seconds = time.monotonic() - started
    print(f'bag compare: 4 drives of {FRAMES} frames in {seconds:.2f} s')
    fleet = json.loads((tmp_path / 'one' / 'comparison.json').read_text())
    summary = fleet['comparison']
    assert flagged and summary['changed_drives'][0][0] == 'c'
    assert [drive for drive, _score in summary['changed_drives']] == ['c']
    assert 'c: detection' in summary['flagged']
    assert not summary['over_drives']['detection']['flagged']
    assert summary['over_drives']['detection']['interval'][1] == 1.0
    assert '| c |' in text and 'CHANGED' in text
    assert (tmp_path / 'one' / 'c' / 'agreement.png').is_file()
    _flagged, _text = compare(old, new, tmp_path / 'two', CompareOptions(), 2, '', print)
    on_ray = json.loads((tmp_path / 'two' / 'comparison.json').read_text())
    assert on_ray == fleet


def test_the_cli_exits_1_on_a_change_and_0_without(camera: tuple[Path, list[int]],
                                                   tmp_path: Path) -> None:
    """`bag compare` exits 0 for the same outputs, 1 for a planted change, 2 for bad input."""
    old = write_run(tmp_path / 'old', camera, scene)
    same = write_run(tmp_path / 'same', camera, scene)
    new = write_run(tmp_path / 'new', camera, changed)
    assert main(['bag', 'compare', str(old), str(same)]) == 0
    assert main(['bag', 'compare', str(old), str(new), '--output', str(tmp_path / 'out')]) == 1
    assert 'CHANGED' in (tmp_path / 'out' / 'report.md').read_text()
    assert main(['bag', 'compare', str(old), str(tmp_path / 'nothing')]) == 2


def test_bad_runs_are_one_clear_error_each(camera: tuple[Path, list[int]],
                                           tmp_path: Path) -> None:
    """
    A missing or corrupt old outputs bag, frames in one run only, another image topic.

    Each stops the comparison with one line naming what is wrong; nothing is paired.
    """
    old = write_run(tmp_path / 'old', camera, scene)
    new = write_run(tmp_path / 'new', camera, scene)
    missing = tmp_path / 'missing'
    shutil.copytree(old, missing)
    shutil.rmtree(missing / 'outputs')
    with pytest.raises(BagError, match='no outputs bag beside report.json'):
        run_compare(missing, new)
    corrupt = tmp_path / 'corrupt'
    shutil.copytree(old, corrupt)
    for path in (corrupt / 'outputs').iterdir():
        if path.name != 'metadata.yaml':
            path.write_bytes(path.read_bytes()[:200])
    with pytest.raises(BagError, match='cannot read the outputs bag') as error:
        run_compare(corrupt, new)
    assert '\n' not in str(error.value)
    fewer = write_run(tmp_path / 'fewer', camera, scene, skip=frozenset({3, 4, 5}))
    with pytest.raises(BagError, match='replayed different frames'):
        run_compare(old, fewer)
    other = write_run(tmp_path / 'other', camera, scene, topic='/front/image_raw')
    with pytest.raises(BagError, match='compare runs of one camera topic'):
        run_compare(old, other)
