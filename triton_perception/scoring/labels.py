"""
Label files as labelling tools export them, parsed into arrays keyed by frame.

The forms read: COCO instances JSON (boxes), MOTChallenge `gt.txt` (tracks), a directory of
CULane `<stamp_ns>.lines.txt` files and a TuSimple JSON-lines file (lanes), and CVAT's own
exports: "CVAT for images 1.1" XML (lanes as polylines, boxes), "CVAT for video 1.1" XML
(tracks) and a "MOT 1.1" export's folder (tracks), the last two numbered by the labelling task's
frames and read through the export's frames.json (cvat_labels, mot_labels, exported_frames).
COCO, CULane, TuSimple and CVAT for images frames are keyed by the frame's header stamp in ns,
taken from the exported frame file's name; tracks by their 1-based index in the image topic.
Every fault of a file is one `LabelError` naming the file, the line (or the JSON field, or the
XML element) and the field.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Iterable, Sequence, TYPE_CHECKING

import numpy as np

from triton_perception.scoring.cvat_labels import CVAT_FILE, read_cvat
from triton_perception.scoring.label_fields import (check_size, class_indices, class_key,
                                                    CULANE_SUFFIX, entry, integer, json_document,
                                                    json_list, json_object, LabelError, listed,
                                                    MAX_LABEL_BYTES, number, read_text,
                                                    stamp_of, unmatched_classes)
from triton_perception.scoring.label_sets import (DetectionLabels, KEYED_BY_INDEX, KEYED_BY_STAMP,
                                                  Labels, LaneLabels, TrackLabels)
from triton_perception.scoring.lane_labels import read_culane, read_culane_file, read_tusimple
from triton_perception.scoring.mot_labels import MOT_FOLDER_FILES, read_mot, read_task_mot

if TYPE_CHECKING:
    from triton_perception.system import JsonValue

__all__ = ['DetectionLabels', 'KEYED_BY_INDEX', 'KEYED_BY_STAMP', 'LabelError', 'Labels',
           'LaneLabels', 'MAX_LABEL_BYTES', 'TrackLabels', 'label_form', 'read_coco',
           'read_label_sets', 'read_labels', 'read_mot', 'resolve_frames']


def read_coco(path: Path, class_names: Sequence[str]) -> DetectionLabels:
    """
    Read a COCO instances JSON file; categories match `class_names` by name.

    Names match ignoring case and surrounding spaces. A category that has annotations and
    matches no class name is a LabelError listing every such category; an unused category is
    ignored. Boxes are COCO's [left, top, width, height], returned as corners. Raises LabelError
    on any malformed entry, on images that name no frame stamp, and on labels with no box.
    """
    path = Path(path)
    document = json_document(path, read_text(path))
    if not isinstance(document, dict):
        raise LabelError(f'{path}: a COCO file is a JSON object with images, annotations and '
                         'categories')
    classes = class_indices(class_names)
    category_names = _coco_categories(path, document)
    stamps, sizes, frames = _coco_images(path, document)
    unmatched: dict[str, int] = {}
    for number_, value in enumerate(json_list(entry(document, 'annotations', str(path)),
                                              f'{path}: annotations')):
        where = f'{path}: annotations[{number_}]'
        annotation = json_object(value, where)
        image_id = integer(entry(annotation, 'image_id', where), f'{where}.image_id')
        category_id = integer(entry(annotation, 'category_id', where), f'{where}.category_id')
        box = json_list(entry(annotation, 'bbox', where), f'{where}.bbox')
        if len(box) != 4:
            raise LabelError(f'{where}.bbox: expected [left, top, width, height], found {box!r}')
        left, top, width, height = (number(value, f'{where}.bbox[{index}]')
                                    for index, value in enumerate(box))
        if width <= 0 or height <= 0:
            raise LabelError(f'{where}.bbox: width and height must be positive, found {box!r}')
        if image_id not in stamps:
            raise LabelError(f'{where}.image_id: {image_id} is no image of images[]')
        if category_id not in category_names:
            raise LabelError(f'{where}.category_id: {category_id} is no category of categories[]')
        name = category_names[category_id]
        class_id = classes.get(class_key(name))
        if class_id is None:
            unmatched[name] = unmatched.get(name, 0) + 1
            continue
        crowd = integer(annotation.get('iscrowd', 0), f'{where}.iscrowd')
        frames[stamps[image_id]].append(
            [left, top, left + width, top + height, float(class_id), float(crowd != 0)])
    if unmatched:
        raise unmatched_classes(path, 'categories', unmatched, class_names)
    if not frames:
        raise LabelError(f'{path}: no images: the labels are empty')
    if not any(frames.values()):
        raise LabelError(f'{path}: {len(frames)} images but no annotation: the labels are empty')
    return DetectionLabels(source=path, class_names=tuple(class_names), sizes=sizes,
                           frames={stamp: np.array(rows, dtype=np.float64).reshape(-1, 6)
                                   for stamp, rows in frames.items()})


def _coco_categories(path: Path, document: JsonValue) -> dict[int, str]:
    """Return a COCO file's category names by id; LabelError on a malformed category."""
    category_names: dict[int, str] = {}
    for number_, category in enumerate(json_list(entry(document, 'categories', str(path)),
                                                 f'{path}: categories')):
        where = f'{path}: categories[{number_}]'
        name = entry(category, 'name', where)
        if not isinstance(name, str):
            raise LabelError(f'{where}.name: {name!r} is not a string')
        category_names[integer(entry(category, 'id', where), f'{where}.id')] = name
    return category_names


def _coco_images(path: Path, document: JsonValue) -> tuple[
        dict[int, int], dict[int, tuple[int, int]], dict[int, list[list[float]]]]:
    """
    Return a COCO file's frame stamps by image id, the sizes it gives and an empty frame each.

    The stamp comes from the image's file name; two images of one stamp are a LabelError.
    """
    stamps: dict[int, int] = {}
    sizes: dict[int, tuple[int, int]] = {}
    frames: dict[int, list[list[float]]] = {}
    for number_, value in enumerate(json_list(entry(document, 'images', str(path)),
                                              f'{path}: images')):
        where = f'{path}: images[{number_}]'
        image = json_object(value, where)
        image_id = integer(entry(image, 'id', where), f'{where}.id')
        file_name = entry(image, 'file_name', where)
        if not isinstance(file_name, str):
            raise LabelError(f'{where}.file_name: {file_name!r} is not a string')
        stamp = stamp_of(file_name, f'{where}.file_name')
        if stamp in frames:
            raise LabelError(f'{where}.file_name: a second image of stamp {stamp}')
        stamps[image_id] = stamp
        frames[stamp] = []
        if 'width' in image and 'height' in image:
            sizes[stamp] = (integer(image['width'], f'{where}.width'),
                            integer(image['height'], f'{where}.height'))
    return stamps, sizes, frames


def first_json_line(text: str) -> JsonValue:
    """Return the first non-blank line parsed as JSON, or None if it does not parse."""
    for line in text.splitlines():
        if line.strip():
            try:
                record: JsonValue = json.loads(line)
            except json.JSONDecodeError:
                return None
            return record
    return None


def label_form(path: Path) -> str:
    """
    Tell a label path's form by its shape: 'coco', 'mot', 'mot_task', 'culane', 'tusimple', 'cvat'.

    A directory holding CVAT's `annotations.xml` is 'cvat', one holding a MOT export's
    `gt/gt.txt` (or `gt.txt`) 'mot_task', any other CULane; a `.xml` file is CVAT's (for images
    or video, told apart when read); a `.txt` file is MOTChallenge (`.lines.txt` alone: one
    CULane file); a JSON file is TuSimple when its first line is an object with raw_file, else
    COCO. Only the first line of a JSON file is read here, after the size check.
    """
    path = Path(path)
    if path.is_dir():
        if (path / CVAT_FILE).is_file():
            return 'cvat'
        if any((path / name).is_file() for name in MOT_FOLDER_FILES):
            return 'mot_task'
        return 'culane'
    check_size(path)
    name = path.name.lower()
    if name.endswith(CULANE_SUFFIX):
        return 'culane'
    if name.endswith('.txt'):
        return 'mot'
    if name.endswith('.xml'):
        return 'cvat'
    if name.endswith('.jsonl'):
        return 'tusimple'
    if name.endswith('.json'):
        with path.open('rb') as stream:
            first = stream.readline(1 << 20).decode('utf-8', errors='replace')
        record = first_json_line(first)
        return 'tusimple' if isinstance(record, dict) and 'raw_file' in record else 'coco'
    raise LabelError(f'{path}: not a label form this reads: a COCO instances .json file, a '
                     'MOTChallenge gt .txt file, a directory of CULane .lines.txt files, a '
                     'TuSimple JSON-lines .json/.jsonl file, a CVAT for images or video 1.1 '
                     ".xml file, or the folder of a CVAT export (annotations.xml, or MOT 1.1's "
                     'gt/gt.txt) with the frames.json of the frames it labels')


def read_label_sets(path: Path | str,
                    class_names: Sequence[str] | None = None) -> tuple[Labels, ...]:
    """
    Read the labels a `--labels PATH` names, recognising its form (see label_form).

    Returns one label set per kind the file holds: CVAT for images gives its lanes and its boxes,
    every other form one set. `class_names` are the detector's classes, needed for boxes (COCO,
    CVAT for images). Raises LabelError on any fault of the path or the file.
    """
    path = Path(path)
    if not path.exists():
        raise LabelError(f'{path}: no such label file or directory')
    form = label_form(path)
    if form == 'cvat':
        return read_cvat(path / CVAT_FILE if path.is_dir() else path, class_names)
    if form == 'coco':
        if class_names is None:
            raise LabelError(f"{path}: a COCO file needs the detector's class names to match "
                             'its categories')
        return (read_coco(path, class_names),)
    if form == 'mot':
        return (read_mot(path),)
    if form == 'mot_task':
        return (read_task_mot(path),)
    if form == 'tusimple':
        return (read_tusimple(path),)
    if path.is_dir():
        return (read_culane(path),)
    stamp = stamp_of(path.name, str(path))
    lanes = read_culane_file(path)
    if not lanes:
        raise LabelError(f'{path}: no lane: the labels are empty')
    return (LaneLabels(source=path, form='culane', frames={stamp: lanes}),)


def read_labels(path: Path | str, class_names: Sequence[str] | None = None) -> Labels:
    """
    Read a label file of one kind (see read_label_sets): boxes, tracks or lanes.

    Returns DetectionLabels, TrackLabels or LaneLabels keyed by frame (`keyed_by`: stamp in ns,
    or 1-based index for tracks). Raises LabelError on any fault, and on a file of two kinds.
    """
    sets = read_label_sets(path, class_names)
    if len(sets) > 1:
        raise LabelError(f'{path}: holds {" and ".join(type(labels).__name__ for labels in sets)}'
                         ': read it with read_label_sets')
    return sets[0]


def resolve_frames(labels: Labels | Iterable[int], keyed_by: str | None,
                   bag_frames: Sequence[tuple[int, int]]) -> dict[int, tuple[int, int]]:
    """
    Map each labelled frame to the bag's frame (index, stamp_ns) it names.

    `bag_frames` lists the image topic's frames as (1-based index, header stamp in ns).
    `labels` is a Labels value (its own `keyed_by` is used; pass None) or the label keys with
    `keyed_by` 'stamp_ns' or 'index'. Raises LabelError listing the labels that name no frame
    of the bag.
    """
    if isinstance(labels, (DetectionLabels, TrackLabels, LaneLabels)):
        keys: list[int] = sorted(labels.frames)
        keyed_by = labels.keyed_by
        source = f'{labels.source}: '
    else:
        keys = sorted(labels)
        source = ''
    if keyed_by == KEYED_BY_STAMP:
        by_key = {stamp: (index, stamp) for index, stamp in bag_frames}
    elif keyed_by == KEYED_BY_INDEX:
        by_key = {index: (index, stamp) for index, stamp in bag_frames}
    else:
        raise ValueError(f'keyed_by is {keyed_by!r}, expected {KEYED_BY_STAMP!r} or '
                         f'{KEYED_BY_INDEX!r}')
    missing = [key for key in keys if key not in by_key]
    if missing:
        what = 'stamps (ns)' if keyed_by == KEYED_BY_STAMP else 'frame indices (1-based)'
        span = (f"; the bag's frames run from {min(by_key)} to {max(by_key)}"
                if by_key else '; the bag has no frame')
        raise LabelError(f'{source}{len(missing)} of {len(keys)} labelled frames name no frame '
                         f'of the bag, by {what}: {listed(missing)}{span}')
    return {key: by_key[key] for key in keys}
