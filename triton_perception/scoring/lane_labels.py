"""Lane labels: a directory of CULane `<stamp_ns>.lines.txt` files, or a TuSimple JSON file."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Sequence

import numpy as np
from numpy.typing import NDArray

from triton_perception.scoring.label_fields import (check_size, CULANE_SUFFIX, entry, json_list,
                                                    LabelError, MAX_LABEL_BYTES, number, read_text,
                                                    stamp_of)
from triton_perception.scoring.label_sets import LaneLabels

# TuSimple marks a row where a lane has no point with a negative x (-2).
TUSIMPLE_NO_POINT = -2.0


def lane_points(values: Sequence[float], where: str) -> NDArray[np.float64]:
    """Return x y pairs as an [N, 2] array; a lane needs two points at least."""
    if len(values) % 2:
        raise LabelError(f'{where}: {len(values)} numbers, expected x y pairs')
    if len(values) < 4:
        raise LabelError(f'{where}: a lane with {len(values) // 2} point; a lane needs 2 at least')
    return np.array(values, dtype=np.float64).reshape(-1, 2)


def read_culane_file(path: Path) -> list[NDArray[np.float64]]:
    """Read one CULane `.lines.txt`: one lane per line, x y pairs separated by spaces."""
    lanes = []
    for line_number, line in enumerate(read_text(path).splitlines(), start=1):
        fields = line.split()
        if not fields:
            continue
        values = [number(value, f'{path}, line {line_number}, field {index + 1} '
                                f'({"xy"[index % 2]})')
                  for index, value in enumerate(fields)]
        lanes.append(lane_points(values, f'{path}, line {line_number}'))
    return lanes


def read_culane(directory: Path) -> LaneLabels:
    """
    Read a directory of CULane `<stamp_ns>.lines.txt` files (searched recursively).

    A file without lanes labels a frame that has none. Raises LabelError on a malformed file,
    on two files of one stamp, on files over MAX_LABEL_BYTES together, and on no lane at all.
    """
    directory = Path(directory)
    files = sorted(directory.rglob('*' + CULANE_SUFFIX))
    if not files:
        raise LabelError(f'{directory}: no *{CULANE_SUFFIX} file: the labels are empty')
    for path in files:
        check_size(path)
    total = sum(path.stat().st_size for path in files)
    if total > MAX_LABEL_BYTES:
        raise LabelError(f'{directory}: {total} bytes of label files is over the '
                         f'{MAX_LABEL_BYTES}-byte limit (MAX_LABEL_BYTES)')
    frames: dict[int, list[NDArray[np.float64]]] = {}
    where_of: dict[int, Path] = {}
    for path in files:
        stamp = stamp_of(path.name, str(path))
        if stamp in frames:
            raise LabelError(f'{path}: a second file of stamp {stamp} (the first: '
                             f'{where_of[stamp]})')
        where_of[stamp] = path
        frames[stamp] = read_culane_file(path)
    if not any(frames.values()):
        raise LabelError(f'{directory}: {len(files)} files but no lane: the labels are empty')
    return LaneLabels(source=directory, form='culane', frames=frames)


def read_tusimple(path: Path) -> LaneLabels:
    """
    Read a TuSimple JSON-lines file: one object per line with raw_file, h_samples and lanes.

    Each lane gives an x per h_samples row, negative (-2) where the lane has no point. Raises
    LabelError on malformed JSON, a missing field, a lane whose length is not that of h_samples,
    a lane with fewer than two points, two lines of one stamp, or a file without lanes.
    """
    path = Path(path)
    frames: dict[int, list[NDArray[np.float64]]] = {}
    h_samples: dict[int, NDArray[np.float64]] = {}
    xs: dict[int, NDArray[np.float64]] = {}
    for line_number, line in enumerate(read_text(path).splitlines(), start=1):
        if not line.strip():
            continue
        where = f'{path}, line {line_number}'
        try:
            record = json.loads(line)
        except json.JSONDecodeError as error:
            raise LabelError(f'{where}, column {error.colno}: malformed JSON ({error.msg})') \
                from None
        raw_file = entry(record, 'raw_file', where)
        if not isinstance(raw_file, str):
            raise LabelError(f'{where}, field raw_file: {raw_file!r} is not a string')
        stamp = stamp_of(raw_file, f'{where}, field raw_file')
        if stamp in frames:
            raise LabelError(f'{where}, field raw_file: a second line of stamp {stamp}')
        rows = np.array([number(value, f'{where}, field h_samples[{index}]') for index, value
                         in enumerate(json_list(entry(record, 'h_samples', where),
                                                f'{where}, field h_samples'))], dtype=np.float64)
        lanes = []
        for lane_index, lane in enumerate(json_list(entry(record, 'lanes', where),
                                                    f'{where}, field lanes')):
            lane_where = f'{where}, field lanes[{lane_index}]'
            lane_x = np.array([number(value, f'{lane_where}[{index}]') for index, value
                               in enumerate(json_list(lane, lane_where))], dtype=np.float64)
            if len(lane_x) != len(rows):
                raise LabelError(f'{lane_where}: {len(lane_x)} x values for {len(rows)} '
                                 'h_samples rows')
            points = lane_x >= 0
            if np.count_nonzero(points) < 2:
                raise LabelError(f'{lane_where}: a lane with {np.count_nonzero(points)} point; '
                                 'a lane needs 2 at least')
            lanes.append(lane_x)
        h_samples[stamp] = rows
        xs[stamp] = np.array(lanes, dtype=np.float64).reshape(-1, len(rows))
        frames[stamp] = [np.stack([lane_x[lane_x >= 0], rows[lane_x >= 0]], axis=1)
                         for lane_x in lanes]
    if not frames:
        raise LabelError(f'{path}: no line: the labels are empty')
    if not any(frames.values()):
        raise LabelError(f'{path}: {len(frames)} frames but no lane: the labels are empty')
    return LaneLabels(source=path, form='tusimple', frames=frames, h_samples=h_samples,
                      tusimple_x=xs)
