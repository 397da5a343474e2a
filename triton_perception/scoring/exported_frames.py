"""
The list of exported frames (`frames.json`) that maps a labelling task's frames to the topic's.

`bag export-frames` writes it beside the images; labels that count the labelling task's frames
(CVAT for video 1.1, a MOT export numbered by the task) are read through it, so it is defined
here, below bag/, and bag/frame_export.py writes what this reads.

A labelling task made from the exported images orders them by name: CVAT sorts the uploaded
files lexicographically by default ("Sorting method: Lexicographical"), and the image `id` of
its XML is "the index in lexical order of images" (CVAT's XML annotation format, version 1.1).
Task frame k (0-based) is therefore the k-th exported file in name order; the exported names are
`<stamp_ns>.<ext>`, all of one length, so name order is stamp order.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from triton_perception.scoring.label_fields import (entry, integer, json_document, json_list,
                                                    json_object, LabelError, read_text, stamp_of)

FRAMES_FILE = 'frames.json'


@dataclass(frozen=True)
class ExportedFrame:
    """One exported frame: its 0-based index in the image topic, header stamp (ns), file name."""

    index: int
    stamp_ns: int
    file: str


@dataclass(frozen=True)
class TaskFrames:
    """The frames of a labelling task made from an export, in the task's order (by file name)."""

    source: Path
    frames: tuple[ExportedFrame, ...]

    def topic_frame(self, task_frame: int, where: str) -> int:
        """Return the 1-based topic frame (MOTChallenge's count) of 0-based `task_frame`."""
        if not 0 <= task_frame < len(self.frames):
            raise LabelError(f"{where}: task frame {task_frame} is not one of the task's "
                             f'{len(self.frames)} frames (0 to {len(self.frames) - 1}) that '
                             f'{self.source} lists: make the task from every exported image')
        return self.frames[task_frame].index + 1

    def by_stamp(self) -> dict[int, int]:
        """Return each exported frame's 1-based topic frame by its header stamp (ns)."""
        return {frame.stamp_ns: frame.index + 1 for frame in self.frames}


def read_task_frames(path: Path) -> TaskFrames:
    """
    Read an export's frames.json into the task's frame order.

    Raises LabelError on malformed JSON, a missing field, a file name that names no stamp, or two
    entries of one file, index or stamp.
    """
    document = json_document(path, read_text(path))
    frames = []
    for number_, value in enumerate(json_list(entry(document, 'frames', str(path)),
                                              f'{path}: frames')):
        where = f'{path}: frames[{number_}]'
        record = json_object(value, where)
        file = entry(record, 'file', where)
        if not isinstance(file, str):
            raise LabelError(f'{where}.file: {file!r} is not a string')
        stamp = integer(entry(record, 'stamp_ns', where), f'{where}.stamp_ns')
        if stamp_of(file, f'{where}.file') != stamp:
            raise LabelError(f'{where}: file {file!r} does not name stamp_ns {stamp}')
        frames.append(ExportedFrame(integer(entry(record, 'index', where), f'{where}.index'),
                                    stamp, file))
    if not frames:
        raise LabelError(f'{path}: no frame: the export is empty')
    for field in ('index', 'stamp_ns', 'file'):
        values = [getattr(frame, field) for frame in frames]
        if len(set(values)) != len(values):
            raise LabelError(f'{path}: two frames of one {field}: not a frames.json that '
                             '`bag export-frames` writes')
    return TaskFrames(path, tuple(sorted(frames, key=lambda frame: frame.file)))


def task_frames_for(labels: Path) -> TaskFrames:
    """
    Return the frames.json that maps a task-numbered label file's frames (LabelError if none).

    It is looked for in the label folder (a directory `labels`, or the folder holding the file).
    """
    folder = labels if labels.is_dir() else labels.parent
    path = folder / FRAMES_FILE
    if not path.is_file():
        raise LabelError(f"{labels}: its frames count the labelling task's frames, which only "
                         f"the export's {FRAMES_FILE} maps to the topic's: copy the "
                         f'{FRAMES_FILE} that `bag export-frames` wrote into {folder}')
    return read_task_frames(path)
