"""
The clip's own labels (CULane files, MOTChallenge gt.txt) written as CVAT's exports would be.

Each converter takes an export's frames.json (what `bag export-frames --every N` wrote) and the
labels of the frames it holds, and writes what CVAT gives for a task made from those images,
their names kept: "CVAT for images 1.1" XML (lanes as polylines, cars as boxes, coordinates to
two decimals as CVAT writes them), "CVAT for video 1.1" XML (a track per car, a box per labelled
frame and an outside box where the car is not labelled in the next task frame, as CVAT ends a
track), and "MOT 1.1" (gt/gt.txt numbered by the task's frames, 1-based, or by the images'
stamps as CVAT's exporter does for images named by a number; ids renumbered in order of first
appearance, as Datumaro's MotSeqGtConverter does). The task's frames are the exported images in
name order (CVAT's default sorting).
"""
from __future__ import annotations

import json
from pathlib import Path
import shutil
from xml.sax.saxutils import quoteattr

HEAD = '<?xml version="1.0" encoding="utf-8"?>\n<annotations>\n  <version>1.1</version>\n'


def task_frames(export: Path) -> list[dict]:
    """Return the export's frames in the task's order: by file name."""
    frames = json.loads((export / 'frames.json').read_text())['frames']
    return sorted(frames, key=lambda frame: frame['file'])


def culane_lanes(directory: Path) -> dict[int, list[list[tuple[float, float]]]]:
    """Return each CULane file's lanes as (x, y) points, by the stamp its name carries."""
    lanes = {}
    for path in sorted(directory.glob('*.lines.txt')):
        values = [[float(value) for value in line.split()]
                  for line in path.read_text().splitlines() if line.strip()]
        lanes[int(path.name.split('.')[0])] = [list(zip(line[::2], line[1::2]))
                                               for line in values]
    return lanes


def gt_rows(gt: Path) -> dict[int, list[list[float]]]:
    """Return gt.txt's rows (id, left, top, width, height) by 0-based topic frame index."""
    rows: dict[int, list[list[float]]] = {}
    for line in gt.read_text().splitlines():
        if line.strip():
            values = [float(value) for value in line.split(',')]
            rows.setdefault(int(values[0]) - 1, []).append(values[1:6])
    return rows


def meta(mode: str, size: int) -> str:
    """Return the `<meta>` CVAT writes for a task of `size` frames in `mode`."""
    return (f'  <meta>\n    <task>\n      <id>1</id>\n      <name>clip</name>\n'
            f'      <size>{size}</size>\n      <mode>{mode}</mode>\n'
            f'      <start_frame>0</start_frame>\n      <stop_frame>{size - 1}</stop_frame>\n'
            '      <frame_filter></frame_filter>\n    </task>\n  </meta>\n')


def images_xml(frames: list[dict], shapes: dict[int, list[str]]) -> str:
    """Return CVAT for images of a task made from `frames`: each image with its shapes."""
    body = ''.join(
        f'  <image id="{number}" name={quoteattr(frame["file"])} width="960" height="540">\n'
        + ''.join(f'    {shape}\n' for shape in shapes[frame['stamp_ns']]) + '  </image>\n'
        for number, frame in enumerate(frames))
    return HEAD + meta('annotation', len(frames)) + body + '</annotations>\n'


def box_attributes(left: float, top: float, width: float, height: float) -> str:
    """Return a box's corners as CVAT writes them, to two decimals."""
    return (f'xtl="{left:.2f}" ytl="{top:.2f}" xbr="{left + width:.2f}" '
            f'ybr="{top + height:.2f}"')


def cvat_lanes(culane: Path, export: Path) -> str:
    """Return CVAT for images of the exported frames that have CULane files: a polyline a lane."""
    lanes = culane_lanes(culane)
    frames = [frame for frame in task_frames(export) if frame['stamp_ns'] in lanes]
    return images_xml(frames, {stamp: [
        '<polyline label="lane" source="manual" occluded="0" points="'
        + ';'.join(f'{x:.2f},{y:.2f}' for x, y in lane) + '" z_order="0">\n    </polyline>'
        for lane in frame_lanes] for stamp, frame_lanes in lanes.items()})


def cvat_boxes(gt: Path, export: Path) -> str:
    """Return CVAT for images of the exported frames gt.txt labels: its cars as boxes."""
    rows = gt_rows(gt)
    frames = [frame for frame in task_frames(export) if frame['index'] in rows]
    return images_xml(frames, {frame['stamp_ns']: [
        f'<box label="car" source="manual" occluded="0" {box_attributes(*row[1:])} z_order="0">'
        '\n    </box>' for row in rows[frame['index']]] for frame in frames})


def cvat_tracks(gt: Path, export: Path) -> str:
    """Return CVAT for video of a task made from the whole export: a track per car of gt.txt."""
    frames = task_frames(export)
    rows = gt_rows(gt)
    boxes: dict[int, dict[int, list[float]]] = {}  # car -> task frame -> box
    for task_frame, frame in enumerate(frames):
        for row in rows.get(frame['index'], []):
            boxes.setdefault(int(row[0]), {})[task_frame] = row[1:]
    body = ''
    for number, car in enumerate(sorted(boxes)):
        body += f'  <track id="{number}" label="car" source="manual">\n'
        for task_frame, box in sorted(boxes[car].items()):
            body += (f'    <box frame="{task_frame}" keyframe="1" outside="0" occluded="0" '
                     f'{box_attributes(*box)} z_order="0">\n    </box>\n')
            if task_frame + 1 < len(frames) and task_frame + 1 not in boxes[car]:
                body += (f'    <box frame="{task_frame + 1}" keyframe="1" outside="1" '
                         f'occluded="0" {box_attributes(*box)} z_order="0">\n    </box>\n')
        body += '  </track>\n'
    return HEAD + meta('interpolation', len(frames)) + body + '</annotations>\n'


def mot_export(gt: Path, export: Path, folder: Path, by_stamp: bool) -> Path:
    """
    Write CVAT's MOT 1.1 export of a task made from the whole export, unpacked, with frames.json.

    Frames are the task's 1-based count, or (`by_stamp`) the images' stamps.
    """
    frames = task_frames(export)
    rows = gt_rows(gt)
    ids: dict[int, int] = {}
    lines = []
    for task_frame, frame in enumerate(frames):
        for car, left, top, width, height in rows.get(frame['index'], []):
            track = ids.setdefault(int(car), len(ids) + 1)
            number = frame['stamp_ns'] if by_stamp else task_frame + 1
            lines.append(f'{number},{track},{left},{top},{width},{height},1,1,1.0')
    (folder / 'gt').mkdir(parents=True)
    (folder / 'gt' / 'gt.txt').write_text('\n'.join(lines) + '\n')
    (folder / 'gt' / 'labels.txt').write_text('car')
    shutil.copy(export / 'frames.json', folder / 'frames.json')
    return folder


def labels_of_export(culane: Path, gt: Path, export: Path, folder: Path) -> tuple[Path, Path]:
    """
    Return the CULane directory and gt.txt of the labels that the export's frames carry.

    Those are the originals themselves when the export holds every labelled frame, else
    copies of the originals' files and lines for the exported frames, written into `folder`.
    """
    exported = {frame['index'] for frame in task_frames(export)}
    stamps = {frame['stamp_ns'] for frame in task_frames(export)}
    files = [path for path in sorted(culane.glob('*.lines.txt'))
             if int(path.name.split('.')[0]) in stamps]
    lines = [line for line in gt.read_text().splitlines()
             if line.strip() and int(line.split(',')[0]) - 1 in exported]
    if len(files) == len(list(culane.glob('*.lines.txt'))) and \
            len(lines) == len(gt.read_text().split()):
        return culane, gt
    (folder / 'culane').mkdir(parents=True)
    for path in files:
        shutil.copy(path, folder / 'culane' / path.name)
    (folder / 'gt.txt').write_text('\n'.join(lines) + '\n')
    return folder / 'culane', folder / 'gt.txt'
