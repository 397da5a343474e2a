"""
Label files as labelling tools export them, parsed into arrays keyed by frame.

Four forms are read: COCO instances JSON (boxes), MOTChallenge `gt.txt` (tracks), a directory
of CULane `<stamp_ns>.lines.txt` files and a TuSimple JSON-lines file (lanes). COCO, CULane and
TuSimple frames are keyed by the frame's header stamp in ns, taken from the exported frame file's
name; MOTChallenge frames by their 1-based index in the image topic. Every fault of a file is
one `LabelError` naming the file, the line (or the JSON field) and the field.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Iterable, Sequence, TYPE_CHECKING

import numpy as np

from triton_perception.scoring.label_fields import (check_size, CULANE_SUFFIX, entry, integer,
                                                    json_document, json_list, json_object,
                                                    LabelError, listed, MAX_LABEL_BYTES, number,
                                                    read_text, stamp_of)
from triton_perception.scoring.label_sets import (DetectionLabels, KEYED_BY_INDEX, KEYED_BY_STAMP,
                                                  Labels, LaneLabels, TrackLabels)
from triton_perception.scoring.lane_labels import read_culane, read_culane_file, read_tusimple

if TYPE_CHECKING:
    from triton_perception.system import JsonValue

__all__ = ['DetectionLabels', 'KEYED_BY_INDEX', 'KEYED_BY_STAMP', 'LabelError', 'Labels',
           'LaneLabels', 'MAX_LABEL_BYTES', 'TrackLabels', 'label_form', 'read_coco',
           'read_labels', 'read_mot', 'resolve_frames']


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
    classes = {name.strip().lower(): index for index, name in enumerate(class_names)}
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
        class_id = classes.get(name.strip().lower())
        if class_id is None:
            unmatched[name] = unmatched.get(name, 0) + 1
            continue
        crowd = integer(annotation.get('iscrowd', 0), f'{where}.iscrowd')
        frames[stamps[image_id]].append(
            [left, top, left + width, top + height, float(class_id), float(crowd != 0)])
    if unmatched:
        raise LabelError(
            f"{path}: categories that match none of the detector's {len(class_names)} class names "
            f'(by name, ignoring case): ' + listed([f'{name!r} ({count} boxes)'
                                                    for name, count in sorted(unmatched.items())])
            + f"; the detector's classes are {listed(list(class_names))}")
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


MOT_FIELDS = ('frame', 'id', 'left', 'top', 'width', 'height', 'conf', 'class', 'visibility')


def read_mot(path: Path) -> TrackLabels:
    """
    Read a MOTChallenge `gt.txt`: frame, id, left, top, width, height[, conf, class, visibility].

    Missing trailing columns default to conf 1, class -1 and visibility 1; further columns
    (MOT15's world coordinates) are ignored. Raises LabelError on a malformed line, a frame
    below 1, a box without area, a track id twice in one frame, or a file without boxes.
    """
    path = Path(path)
    rows: dict[int, list[list[float]]] = {}
    seen: set[tuple[int, int]] = set()
    for line_number, line in enumerate(read_text(path).splitlines(), start=1):
        text = line.strip()
        if not text:
            continue
        values = [value.strip() for value in text.replace(' ', ',').split(',') if value.strip()]
        if len(values) < 6:
            raise LabelError(f'{path}, line {line_number}: {len(values)} fields, expected '
                             f'{", ".join(MOT_FIELDS)}')
        where = [f'{path}, line {line_number}, field {name}' for name in MOT_FIELDS]
        frame = integer(values[0], where[0])
        track_id = integer(values[1], where[1])
        left, top, width, height = (number(values[index], where[index]) for index in range(2, 6))
        conf = number(values[6], where[6]) if len(values) > 6 else 1.0
        category = number(values[7], where[7]) if len(values) > 7 else -1.0
        visibility = number(values[8], where[8]) if len(values) > 8 else 1.0
        if frame < 1:
            raise LabelError(f'{where[0]}: {frame} is below 1: MOTChallenge counts frames from 1')
        if width <= 0 or height <= 0:
            raise LabelError(f'{path}, line {line_number}: width and height must be positive, '
                             f'found {width} x {height}')
        if (frame, track_id) in seen:
            raise LabelError(f'{where[1]}: track {track_id} appears twice in frame {frame}')
        seen.add((frame, track_id))
        if conf == 0:
            continue
        rows.setdefault(frame, []).append([left, top, left + width, top + height, category,
                                           float(track_id), visibility])
    if not rows:
        raise LabelError(f'{path}: no box to score: the labels are empty')
    frames = {frame: np.array(rows.get(frame, []), dtype=np.float64).reshape(-1, 7)
              for frame in range(min(rows), max(rows) + 1)}
    return TrackLabels(source=path, frames=frames)


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
    Tell a label path's form by its shape: 'coco', 'mot', 'culane' or 'tusimple'.

    A directory is CULane; a `.txt` file is MOTChallenge (`.lines.txt` alone: one CULane
    file); a JSON file is TuSimple when its first line is an object with raw_file, else COCO.
    Only the first line is read here, after the size check.
    """
    path = Path(path)
    if path.is_dir():
        return 'culane'
    check_size(path)
    name = path.name.lower()
    if name.endswith(CULANE_SUFFIX):
        return 'culane'
    if name.endswith('.txt'):
        return 'mot'
    if name.endswith('.jsonl'):
        return 'tusimple'
    if name.endswith('.json'):
        with path.open('rb') as stream:
            first = stream.readline(1 << 20).decode('utf-8', errors='replace')
        record = first_json_line(first)
        return 'tusimple' if isinstance(record, dict) and 'raw_file' in record else 'coco'
    raise LabelError(f'{path}: not a label form this reads: a COCO instances .json file, a '
                     'MOTChallenge gt .txt file, a directory of CULane .lines.txt files or a '
                     'TuSimple JSON-lines .json/.jsonl file')


def read_labels(path: Path | str, class_names: Sequence[str] | None = None) -> Labels:
    """
    Read the labels a `--labels PATH` names, recognising its form (see label_form).

    `class_names` are the detector's classes, needed for a COCO file. Returns DetectionLabels,
    TrackLabels or LaneLabels keyed by frame (`keyed_by`: stamp in ns, or 1-based index for
    MOTChallenge). Raises LabelError on any fault of the path or the file.
    """
    path = Path(path)
    if not path.exists():
        raise LabelError(f'{path}: no such label file or directory')
    form = label_form(path)
    if form == 'coco':
        if class_names is None:
            raise LabelError(f"{path}: a COCO file needs the detector's class names to match "
                             'its categories')
        return read_coco(path, class_names)
    if form == 'mot':
        return read_mot(path)
    if form == 'tusimple':
        return read_tusimple(path)
    if path.is_dir():
        return read_culane(path)
    stamp = stamp_of(path.name, str(path))
    lanes = read_culane_file(path)
    if not lanes:
        raise LabelError(f'{path}: no lane: the labels are empty')
    return LaneLabels(source=path, form='culane', frames={stamp: lanes})


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
