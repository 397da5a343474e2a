"""
CVAT's own exports as labels: CVAT for images 1.1, CVAT for video 1.1 and a MOT 1.1 folder.

Small hand-written files in the shapes CVAT's XML annotation format (version 1.1) and its MOT
export give, read as `--labels` reads them, and one clear LabelError for each kind of bad input.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from triton_perception.scoring.labels import (DetectionLabels, label_form, LabelError, LaneLabels,
                                              read_label_sets, read_labels, TrackLabels)

CLASS_NAMES = ('person', 'bicycle', 'car')
STAMP = 1_700_000_000_000_000_000
STEP = 400_000_000  # an --every 10 export of a 25 fps bag: 10 frames apart
EXPORT = [{'index': 10 * number, 'stamp_ns': STAMP + number * STEP,
           'file': f'{STAMP + number * STEP}.png'} for number in range(4)]
HEAD = '<?xml version="1.0" encoding="utf-8"?>\n<annotations>\n<version>1.1</version>\n'


def write(path: Path, text: str) -> Path:
    """Write `text` to `path` (its folder made); return `path`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def export_list(folder: Path, frames: list[dict] = EXPORT) -> None:
    """Write an export's frames.json into `folder`, as `bag export-frames --every 10` writes it."""
    write(folder / 'frames.json', json.dumps({'bag': 'b', 'topic': '/camera/image_raw',
                                              'every': 10, 'frames': frames}))


def images_xml(body: str) -> str:
    """Return a CVAT for images 1.1 document holding `body`."""
    return HEAD + '<meta><task><size>4</size><mode>annotation</mode></task></meta>\n' + body + \
        '</annotations>\n'


def video_xml(body: str, meta: str = '<size>4</size>') -> str:
    """Return a CVAT for video 1.1 document holding `body` (tracks), its task meta `meta`."""
    return HEAD + f'<meta><task>{meta}<mode>interpolation</mode></task></meta>\n' + body + \
        '</annotations>\n'


IMAGES = images_xml(
    f'<image id="0" name="images/{STAMP}.png" width="960" height="540">\n'
    '  <polyline label="lane" occluded="0" points="100.50,540.00;300.00,400.00" z_order="0"/>\n'
    '  <polyline label="lane" occluded="0" points="800,540;650,400;600,350"/>\n'
    '  <box label="Car" occluded="0" xtl="10.00" ytl="20.00" xbr="40.00" ybr="60.00"/>\n'
    '  <box label="car" xtl="0" ytl="0" xbr="5" ybr="5" outside="1" track_id="3"/>\n'
    '  <polygon label="area" points="0,0;1,0;1,1"/>\n'
    '</image>\n'
    f'<image id="1" name="{STAMP + STEP}.png" width="960" height="540">\n'
    '  <box label="person" xtl="1" ytl="2" xbr="3" ybr="4"><attribute name="a">b</attribute>'
    '</box>\n</image>\n'
    f'<image id="2" name="{STAMP + 2 * STEP}.png" width="960" height="540"></image>\n')


def test_cvat_for_images_gives_lanes_and_boxes_keyed_by_the_image_names_stamp(
        tmp_path: Path) -> None:
    """
    Polylines are lanes and boxes detections, each image a labelled frame keyed by its name.

    Box labels match the detector's classes by name; a box outside the image (a track's) and
    other shapes are left out; an image without shapes is a frame with no lane and no box.
    """
    path = write(tmp_path / 'annotations.xml', IMAGES)
    assert label_form(path) == 'cvat' and label_form(tmp_path) == 'cvat'
    lanes, boxes = read_label_sets(path, CLASS_NAMES)
    assert isinstance(lanes, LaneLabels) and lanes.form == 'culane'
    assert sorted(lanes.frames) == [STAMP, STAMP + STEP, STAMP + 2 * STEP]
    np.testing.assert_array_equal(lanes.frames[STAMP][0], [[100.5, 540], [300, 400]])
    assert lanes.frames[STAMP][1].shape == (3, 2) and lanes.frames[STAMP + STEP] == []
    assert isinstance(boxes, DetectionLabels) and boxes.keyed_by == 'stamp_ns'
    np.testing.assert_array_equal(boxes.frames[STAMP], [[10, 20, 40, 60, 2, 0]])
    np.testing.assert_array_equal(boxes.frames[STAMP + STEP], [[1, 2, 3, 4, 0, 0]])
    assert boxes.frames[STAMP + 2 * STEP].shape == (0, 6)
    assert boxes.sizes[STAMP] == (960, 540)
    assert [type(labels) for labels in read_label_sets(tmp_path, CLASS_NAMES)] == \
        [LaneLabels, DetectionLabels]  # the export's folder, holding annotations.xml
    with pytest.raises(LabelError, match='holds LaneLabels and DetectionLabels'):
        read_labels(path, CLASS_NAMES)


def test_a_file_of_polylines_only_gives_lanes_alone(tmp_path: Path) -> None:
    """A kind the file holds no shape of is not labelled: lanes alone need no class names."""
    path = write(tmp_path / 'lanes.xml', images_xml(
        f'<image id="0" name="{STAMP}.png"><polyline label="lane" points="1,2;3,4"/></image>'))
    labels = read_labels(path)
    assert isinstance(labels, LaneLabels) and list(labels.frames) == [STAMP]


TRACKS = video_xml(
    '<track id="0" label="car" source="manual">\n'
    '  <box frame="0" keyframe="1" outside="0" occluded="0" xtl="10" ytl="20" xbr="30" '
    'ybr="40"/>\n'
    '  <box frame="1" keyframe="0" outside="0" occluded="1" xtl="12" ytl="20" xbr="32" '
    'ybr="40"/>\n'
    '  <box frame="2" keyframe="1" outside="1" occluded="0" xtl="14" ytl="20" xbr="34" '
    'ybr="40"/>\n'
    '</track>\n'
    '<track id="1" label="car" source="manual">\n'
    '  <box frame="2" keyframe="1" outside="0" occluded="0" xtl="50" ytl="50" xbr="60" '
    'ybr="70"><attribute name="parked">false</attribute></box>\n'
    '  <box frame="3" keyframe="1" outside="1" occluded="0" xtl="50" ytl="50" xbr="60" '
    'ybr="70"/>\n'
    '</track>\n')


def test_cvat_for_video_gives_tracks_on_the_topics_frames_through_frames_json(
        tmp_path: Path) -> None:
    """
    Each track's boxes come on the topic frame their task frame maps to, 1-based.

    Task frame k is the k-th exported file by name; with --every 10, task frame 1 is the
    topic's frame 11. An outside box ends a track; occluded boxes have visibility 0.
    """
    path = write(tmp_path / 'annotations.xml', TRACKS)
    export_list(tmp_path)
    labels = read_labels(path, CLASS_NAMES)
    assert isinstance(labels, TrackLabels) and labels.keyed_by == 'index'
    assert sorted(labels.frames) == [1, 11, 21]
    np.testing.assert_array_equal(labels.frames[1], [[10, 20, 30, 40, -1, 0, 1]])
    np.testing.assert_array_equal(labels.frames[11], [[12, 20, 32, 40, -1, 0, 0]])
    np.testing.assert_array_equal(labels.frames[21], [[50, 50, 60, 70, -1, 1, 1]])


def test_the_task_order_is_the_file_names_not_the_list_order(tmp_path: Path) -> None:
    """CVAT orders a task's images by name: frames.json listed in another order maps the same."""
    path = write(tmp_path / 'annotations.xml', TRACKS)
    export_list(tmp_path, list(reversed(EXPORT)))
    assert sorted(read_labels(path).frames) == [1, 11, 21]


def mot_folder(folder: Path, rows: str) -> Path:
    """Write CVAT's MOT 1.1 export unpacked (gt/gt.txt, gt/labels.txt) and frames.json."""
    write(folder / 'gt' / 'gt.txt', rows)
    write(folder / 'gt' / 'labels.txt', 'car\n')
    export_list(folder)
    return folder


def test_a_mot_export_numbered_by_the_task_maps_through_frames_json(tmp_path: Path) -> None:
    """With --every 10, the export's task frame 2 (1-based) is the topic's frame 11."""
    folder = mot_folder(tmp_path / 'tracks', '1,1,10,20,20,20,1,1,1.0\n2,1,12,20,20,20,1,1,1\n'
                                             '4,2,50,50,10,20,1,1,1\n')
    assert label_form(folder) == 'mot_task'
    labels = read_labels(folder)
    assert isinstance(labels, TrackLabels) and sorted(labels.frames) == [1, 11, 21, 31]
    np.testing.assert_array_equal(labels.frames[11], [[12, 20, 32, 40, 1, 1, 1]])
    assert labels.frames[21].shape == (0, 7)


def test_a_mot_export_numbered_by_stamp_maps_through_frames_json(tmp_path: Path) -> None:
    """A MOT export of images named by stamp (CVAT numbers a frame by a numeric name) maps too."""
    folder = mot_folder(tmp_path / 'tracks', f'{STAMP + STEP},1,10,20,20,20,1,1,1\n'
                                             f'{STAMP + 3 * STEP},1,12,20,20,20,1,1,1\n')
    labels = read_labels(folder)
    assert isinstance(labels, TrackLabels) and sorted(labels.frames) == [11, 21, 31]
    assert len(labels.frames[11]) == 1 and len(labels.frames[31]) == 1


@pytest.mark.parametrize(('text', 'message'), [
    ('<annotations><image', 'malformed XML'),
    ('<?xml version="1.0"?><!DOCTYPE a [<!ENTITY e "x">]><annotations/>', 'declares XML entities'),
    ('<labels><version>1.1</version></labels>', r'root element is <labels>'),
    ('<annotations><version>1.0</version></annotations>', "'1.0', expected 1.1"),
    (images_xml(''), r'no <image> or <track> element'),
    (images_xml(f'<image id="0" name="{STAMP}.png"/><track id="0" label="car"/>'),
     'both <image> and <track>'),
    (images_xml('<image id="0" name="frame_000000.png"/>'), 'does not name a frame stamp'),
    (images_xml(f'<image id="0" name="{STAMP}.png"/><image id="1" name="{STAMP}.jpg"/>'),
     r'<image> 2 .*a second image of stamp'),
    (images_xml(f'<image id="0" name="{STAMP}.png"><box label="car" xtl="5" ytl="1" xbr="5" '
                'ybr="3"/></image>'), r'<box> 1: xbr must exceed xtl'),
    (images_xml(f'<image id="0" name="{STAMP}.png"><box label="car" ytl="1" xbr="5" '
                'ybr="3"/></image>'), r"<box> 1: no 'xtl' attribute"),
    (images_xml(f'<image id="0" name="{STAMP}.png"><box label="truck" xtl="1" ytl="1" xbr="5" '
                'ybr="3"/></image>'), r"labels that match none .*'truck' \(1 boxes\)"),
    (images_xml(f'<image id="0" name="{STAMP}.png"><polyline label="lane" points="1,2"/>'
                '</image>'), r'<polyline> 1, points: a lane with 1 point'),
    (images_xml(f'<image id="0" name="{STAMP}.png"><polyline label="lane" points="1,2;3"/>'
                '</image>'), r"point 2 is '3', expected x,y"),
    (images_xml(f'<image id="0" name="{STAMP}.png"><polyline label="l" points="1,2;3,4" '
                'outside="yes"/></image>'), r"outside='yes', expected \"0\" or \"1\""),
    (images_xml(f'<image id="0" name="{STAMP}.png"><polygon label="a" points="1,2;3,4;5,6"/>'
                '</image>'), 'no box or polyline: the labels are empty'),
])
def test_a_bad_cvat_for_images_file_is_refused_in_one_line(tmp_path: Path, text: str,
                                                           message: str) -> None:
    """Each fault is one LabelError naming the file, the element and what is wrong."""
    path = write(tmp_path / 'annotations.xml', text)
    with pytest.raises(LabelError, match=message) as error:
        read_label_sets(path, CLASS_NAMES)
    assert str(path) in str(error.value) and '\n' not in str(error.value)


def box(frame: int, outside: int = 0) -> str:
    """Return a video track's box at `frame`."""
    return f'<box frame="{frame}" outside="{outside}" xtl="1" ytl="1" xbr="5" ybr="5"/>'


@pytest.mark.parametrize(('text', 'message', 'frames_json'), [
    (TRACKS, 'copy the frames.json that `bag export-frames` wrote', False),
    (video_xml(f'<track label="car">{box(0)}</track>'), r"<track> 1 \(id None\): no 'id'", True),
    (video_xml(f'<track id="1" label="car">{box(0)}{box(1, 1)}</track><track id="1" '
               f'label="car">{box(2)}</track>'), r'<track> 2 .*a second track of id 1', True),
    (video_xml(f'<track id="1" label="car">{box(0)}{box(0)}</track>'),
     r'<box frame="0">: a second box of frame 0', True),
    (video_xml(f'<track id="1" label="car">{box(0)}{box(3)}</track>'),
     'no box for frames 1 to 2 between frames 0 and 3, and none outside', True),
    (video_xml(f'<track id="1" label="car">{box(4)}</track>'),
     r'task frame 4 is not one of the task', True),
    (video_xml(f'<track id="1" label="car">{box(0)}</track>', '<size>5</size>'),
     r'<size> is 5 frames, .*frames.json lists 4: make the task from every image', True),
    (video_xml('<track id="1" label="lane"><polyline frame="0" points="1,2;3,4"/></track>'),
     'a polyline track: lanes are read from "CVAT for images 1.1"', True),
    (video_xml(f'<track id="1" label="car">{box(0, 1)}</track>'),
     'no box inside the frame in any track', True),
    (HEAD + '<meta><project><id>1</id></project></meta>'
     f'<track id="1" label="car">{box(0)}</track></annotations>', 'a project export', True),
])
def test_a_bad_cvat_for_video_file_is_refused_in_one_line(tmp_path: Path, text: str,
                                                          message: str, frames_json: bool) -> None:
    """Each fault of a video file, or of its frames.json, is one LabelError saying what to do."""
    path = write(tmp_path / 'annotations.xml', text)
    if frames_json:
        export_list(tmp_path)
    with pytest.raises(LabelError, match=message) as error:
        read_label_sets(path, CLASS_NAMES)
    assert '\n' not in str(error.value)


@pytest.mark.parametrize(('rows', 'message'), [
    ('5,1,10,20,20,20,1,1,1\n', r'frames 5 are past the task\'s 4 frames'),
    (f'1,1,10,20,20,20,1,1,1\n{STAMP},1,10,20,20,20,1,1,1\n', 'neither stamps of'),
    (f'{STAMP + 7},1,10,20,20,20,1,1,1\n', 'neither stamps of'),
])
def test_a_mot_export_that_is_not_of_the_export_is_refused(tmp_path: Path, rows: str,
                                                           message: str) -> None:
    """Frames past the task, stamps the export lacks, or a mix of the two are refused."""
    with pytest.raises(LabelError, match=message):
        read_labels(mot_folder(tmp_path / 'tracks', rows))


def test_a_gt_txt_beside_frames_json_or_numbered_by_stamp_is_ambiguous(tmp_path: Path) -> None:
    """
    A gt.txt with the export's frames.json beside it may count the task's frames: refused.

    So is a plain gt.txt whose frames are stamps (which would otherwise span billions of
    frames); each error says to pass the folder with frames.json.
    """
    folder = mot_folder(tmp_path / 'tracks', '1,1,10,20,20,20,1,1,1\n')
    with pytest.raises(LabelError, match=r'frames.json is beside it.*pass --labels'):
        read_labels(folder / 'gt' / 'gt.txt')
    plain = write(tmp_path / 'plain' / 'gt.txt', f'{STAMP},1,10,20,20,20,1,1,1\n')
    with pytest.raises(LabelError, match='are header stamps, not frame counts'):
        read_labels(plain)
    empty = tmp_path / 'no_list'
    write(empty / 'gt' / 'gt.txt', '1,1,10,20,20,20,1,1,1\n')
    with pytest.raises(LabelError, match='copy the frames.json'):
        read_labels(empty)
