"""
CVAT's own XML exports: "CVAT for images 1.1" (lanes and boxes) and "CVAT for video 1.1" (tracks).

Read as CVAT's XML annotation format, version 1.1, describes them (docs.cvat.ai, "XML
annotation format"; the exporters of cvat/apps/dataset_manager/formats/cvat.py):

- CVAT for images: `<image id name width height>` per image of the task, `id` its index in
  lexical order and `name` the uploaded file's path, holding shapes: `<box label xtl ytl xbr
  ybr>` and `<polyline label points="x0,y0;x1,y1;...">`. The image's name is the exported
  frame's `<stamp_ns>.<ext>`, which names the frame: no frames.json is needed. Each polyline is a
  lane line, each box a detection whose label matches a detector class by name (as COCO
  categories do). A track's shapes are split by image (with `track_id`); one marked
  `outside="1"` is not in the image and is left out. Every image of the file is a labelled
  frame of each kind the file holds: an image without polylines has no lane, one without boxes
  no object (as a CULane file without lines, or a COCO image without annotations). Other shapes
  (polygons, points, masks, tags) are not read.
- CVAT for video: `<track id label>` per object holding a `<box frame xtl ytl xbr ybr outside
  occluded keyframe>` for every frame of the track: CVAT's exporter interpolates between the
  keyframes and writes each frame (`keyframe="0"` for the interpolated ones, from
  TrackManager.get_interpolated_shapes). A box with `outside="1"` ends the track (the object left
  the frame) until a later box brings it back; shapes drawn outside a track come as tracks of
  one frame ended by an outside box. `frame` counts the task's frames, mapped to the topic's
  through the export's frames.json (exported_frames.py). Only box tracks are read; polyline
  tracks are refused (lanes are read from CVAT for images, where tracks are split by image).

Any fault is one LabelError naming the file, the element and what to do. The XML is parsed by
the standard library's expat parser, which resolves no external entity; a document declaring
entities is refused (CVAT writes none).
"""
from __future__ import annotations

from pathlib import Path
from typing import Sequence
import xml.etree.ElementTree as ElementTree

import numpy as np
from numpy.typing import NDArray

from triton_perception.scoring.exported_frames import task_frames_for, TaskFrames
from triton_perception.scoring.label_fields import (class_indices, class_key, integer, LabelError,
                                                    number, read_text, stamp_of,
                                                    unmatched_classes)
from triton_perception.scoring.label_sets import (DetectionLabels, Labels, LaneLabels,
                                                  TrackLabels)
from triton_perception.scoring.lane_labels import lane_points
from triton_perception.scoring.mot_labels import task_tracks

CVAT_VERSION = '1.1'
CVAT_FILE = 'annotations.xml'  # what CVAT's export zip holds
FLAGS = {'0': False, '1': True}  # CVAT writes booleans as str(int(value))
# Shapes of a video track that are not read as tracks; polylines are refused (see the docstring).
LANE_SHAPE = 'polyline'


def cvat_document(path: Path) -> ElementTree.Element:
    """
    Parse a CVAT XML file and return its `<annotations>` root, version 1.1.

    Raises LabelError on text that is not XML (with its line and column), an entity
    declaration, another root element, or another version.
    """
    text = read_text(path)
    if '<!ENTITY' in text:
        raise LabelError(f'{path}: declares XML entities, which CVAT never writes: export the '
                         'task again from CVAT')
    try:
        root = ElementTree.fromstring(text)
    except ElementTree.ParseError as error:
        raise LabelError(f'{path}: malformed XML ({error.msg}): export the task again from '
                         'CVAT') from None
    if root.tag != 'annotations':
        raise LabelError(f"{path}: the root element is <{root.tag}>, not CVAT's <annotations>: "
                         'export the task as "CVAT for images 1.1" or "CVAT for video 1.1"')
    version = (root.findtext('version') or '').strip()
    if version != CVAT_VERSION:
        raise LabelError(f'{path}: <version> is {version or "missing"!r}, expected '
                         f'{CVAT_VERSION}: export the task as "CVAT for images 1.1" or "CVAT for '
                         'video 1.1"')
    return root


def read_cvat(path: Path, class_names: Sequence[str] | None) -> tuple[Labels, ...]:
    """
    Read a CVAT for images or CVAT for video 1.1 file, told apart by its elements.

    A file of images returns its LaneLabels and DetectionLabels (those it holds), a file of
    tracks its TrackLabels. Raises LabelError on a file of both, of neither, or any fault.
    """
    path = Path(path)
    root = cvat_document(path)
    images, tracks = root.findall('image'), root.findall('track')
    if images and tracks:
        raise LabelError(f'{path}: both <image> and <track> elements: CVAT writes one or the '
                         'other; export the task again as "CVAT for images 1.1" or "CVAT for '
                         'video 1.1"')
    if tracks:
        return (cvat_video(path, root, task_frames_for(path)),)
    if images:
        return cvat_images(path, images, class_names)
    raise LabelError(f'{path}: no <image> or <track> element: the labels are empty')


def attribute(element: ElementTree.Element, name: str, where: str) -> str:
    """Return an element's attribute, or raise LabelError naming the element and attribute."""
    value = element.get(name)
    if value is None:
        raise LabelError(f'{where}: no {name!r} attribute')
    return value


def flag(element: ElementTree.Element, name: str, where: str) -> bool:
    """Return a 0/1 attribute as a bool; a missing one is 0."""
    value = element.get(name, '0').strip()
    if value not in FLAGS:
        raise LabelError(f'{where}: {name}={value!r}, expected "0" or "1"')
    return FLAGS[value]


def box_corners(element: ElementTree.Element, where: str) -> list[float]:
    """Return a `<box>`'s [xtl, ytl, xbr, ybr]; LabelError on a box without area."""
    corners = [number(attribute(element, name, where), f'{where}, {name}')
               for name in ('xtl', 'ytl', 'xbr', 'ybr')]
    if corners[2] <= corners[0] or corners[3] <= corners[1]:
        raise LabelError(f'{where}: xbr must exceed xtl and ybr ytl, found {corners}')
    return corners


def polyline_points(element: ElementTree.Element, where: str) -> NDArray[np.float64]:
    """Return a `<polyline points="x0,y0;x1,y1;...">` as an [N, 2] array of two points at least."""
    values: list[float] = []
    for number_, pair in enumerate(attribute(element, 'points', where).split(';')):
        coordinates = pair.split(',')
        if len(coordinates) != 2:
            raise LabelError(f'{where}, points: point {number_ + 1} is {pair!r}, expected x,y')
        values += [number(value, f'{where}, points: point {number_ + 1}')
                   for value in coordinates]
    return lane_points(values, f'{where}, points')


def cvat_images(path: Path, images: list[ElementTree.Element],
                class_names: Sequence[str] | None) -> tuple[Labels, ...]:
    """
    Return the lanes (polylines) and boxes of CVAT for images' `<image>` elements, by stamp.

    Each kind is returned when the file holds at least one shape of it. Raises LabelError on an
    image whose name names no stamp, two images of one stamp, a malformed shape, boxes without
    the detector's class names, or box labels that match no class.
    """
    classes = class_indices(class_names or ())
    lanes: dict[int, list[NDArray[np.float64]]] = {}
    boxes: dict[int, list[list[float]]] = {}
    sizes: dict[int, tuple[int, int]] = {}
    unmatched: dict[str, int] = {}
    for number_, image in enumerate(images):
        name = image.get('name', '')
        where = f'{path}: <image> {number_ + 1} (id {image.get("id")!r}, name {name!r})'
        stamp = stamp_of(attribute(image, 'name', where), f'{where}, name')
        if stamp in lanes:
            raise LabelError(f'{where}: a second image of stamp {stamp}')
        if image.get('width') is not None and image.get('height') is not None:
            sizes[stamp] = (integer(image.get('width'), f'{where}, width'),
                            integer(image.get('height'), f'{where}, height'))
        lanes[stamp], boxes[stamp] = [], []
        for shape_number, shape in enumerate(image):
            shape_where = f'{where}, <{shape.tag}> {shape_number + 1}'
            if shape.tag not in ('box', LANE_SHAPE) or flag(shape, 'outside', shape_where):
                continue
            if shape.tag == LANE_SHAPE:
                lanes[stamp].append(polyline_points(shape, shape_where))
                continue
            label = attribute(shape, 'label', shape_where)
            corners = box_corners(shape, shape_where)
            class_id = classes.get(class_key(label))
            if class_id is None:
                unmatched[label] = unmatched.get(label, 0) + 1
                continue
            boxes[stamp].append(corners + [float(class_id), 0.0])
    read: list[Labels] = []
    if any(lanes.values()):
        read.append(LaneLabels(source=path, form='culane', frames=lanes))
    if any(boxes.values()) or unmatched:
        if class_names is None:
            raise LabelError(f"{path}: boxes need the detector's class names to match their "
                             'labels')
        if unmatched:
            raise unmatched_classes(path, 'labels', unmatched, class_names)
        read.append(DetectionLabels(
            source=path, class_names=tuple(class_names), sizes=sizes,
            frames={stamp: np.array(rows, dtype=np.float64).reshape(-1, 6)
                    for stamp, rows in boxes.items()}))
    if not read:
        raise LabelError(f'{path}: {len(images)} images but no box or polyline: the labels are '
                         'empty (other shapes are not read)')
    return tuple(read)


def check_task_size(path: Path, root: ElementTree.Element, task: TaskFrames) -> None:
    """
    Refuse a task that is not made from the whole export, where its meta says its size.

    `<meta><task>` (or `<job>`) gives `size`, the task's frame count; without a frame filter or
    start frame that is the number of uploaded images, which must be the export's.
    """
    if root.find('meta/project') is not None:
        raise LabelError(f"{path}: a project export (<meta><project>) numbers each task's frames "
                         'apart: export the task itself as "CVAT for video 1.1"')
    meta = root.find('meta/task')
    meta = root.find('meta/job') if meta is None else meta
    if meta is None or meta.findtext('size') is None:
        return
    if (meta.findtext('frame_filter') or '').strip() or \
            (meta.findtext('start_frame') or '0').strip() != '0':
        return
    size = integer(meta.findtext('size'), f'{path}: <meta><{meta.tag}><size>')
    if size != len(task.frames):
        raise LabelError(f'{path}: <meta><{meta.tag}><size> is {size} frames, {task.source} lists '
                         f'{len(task.frames)}: make the task from every image of that export')


def cvat_video(path: Path, root: ElementTree.Element, task: TaskFrames) -> TrackLabels:
    """
    Return CVAT for video's box tracks as TrackLabels keyed by 1-based topic frame.

    Rows are [x1, y1, x2, y2, -1 (tracks are scored class-agnostic), track id, visibility: 0 if
    occluded else 1, as CVAT's MOT export writes it]. The labelled frames are the task's frames
    from the first to the last box. Raises LabelError on a track without an id, two tracks of
    one id, two boxes of one frame in a track, a track that skips frames without an outside
    box, a polyline track, a frame past the export, or no box at all.
    """
    check_task_size(path, root, task)
    rows: dict[int, list[list[float]]] = {}
    track_ids: set[int] = set()
    for number_, track in enumerate(root.findall('track')):
        where = f'{path}: <track> {number_ + 1} (id {track.get("id")!r})'
        track_id = integer(attribute(track, 'id', where), f'{where}, id')
        if track_id in track_ids:
            raise LabelError(f'{where}: a second track of id {track_id}')
        track_ids.add(track_id)
        if track.find(LANE_SHAPE) is not None:
            raise LabelError(f'{where}: a polyline track: lanes are read from "CVAT for images '
                             '1.1", which writes a track\'s polylines per image; export that too')
        boxes: dict[int, tuple[bool, list[float], bool]] = {}
        for box in track.findall('box'):
            frame = integer(attribute(box, 'frame', where), f'{where}, <box> frame')
            box_where = f'{where}, <box frame="{frame}">'
            if frame in boxes:
                raise LabelError(f'{box_where}: a second box of frame {frame} in one track')
            boxes[frame] = (flag(box, 'outside', box_where), box_corners(box, box_where),
                            flag(box, 'occluded', box_where))
        frames = sorted(boxes)
        for before, after in zip(frames, frames[1:]):
            if after > before + 1 and not boxes[before][0]:
                raise LabelError(
                    f'{where}: no box for frames {before + 1} to {after - 1} between frames '
                    f'{before} and {after}, and none outside: CVAT for video writes every frame '
                    'of a track (interpolated ones with keyframe="0"); export the task again')
        for frame in frames:
            outside, corners, occluded = boxes[frame]
            if not outside:
                rows.setdefault(task.topic_frame(frame, f'{where}, <box frame="{frame}">'),
                                []).append(corners + [-1.0, float(track_id),
                                                      0.0 if occluded else 1.0])
    if not rows:
        raise LabelError(f'{path}: no box inside the frame in any track: the labels are empty')
    return task_tracks(path, rows, task)
