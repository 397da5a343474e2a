"""
How right a replay was: its outputs bag scored against labels, and the pass/fail criteria.

The outputs of `bag evaluate` (detections with their track ids, lanes with their sides) are
read per input frame, keyed by the frame's header stamp, and scored with scoring/ against every
`--labels` file: COCO boxes, MOTChallenge tracks, CULane or TuSimple lanes. A labelled frame
without an output (dropped, failed) counts as all misses, and the figures say how many.
`--criteria` states floors on the figures and per-frame thresholds with a pass rate.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from rosbags.highlevel import AnyReader
import yaml

from triton_perception.bag.bag_format import BagError, COMPRESSED_IMAGE_TYPE, IMAGE_TYPE, typestore
from triton_perception.outputs import class_index, LANE_POINT_DTYPE
from triton_perception.scoring import (DetectionLabels, LabelError, LaneLabels, read_labels,
                                       resolve_frames, score_culane, score_detections, score_tracks,
                                       score_tusimple, TrackLabels)

LANES_SCORED = ('all', 'ego')  # every published lane, or the ego lane's two lines
EGO_SIDES = (-1, 1)
FRAME_CRITERIA = ('lane_F1', 'detection_recall')
WORST_FRAMES = 5


@dataclass
class ReplayOutputs:
    """What the nodes published, per input frame (header stamp in ns)."""

    detections: dict[int, np.ndarray] = field(default_factory=dict)  # [x1, y1, x2, y2, s, c]
    tracks: dict[int, np.ndarray] = field(default_factory=dict)      # ... and track number
    lanes: dict[int, list[np.ndarray]] = field(default_factory=dict)  # [N, 2] (u, v) per lane
    lane_sides: dict[int, list[int]] = field(default_factory=dict)


@dataclass(frozen=True)
class CameraFrames:
    """The replayed image topic: (1-based index, header stamp) per frame and the frame size."""

    frames: list[tuple[int, int]]
    size: tuple[int, int]


def camera_frames(bag: Path, topic: str) -> CameraFrames:
    """Return the frames of `topic` in `bag` as MOTChallenge counts them, and their size."""
    frames, size = [], (0, 0)
    with AnyReader([Path(bag)], default_typestore=typestore()) as reader:
        connections = [c for c in reader.connections if c.topic == topic
                       and c.msgtype in (IMAGE_TYPE, COMPRESSED_IMAGE_TYPE)]
        if not connections:
            raise BagError(f'{bag} has no image topic {topic}')
        for index, (connection, _time, raw) in enumerate(reader.messages(connections), start=1):
            message: Any = reader.deserialize(raw, connection.msgtype)
            stamp = message.header.stamp
            frames.append((index, stamp.sec * 1_000_000_000 + stamp.nanosec))
            if index == 1 and connection.msgtype == IMAGE_TYPE:
                size = (int(message.width), int(message.height))
    return CameraFrames(frames, size)


def read_outputs(outputs_bag: Path, class_names: list[str]) -> ReplayOutputs:
    """Read the detections (with track ids) and lanes (with sides) of an outputs bag."""
    outputs = ReplayOutputs()
    track_numbers: dict[str, int] = {}
    with AnyReader([Path(outputs_bag)], default_typestore=typestore()) as reader:
        for connection, _time, raw in reader.messages():
            topic = connection.topic
            if not (topic.endswith('/detections') or topic.endswith('/lanes')):
                continue
            message: Any = reader.deserialize(raw, connection.msgtype)
            stamp = message.header.stamp.sec * 1_000_000_000 + message.header.stamp.nanosec
            if topic.endswith('/detections'):
                rows, tracked = [], []
                for detection in message.detections:
                    box, hypothesis = detection.bbox, detection.results[0].hypothesis
                    row = [box.center.position.x - box.size_x / 2,
                           box.center.position.y - box.size_y / 2,
                           box.center.position.x + box.size_x / 2,
                           box.center.position.y + box.size_y / 2,
                           hypothesis.score, class_index(hypothesis.class_id, class_names)]
                    rows.append(row)
                    if detection.id:
                        number = track_numbers.setdefault(str(detection.id),
                                                          len(track_numbers) + 1)
                        tracked.append([*row, number])
                outputs.detections[stamp] = np.array(rows, np.float64).reshape(-1, 6)
                outputs.tracks[stamp] = np.array(tracked, np.float64).reshape(-1, 7)
            else:
                points = np.frombuffer(bytes(message.data), dtype=LANE_POINT_DTYPE,
                                       count=message.width)
                lanes, sides = [], []
                for lane_id in np.unique(points['lane_id']):
                    lane = points[points['lane_id'] == lane_id]
                    lanes.append(np.stack([lane['u'], lane['v']], axis=1).astype(np.float64))
                    sides.append(int(lane['side'][0]))
                outputs.lanes[stamp] = lanes
                outputs.lane_sides[stamp] = sides
    return outputs


def score_replay(camera: CameraFrames, outputs: ReplayOutputs, label_paths: list[Path],
                 class_names: list[str], lanes_scored: str = 'all',
                 lane_rows_from_labels: bool = False,
                 sparse_tracks: bool = False) -> dict[str, Any]:
    """
    Score `outputs` against each label file; return `accuracy` and the per-frame figures.

    `lanes_scored` 'ego' scores only the ego lane's two lines (for labels that mark only
    those). `lane_rows_from_labels` crops each published lane to the rows its frame's labelled
    lanes span (for labels read at a few rows); both are departures from CULane's protocol
    and the result says so. `sparse_tracks` scores tracks only on the frames gt.txt has rows for
    (labels made every Nth frame), where MOTChallenge counts a frame without rows between two
    labelled ones as labelled empty.

    Raises LabelError for a label file that is malformed or names a frame the bag lacks.
    """
    if lanes_scored not in LANES_SCORED:
        raise LabelError(f'lanes scored {lanes_scored!r}: expected one of {LANES_SCORED}')
    accuracy: dict[str, Any] = {}
    per_frame: dict[str, dict[int, float]] = {}
    read: dict[str, Any] = {}
    stamp_of_index = dict(camera.frames)
    for path in label_paths:
        labels = read_labels(path, class_names)
        read[type(labels).__name__] = labels
        resolve_frames(labels, None, camera.frames)  # LabelError for a frame the bag lacks
        if isinstance(labels, DetectionLabels):
            result = score_detections(labels, outputs.detections, class_names)
            per_frame['detection_recall'] = dict(result.pop('per_frame_recall'))
            _merge(accuracy, 'detection', result, path)
        elif isinstance(labels, TrackLabels):
            frames = {index: rows for index, rows in labels.frames.items()
                      if len(rows) or not sparse_tracks}
            predictions = {index: outputs.tracks[stamp] for index, stamp in stamp_of_index.items()
                           if stamp in outputs.tracks and index in frames}
            result = score_tracks(frames, predictions)
            result['sparse_labels'] = sparse_tracks
            _merge(accuracy, 'tracking', result, path)
        elif isinstance(labels, LaneLabels):
            lanes = _scored_lanes(outputs, lanes_scored)
            if lane_rows_from_labels:
                lanes = _cropped_to_labels(lanes, labels)
            if labels.form == 'tusimple':
                tusimple = score_tusimple(labels, lanes)
                tusimple.pop('per_frame_accuracy', None)
            size = camera.size if camera.size != (0, 0) else _unknown_frame_size(labels)
            result = score_culane(labels, lanes, size)
            per_frame['lane_F1'] = dict(result.pop('per_frame_F1'))
            result['lanes_scored'] = lanes_scored
            result['lane_rows_from_labels'] = lane_rows_from_labels
            if labels.form == 'tusimple':
                result.update({key: tusimple[key] for key in ('tusimple_accuracy', 'FP', 'FN')})
            _merge(accuracy, 'lanes', result, path)
    return {'accuracy': accuracy, 'per_frame': per_frame, 'labels': read}


def _merge(accuracy: dict[str, Any], kind: str, result: dict[str, Any], path: Path) -> None:
    if kind in accuracy:
        raise LabelError(f'{path}: a second {kind} label file; give one per kind')
    accuracy[kind] = {**result, 'labels': str(path)}


def _scored_lanes(outputs: ReplayOutputs, lanes_scored: str) -> dict[int, list[np.ndarray]]:
    if lanes_scored == 'all':
        return outputs.lanes
    return {stamp: [lane for lane, side in zip(lanes, outputs.lane_sides[stamp])
                    if side in EGO_SIDES] for stamp, lanes in outputs.lanes.items()}


def _cropped_to_labels(lanes: dict[int, list[np.ndarray]],
                       labels: LaneLabels) -> dict[int, list[np.ndarray]]:
    cropped = {}
    for stamp, frame_lanes in lanes.items():
        truth = labels.frames.get(stamp)
        if not truth:
            cropped[stamp] = frame_lanes
            continue
        rows = np.concatenate([lane[:, 1] for lane in truth])
        top, bottom = float(rows.min()), float(rows.max())
        kept = [lane[(lane[:, 1] >= top) & (lane[:, 1] <= bottom)] for lane in frame_lanes]
        cropped[stamp] = [lane for lane in kept if len(lane) >= 2]
    return cropped


def _unknown_frame_size(labels: LaneLabels) -> tuple[int, int]:
    """Raise: CULane scoring needs the frame size, which compressed frames do not say."""
    raise LabelError(f'{labels.source}: the frame size is unknown (compressed frames): '
                     'CULane scoring draws lanes on an image of the frame size')


# --- criteria ---------------------------------------------------------------------------------

def read_criteria(path: Path) -> dict[str, Any]:
    """
    Read a criteria YAML file.

    `floors` maps the report's dotted names to minimums; `frames` holds per-frame thresholds
    (lane_F1, detection_recall) and the pass_rate of frames that must reach them.

    Raises LabelError naming the file and the entry that is wrong.
    """
    try:
        document = yaml.safe_load(Path(path).read_text(encoding='utf-8')) or {}
    except (OSError, yaml.YAMLError) as error:
        raise LabelError(f'{path}: cannot read the criteria: {error}') from None
    if not isinstance(document, dict) or set(document) - {'floors', 'frames'}:
        raise LabelError(f"{path}: expected a mapping with 'floors' and/or 'frames'")
    floors = document.get('floors') or {}
    frames = document.get('frames') or {}
    for name, value in {**floors, **frames}.items():
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            raise LabelError(f'{path}: {name}: {value!r} is not a number')
    unknown = set(frames) - {*FRAME_CRITERIA, 'pass_rate'}
    if unknown:
        raise LabelError(f'{path}: frames: unknown {sorted(unknown)}; known: '
                         f"{', '.join(FRAME_CRITERIA)}, pass_rate")
    if frames and 'pass_rate' not in frames:
        raise LabelError(f'{path}: frames: pass_rate (the share of frames that must pass) is '
                         'missing')
    return {'floors': dict(floors), 'frames': dict(frames)}


def check_criteria(scored: dict[str, Any], criteria: dict[str, Any]) -> dict[str, Any]:
    """Return `passed`, the failing floors and the failing frames (stamps) of a scored replay."""
    failing = []
    for name, floor in criteria['floors'].items():
        value = _dotted(scored['accuracy'], name)
        if value is None:
            failing.append(f'{name}: not in the report (no labels of that kind?)')
        elif value < floor:
            failing.append(f'{name} = {value:.4g} < {floor:g}')
    frames = criteria['frames']
    failing_frames: list[int] = []
    if frames:
        thresholds = {name: frames[name] for name in FRAME_CRITERIA if name in frames}
        stamps = sorted(set().union(*(scored['per_frame'].get(name, {}) for name in thresholds)))
        for stamp in stamps:
            if any(scored['per_frame'].get(name, {}).get(stamp, 1.0) < threshold
                   for name, threshold in thresholds.items()):
                failing_frames.append(stamp)
        rate = 1 - len(failing_frames) / len(stamps) if stamps else 0.0
        if rate < frames['pass_rate']:
            failing.append(f'frames passing: {rate:.1%} < {frames["pass_rate"]:.1%} '
                           f'({len(failing_frames)} of {len(stamps)} frames fail)')
    return {'passed': not failing, 'failing': failing, 'failing_frames': failing_frames}


def _dotted(accuracy: dict[str, Any], name: str) -> float | None:
    value: Any = accuracy
    for part in name.split('.'):
        if not isinstance(value, dict) or part not in value:
            return None
        value = value[part]
    return float(value) if isinstance(value, (int, float)) else None


def worst_frames(scored: dict[str, Any]) -> dict[str, list[tuple[int, float]]]:
    """Return the frames (stamp, figure) with the lowest lane F1 and detection recall."""
    return {name: sorted(values.items(), key=lambda item: (item[1], item[0]))[:WORST_FRAMES]
            for name, values in scored['per_frame'].items()}
