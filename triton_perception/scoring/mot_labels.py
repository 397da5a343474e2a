"""
MOTChallenge tracks: a `gt.txt` numbered by the image topic, or a MOT export numbered by a task.

A MOTChallenge `gt.txt` counts the image topic's frames from 1. A labelling tool's MOT export
counts the frames of its task instead: CVAT's "MOT 1.1" export (a zip of `gt/gt.txt` and
`gt/labels.txt`) is written by Datumaro's MotSeqGtConverter, whose frame is
`cast(item.id, int, 1 + idx)`: the image's name when the name is a number, else the image's
1-based place in the task. An image task made from `bag export-frames` (names `<stamp_ns>.png`)
therefore gets the frames' stamps, a task whose images were renamed (or made from a video) its
own 1-based count. Both are read from the export's folder through the export's frames.json
(exported_frames.py).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from triton_perception.scoring.exported_frames import FRAMES_FILE, task_frames_for, TaskFrames
from triton_perception.scoring.label_fields import integer, LabelError, listed, number, read_text
from triton_perception.scoring.label_sets import TrackLabels

MOT_FIELDS = ('frame', 'id', 'left', 'top', 'width', 'height', 'conf', 'class', 'visibility')
# A frame number this large is a header stamp in ns, not a count of frames (10^12 frames at
# 30 Hz are a thousand years).
STAMP_LIKE = 10 ** 12
MOT_FOLDER_FILES = ('gt/gt.txt', 'gt.txt')  # where a MOT export's folder holds its gt.txt

Rows = dict[int, list[list[float]]]


def mot_rows(path: Path) -> Rows:
    """
    Read a MOTChallenge file's rows by their frame numbers, as the file gives them.

    Columns: frame, id, left, top, width, height[, conf, class, visibility]; missing trailing
    columns default to conf 1, class -1 and visibility 1; further columns (MOT15's world
    coordinates) are ignored. Rows of conf 0 (MOTChallenge's "ignore this entry") are left out.
    Each row is [x1, y1, x2, y2, class, track_id, visibility]. Raises LabelError on a malformed
    line, a frame below 1, a box without area, a track id twice in one frame, or no box at all.
    """
    rows: Rows = {}
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
    return rows


def track_labels(source: Path, rows: Rows, frames: list[int]) -> TrackLabels:
    """Return TrackLabels over `frames` (1-based topic frames), empty where `rows` has none."""
    return TrackLabels(source=source, frames={
        frame: np.array(rows.get(frame, []), dtype=np.float64).reshape(-1, 7)
        for frame in frames})


def read_mot(path: Path) -> TrackLabels:
    """
    Read a MOTChallenge `gt.txt` whose frames count the image topic's frames from 1.

    The sequence is labelled densely: every frame from the first to the last labelled one is a
    labelled frame. Besides mot_rows' faults, raises LabelError on a frame number that is a
    stamp, and on a file with the export's frames.json beside it or above it (CVAT's layout,
    `gt/gt.txt`), whose frames may count the labelling task's: its folder is read instead.
    """
    path = Path(path)
    for folder in (path.parent, path.parent.parent):
        if (folder / FRAMES_FILE).is_file():
            raise LabelError(
                f'{path}: {folder / FRAMES_FILE} is beside it, so its frames may count the '
                f"labelling task's frames: pass --labels {folder} to read them through "
                f"{FRAMES_FILE}, or move {FRAMES_FILE} away if they count the topic's frames")
    rows = mot_rows(path)
    stamps = [frame for frame in rows if frame >= STAMP_LIKE]
    if stamps:
        raise LabelError(f'{path}: frames {listed(sorted(stamps))} are header stamps, not frame '
                         f"counts (CVAT's MOT export numbers a frame by its image name): put "
                         f"{path.name} in a folder with the export's {FRAMES_FILE} and pass "
                         'the folder')
    return track_labels(path, rows, list(range(min(rows), max(rows) + 1)))


def read_task_mot(folder: Path) -> TrackLabels:
    """
    Read a MOT export's folder (`gt/gt.txt` or `gt.txt`) with the export's frames.json.

    Each frame is the image's stamp (CVAT's MOT 1.1 export of images named by stamp) or its
    1-based place in the task's order (exported_frames.py), one or the other for the whole
    file. The labelled frames are the task's frames from the first to the last labelled one,
    as topic frames: frames the export left out are not labelled. Raises LabelError on a
    folder without gt.txt or frames.json, a frame that is neither, or a file mixing the two.
    """
    folder = Path(folder)
    found = [folder / name for name in MOT_FOLDER_FILES if (folder / name).is_file()]
    if not found:
        raise LabelError(f"{folder}: no gt/gt.txt or gt.txt: a MOT export's folder holds "
                         "CVAT's MOT 1.1 zip unpacked (gt/gt.txt, gt/labels.txt)")
    path = found[0]
    task = task_frames_for(folder)
    rows = mot_rows(path)
    by_stamp = task.by_stamp()
    if all(frame in by_stamp for frame in rows):
        key_of = by_stamp
    elif all(frame < STAMP_LIKE for frame in rows):
        key_of = {number_ + 1: task.topic_frame(number_, f'{path}, field frame')
                  for number_ in range(len(task.frames))}
        beyond = sorted(frame for frame in rows if frame not in key_of)
        if beyond:
            raise LabelError(f"{path}: frames {listed(beyond)} are past the task's "
                             f'{len(task.frames)} frames that {task.source} lists: make the '
                             'task from every exported image, in name order')
    else:
        unknown = sorted(frame for frame in rows if frame not in by_stamp)
        raise LabelError(f'{path}: frames {listed(unknown)} are neither stamps of '
                         f'{task.source} nor all task frame numbers (1 to {len(task.frames)}): '
                         'the file does not belong to this export')
    return task_tracks(path, {key_of[frame]: frame_rows for frame, frame_rows in rows.items()},
                       task)


def task_tracks(source: Path, rows: Rows, task: TaskFrames) -> TrackLabels:
    """
    Return tracks of a labelling task's frames, `rows` keyed by 1-based topic frame.

    The labelled frames are the task's frames from the first to the last with a box: a frame
    the export left out was never labelled, one of the task without a box has no object.
    """
    first, last = min(rows), max(rows)
    frames = sorted(frame.index + 1 for frame in task.frames)
    return track_labels(source, rows, [frame for frame in frames if first <= frame <= last])
