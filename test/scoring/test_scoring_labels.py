"""
Label readers of triton_perception.scoring.labels.

The four forms, their recognition, frame resolution against a bag, and one clear LabelError for
every kind of bad input.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from triton_perception.scoring import lane_labels as lane_labels_module
from triton_perception.scoring.labels import (DetectionLabels, label_form, LabelError,
                                              LaneLabels, MAX_LABEL_BYTES, read_labels,
                                              resolve_frames, TrackLabels)

CLASS_NAMES = ('person', 'bicycle', 'car', 'traffic light')
STAMP = 1_700_000_000_040_000_000


def coco(**changes: Any) -> dict:
    """
    Return a small COCO document of two frames named by stamp, with `changes` applied.

    Its category names differ in case from the detector's, and one category has no boxes.
    """
    document = {
        'images': [{'id': 1, 'file_name': f'frames/{STAMP}.png', 'width': 1280, 'height': 720},
                   {'id': 2, 'file_name': f'{STAMP + 40_000_000}.jpg'}],
        'categories': [{'id': 3, 'name': 'Car'}, {'id': 10, 'name': 'traffic light'},
                       {'id': 11, 'name': 'unused'}],
        'annotations': [
            {'id': 1, 'image_id': 1, 'category_id': 3, 'bbox': [10, 20, 30, 40], 'iscrowd': 0},
            {'id': 2, 'image_id': 1, 'category_id': 10, 'bbox': [100, 5, 8, 20]},
            {'id': 3, 'image_id': 2, 'category_id': 3, 'bbox': [0.5, 1.5, 2, 3]}]}
    document.update(changes)
    return document


def write(path: Path, content: Any) -> Path:
    """Write `content` (text, or JSON for anything else) to `path`; return `path`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content if isinstance(content, str) else json.dumps(content, indent=1))
    return path


def test_coco_boxes_are_keyed_by_stamp_with_categories_matched_by_name(tmp_path: Path) -> None:
    """
    COCO boxes are keyed by the stamp in the file name and become corner boxes.

    Categories match the detector's classes by name, whatever the case; sizes are kept where
    given.
    """
    labels = read_labels(write(tmp_path / 'instances.json', coco()), CLASS_NAMES)
    assert isinstance(labels, DetectionLabels) and labels.keyed_by == 'stamp_ns'
    assert sorted(labels.frames) == [STAMP, STAMP + 40_000_000]
    np.testing.assert_array_equal(labels.frames[STAMP], [[10, 20, 40, 60, 2, 0],
                                                         [100, 5, 108, 25, 3, 0]])
    np.testing.assert_array_equal(labels.frames[STAMP + 40_000_000], [[0.5, 1.5, 2.5, 4.5, 2, 0]])
    assert labels.sizes == {STAMP: (1280, 720)}


def test_coco_category_that_matches_no_class_is_listed(tmp_path: Path) -> None:
    """
    A category with boxes that matches no class name is refused, naming it and its box count.

    A category without boxes is no fault.
    """
    document = coco()
    document['categories'].append({'id': 12, 'name': 'pedestrian'})
    document['annotations'].append({'id': 4, 'image_id': 1, 'category_id': 12,
                                    'bbox': [1, 1, 5, 5]})
    with pytest.raises(LabelError, match=r"match none of the detector's 4 class names.*"
                                         r"'pedestrian' \(1 boxes\)") as error:
        read_labels(write(tmp_path / 'labels.json', document), CLASS_NAMES)
    assert 'unused' not in str(error.value)  # a category without boxes is no fault


@pytest.mark.parametrize('content, message', [
    ('{"images": [\n  {"id": 1,}\n]}', r'labels.json, line 2, column \d+: malformed JSON'),
    (coco(images=[{'id': 1}]), r"images\[0\]: missing field 'file_name'"),
    (coco(images=[{'id': 1, 'file_name': 'frame_0001.png'}]),
     r"images\[0\].file_name: file name 'frame_0001.png' does not name a frame stamp"),
    (coco(annotations=[{'id': 1, 'image_id': 1, 'category_id': 3, 'bbox': [1, 2, 'x', 4]}]),
     r"annotations\[0\].bbox\[2\]: 'x' is not a number"),
    (coco(annotations=[{'id': 1, 'image_id': 1, 'category_id': 3, 'bbox': [1, 2, 0, 4]}]),
     r'annotations\[0\].bbox: width and height must be positive'),
    (coco(annotations=[{'id': 1, 'image_id': 9, 'category_id': 3, 'bbox': [1, 2, 3, 4]}]),
     r'annotations\[0\].image_id: 9 is no image'),
    (coco(annotations=[]), 'no annotation: the labels are empty'),
    (coco(images=[], annotations=[]), 'no images: the labels are empty'),
    ([1, 2], 'a COCO file is a JSON object'),
])
def test_malformed_coco_is_one_label_error(tmp_path: Path, content: Any, message: str) -> None:
    """Each kind of malformed COCO file is one LabelError naming the file and the place."""
    with pytest.raises(LabelError, match=message) as error:
        read_labels(write(tmp_path / 'labels.json', content), CLASS_NAMES)
    assert str(tmp_path / 'labels.json') in str(error.value)
    assert isinstance(error.value, ValueError)


def test_coco_needs_the_class_names(tmp_path: Path) -> None:
    """COCO labels without the detector's class names are refused, saying they are needed."""
    with pytest.raises(LabelError, match='needs the detector'):
        read_labels(write(tmp_path / 'labels.json', coco()))


MOT = """1,1,10,20,30,40,1,1,1
1,2,100,100,10,10,1,1,0.5
3,1,12,20,30,40,1,1,1
3,5,0,0,5,5,0,1,1
"""


def test_mot_rows_are_keyed_by_one_based_index_over_the_labelled_span(tmp_path: Path) -> None:
    """
    The rows of a MOTChallenge file are keyed by one-based frame index, the whole span included.

    A frame without rows is labelled empty, and conf 0 marks a row to ignore.
    """
    labels = read_labels(write(tmp_path / 'gt' / 'gt.txt', MOT))
    assert isinstance(labels, TrackLabels) and labels.keyed_by == 'index'
    assert sorted(labels.frames) == [1, 2, 3]
    np.testing.assert_array_equal(labels.frames[1][:, :6], [[10, 20, 40, 60, 1, 1],
                                                            [100, 100, 110, 110, 1, 2]])
    assert labels.frames[2].shape == (0, 7)  # labelled densely: no object in frame 2
    # conf 0 marks an entry to ignore.
    np.testing.assert_array_equal(labels.frames[3][:, 5], [1])


@pytest.mark.parametrize('content, message', [
    ('1,1,10,20,30,40,1,1,1\n2,1,10,abc,30,40,1,1,1\n',
     r'line 2, field top: .abc. is not a number'),
    ('1,1,10,20,30\n', 'line 1: 5 fields'),
    ('0,1,10,20,30,40,1,1,1\n', 'line 1, field frame: 0 is below 1'),
    ('1,1.5,10,20,30,40,1,1,1\n', r'line 1, field id: .1\.5. is not a whole number'),
    ('1,1,10,20,30,40\n1,1,10,20,30,40\n', 'line 2, field id: track 1 appears twice in frame 1'),
    ('1,1,10,20,-3,40,1,1,1\n', 'line 1: width and height must be positive'),
    ('\n\n', 'no box to score: the labels are empty'),
])
def test_malformed_mot_is_one_label_error(tmp_path: Path, content: str, message: str) -> None:
    """Each kind of malformed MOT file is one LabelError naming the line and the field."""
    with pytest.raises(LabelError, match=message):
        read_labels(write(tmp_path / 'gt.txt', content))


def test_culane_directory(tmp_path: Path) -> None:
    """
    A CULane directory is read recursively, one frame a *.lines.txt named by stamp.

    Blank lines are skipped, an empty file is a frame without lanes, other files are ignored.
    """
    write(tmp_path / 'lanes' / f'{STAMP}.lines.txt', '10 580 20.5 500 30 420 \n\n700 580 650 400\n')
    write(tmp_path / 'lanes' / 'sub' / f'{STAMP + 1}.lines.txt', '')
    write(tmp_path / 'lanes' / 'readme.txt', 'not a label')
    labels = read_labels(tmp_path / 'lanes')
    assert isinstance(labels, LaneLabels) and labels.form == 'culane'
    assert sorted(labels.frames) == [STAMP, STAMP + 1]
    np.testing.assert_array_equal(labels.frames[STAMP][0], [[10, 580], [20.5, 500], [30, 420]])
    assert len(labels.frames[STAMP]) == 2 and labels.frames[STAMP + 1] == []


@pytest.mark.parametrize('content, message', [
    ('10 580 20 500\n30 400\n', r'line 2: a lane with 1 point; a lane needs 2 at least'),
    ('10 580 20 500 30\n', 'line 1: 5 numbers, expected x y pairs'),
    ('10 580 20 nan\n', r'line 1, field 4 \(y\): .nan. is not a finite number'),
    ('10 580 20 y\n', r'line 1, field 4 \(y\): .y. is not a number'),
])
def test_malformed_culane_is_one_label_error(tmp_path: Path, content: str, message: str) -> None:
    """Each kind of malformed CULane file is one LabelError naming the file, line and field."""
    write(tmp_path / 'lanes' / f'{STAMP}.lines.txt', content)
    with pytest.raises(LabelError, match=message) as error:
        read_labels(tmp_path / 'lanes')
    assert f'{STAMP}.lines.txt' in str(error.value)


def test_culane_directory_without_lanes_is_empty(tmp_path: Path) -> None:
    """A CULane directory with no label files, or with files but no lane, is refused as empty."""
    (tmp_path / 'lanes').mkdir()
    with pytest.raises(LabelError, match='no \\*.lines.txt file: the labels are empty'):
        read_labels(tmp_path / 'lanes')
    write(tmp_path / 'lanes' / f'{STAMP}.lines.txt', '\n')
    with pytest.raises(LabelError, match='1 files but no lane: the labels are empty'):
        read_labels(tmp_path / 'lanes')


def tusimple_line(stamp: int, lanes: list[list[float]], rows: list[float]) -> str:
    """Return one TuSimple label line for frame `stamp`."""
    return json.dumps({'raw_file': f'clips/0313-1/{stamp}.jpg', 'h_samples': rows,
                       'lanes': lanes}) + '\n'


def test_tusimple_lines(tmp_path: Path) -> None:
    """
    The lines of a TuSimple file become lanes at their h_samples rows, skipping -2 entries.

    The raw x values and rows are kept for TuSimple's own scoring.
    """
    rows = [240, 250, 260, 270]
    path = write(tmp_path / 'test_label.json',
                 tusimple_line(STAMP, [[-2, 300, 310, 320], [500, 490, -2, 470]], rows)
                 + tusimple_line(STAMP + 1, [[1, 2, 3, 4]], rows))
    assert label_form(path) == 'tusimple'
    labels = read_labels(path)
    assert isinstance(labels, LaneLabels) and labels.form == 'tusimple'
    np.testing.assert_array_equal(labels.frames[STAMP][0], [[300, 250], [310, 260], [320, 270]])
    np.testing.assert_array_equal(labels.frames[STAMP][1], [[500, 240], [490, 250], [470, 270]])
    np.testing.assert_array_equal(labels.tusimple_x[STAMP][0], [-2, 300, 310, 320])
    np.testing.assert_array_equal(labels.h_samples[STAMP + 1], rows)


@pytest.mark.parametrize('content, message', [
    (tusimple_line(STAMP, [[-2, -2, 310, -2]], [1, 2, 3, 4]),
     r'line 1, field lanes\[0\]: a lane with 1 point'),
    (tusimple_line(STAMP, [[300, 310]], [1, 2, 3]),
     r'line 1, field lanes\[0\]: 2 x values for 3 h_samples rows'),
    (tusimple_line(STAMP, [[300, 310]], [1, 2]) + '{"raw_file": "x/1.jpg", "lanes": [}\n',
     r'line 2, column \d+: malformed JSON'),
    (tusimple_line(STAMP, [[300, 310]], [1, 2]) + '{"raw_file": "x/2.jpg", "lanes": []}\n',
     "line 2: missing field 'h_samples'"),
    (tusimple_line(STAMP, [[300, 'a']], [1, 2]), r"lanes\[0\]\[1\]: 'a' is not a number"),
    (tusimple_line(STAMP, [], [1, 2]), 'no lane: the labels are empty'),
])
def test_malformed_tusimple_is_one_label_error(tmp_path: Path, content: str,
                                               message: str) -> None:
    """Each kind of malformed TuSimple file is one LabelError naming the line and the field."""
    with pytest.raises(LabelError, match=message):
        read_labels(write(tmp_path / 'labels.jsonl', content))


@pytest.mark.parametrize('name, content, form', [
    ('instances.json', coco(), 'coco'),
    ('label_data.json', tusimple_line(STAMP, [[1, 2]], [1, 2]), 'tusimple'),
    ('gt.txt', MOT, 'mot'),
    (f'{STAMP}.lines.txt', '1 2 3 4\n', 'culane'),
])
def test_label_form_is_told_by_the_files_form(tmp_path: Path, name: str, content: Any,
                                              form: str) -> None:
    """The label form is told by the file's content and name: COCO, TuSimple, MOT or CULane."""
    assert label_form(write(tmp_path / name, content)) == form


def test_an_unknown_form_or_a_missing_path_is_a_label_error(tmp_path: Path) -> None:
    """A file of no known form, or a path that does not exist, is a LabelError saying which."""
    with pytest.raises(LabelError, match='not a label form this reads'):
        read_labels(write(tmp_path / 'labels.yaml', 'x: 1'))
    with pytest.raises(LabelError, match='no such label file'):
        read_labels(tmp_path / 'missing.json')


@pytest.mark.parametrize('name', ['gt.txt', 'instances.json', 'labels.jsonl'])
def test_a_2_gb_label_file_is_refused_by_its_size_before_parsing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    """A label file over the size limit is refused by its size alone, never opened for parsing."""
    path = tmp_path / name
    with path.open('wb') as stream:
        stream.truncate(2 * 1024 ** 3)  # sparse: no disk is used
    assert path.stat().st_size > MAX_LABEL_BYTES

    def no_reading(*_: Any, **__: Any) -> None:
        raise AssertionError('the file was opened for parsing')
    monkeypatch.setattr(Path, 'read_text', no_reading)
    monkeypatch.setattr(Path, 'open', no_reading)
    with pytest.raises(LabelError, match=f'{2 * 1024 ** 3} bytes is over the '
                                         f'{MAX_LABEL_BYTES}-byte limit'):
        read_labels(path, CLASS_NAMES)


def test_a_culane_directory_over_the_limit_is_refused(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """A CULane directory whose files together exceed the size limit is refused, with the total."""
    monkeypatch.setattr(lane_labels_module, 'MAX_LABEL_BYTES', 30)
    for offset in range(3):
        write(tmp_path / 'lanes' / f'{STAMP + offset}.lines.txt', '1 2 3 4 5 6\n')
    with pytest.raises(LabelError, match='36 bytes of label files is over the 30-byte limit'):
        read_labels(tmp_path / 'lanes')


def test_resolve_frames_by_stamp_and_by_index(tmp_path: Path) -> None:
    """Labelled frames resolve to the bag's frames by stamp or by one-based index."""
    bag = [(1, STAMP - 40_000_000), (2, STAMP), (3, STAMP + 40_000_000), (4, STAMP + 80_000_000)]
    labels = read_labels(write(tmp_path / 'labels.json', coco()), CLASS_NAMES)
    assert resolve_frames(labels, None, bag) == {STAMP: (2, STAMP),
                                                 STAMP + 40_000_000: (3, STAMP + 40_000_000)}
    tracks = read_labels(write(tmp_path / 'gt.txt', MOT))
    assert resolve_frames(tracks, None, bag) == {1: bag[0], 2: bag[1], 3: bag[2]}
    assert resolve_frames([4], 'index', bag) == {4: bag[3]}


def test_labels_naming_no_frame_of_the_bag_are_listed(tmp_path: Path) -> None:
    """Labels naming frames the bag lacks are refused, listing the first ten of them."""
    labels = read_labels(write(tmp_path / 'labels.json', coco()), CLASS_NAMES)
    bag = [(1, STAMP), (2, STAMP + 33_000_000)]
    with pytest.raises(LabelError, match=f'1 of 2 labelled frames name no frame of the bag, by '
                                         f'stamps \\(ns\\): {STAMP + 40_000_000};'):
        resolve_frames(labels, None, bag)
    many = list(range(100, 125))
    with pytest.raises(LabelError, match='25 of 25 .* 100, 101, .*109 and 15 more'):
        resolve_frames(many, 'index', bag)


def test_label_error_is_a_value_error() -> None:
    """A LabelError is a ValueError: callers catching bad values catch it too."""
    assert issubclass(LabelError, ValueError)
