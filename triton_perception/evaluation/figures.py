"""
What `bag evaluate` reports, from a replay's recorded outputs and the nodes' own accounting.

per-class detections, lanes, the ego lane on the ground, every frame's fate, the comparison with an
earlier report, and the Markdown rendering. Plain Python over a bag file: no ROS.
"""
from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Mapping, TYPE_CHECKING, TypedDict

import numpy as np
from rosbags.highlevel import AnyReader
import yaml

from triton_perception.bag import typestore
from triton_perception.evaluation.metrics import (DetectionOutputs, GroundFigures, LaneOutputs,
                                                  NodeFigures, number, ReplayInput, ReplayReport,
                                                  Spread, TrackingOutputs)
from triton_perception.frames import NodeStatus
from triton_perception.ground import ego_lane, GROUND_POINT_DTYPE
from triton_perception.models import labels_for
from triton_perception.outputs import class_index, class_name, LANE_POINT_DTYPE
from triton_perception.system import config_file

if TYPE_CHECKING:
    from sensor_msgs.msg import PointCloud2
    from vision_msgs.msg import Detection2DArray

NODES = ('detection_node', 'lane_node')
# Tolerances of --expected: (metric path, kind, amount). 'abs': |new - old| <= amount;
# 'rel': |new - old| <= amount x |old|. Only decreases of quality count as regressions for
# rates; counts and means regress in either direction.
TOLERANCES = (
    ('detection.frames_with_class', 'abs', 0.05),
    ('detection.mean_per_frame', 'rel', 0.25),
    ('lanes.ego_lane_rate', 'abs', 0.05),
    ('lanes.mean_lanes_per_frame', 'rel', 0.25),
    ('nodes.published_fraction', 'abs', 0.15),
    # Frames lost on the way to a node are a transport figure, not a processing one: a replay
    # on a busy machine may lose a few without anything in the package having changed.
    ('nodes.lost_fraction', 'abs', 0.02),
    # New track ids per second: fragmentation shows as more of them.
    ('tracking.new_tracks_per_s', 'rel', 0.5),
)


def detection_labels(params_file: Path | None) -> list[str]:
    """Return the class names detection_node used: its `labels_file`, else its detector's labels."""
    params = yaml.safe_load((params_file or config_file('params.yaml')).read_text(
        encoding='utf-8')) or {}
    section = params.get('/**/detection_node', {}).get('ros__parameters', {})
    return labels_for(section.get('model_name', 'yolov5'), section.get('labels_file', ''))


class OutputFigures(TypedDict, total=False):
    """The report's figures of the recorded outputs (ground and tracking when there are any)."""

    detection: DetectionOutputs
    lanes: LaneOutputs
    ground: GroundFigures
    tracking: TrackingOutputs


def analyse_outputs(outputs_bag: Path, labels: list[str]) -> OutputFigures:
    """Per-class detections and lane figures from the recorded result messages."""
    class_frames: Counter[str] = Counter()
    class_boxes: Counter[str] = Counter()
    detection_frames = lane_frames = ego_frames = lane_total = ground_frames = 0
    ego_lanes = []
    track_ids: list[tuple[float, list[str]]] = []
    with AnyReader([outputs_bag], default_typestore=typestore()) as reader:
        for connection, _stamp, raw in reader.messages():
            # rosbags' message classes, with the fields of the ROS messages read below
            message: Detection2DArray | PointCloud2 = reader.deserialize(raw, connection.msgtype)
            if connection.topic.endswith('/detections'):
                detection_frames += 1
                names = [class_name(labels, class_index(d.results[0].hypothesis.class_id, labels))
                         for d in message.detections]
                class_boxes.update(names)
                class_frames.update(set(names))
                track_ids.append((message.header.stamp.sec + message.header.stamp.nanosec * 1e-9,
                                  [str(d.id) for d in message.detections if d.id]))
            elif connection.topic.endswith('/lanes/ground'):
                ground_frames += 1
                found = ego_lane(np.frombuffer(bytes(message.data), dtype=GROUND_POINT_DTYPE,
                                               count=message.width))
                if found is not None:
                    ego_lanes.append(found)
            elif connection.topic.endswith('/lanes'):
                lane_frames += 1
                points = np.frombuffer(bytes(message.data), dtype=LANE_POINT_DTYPE,
                                       count=message.width)
                lane_total += len(np.unique(points['lane_id']))
                ego_frames += {-1, 1} <= set(points['side'].tolist())
    figures: OutputFigures = {
        'detection': {
            'frames': detection_frames,
            'frames_with_class': {name: count / max(1, detection_frames)
                                  for name, count in sorted(class_frames.items())},
            'mean_per_frame': {name: count / max(1, detection_frames)
                               for name, count in sorted(class_boxes.items())},
        },
        'lanes': {
            'frames': lane_frames,
            'mean_lanes_per_frame': lane_total / max(1, lane_frames),
            'ego_lane_rate': ego_frames / max(1, lane_frames),
        },
    }
    if ground_frames:
        figures['ground'] = ground_figures(ground_frames, ego_lanes)
    if any(ids for _stamp, ids in track_ids):
        figures['tracking'] = tracking_figures(track_ids)
    return figures


def tracking_figures(frames: list[tuple[float, list[str]]]) -> TrackingOutputs:
    """
    From each published frame's (stamp in s, track ids).

    Tracks per frame, how long tracks last (from their first to their last frame, s), and new tracks
    per second of the replay, a proxy for fragmentation (an object whose track breaks gets a new
    id).
    """
    first: dict[str, float] = {}
    last: dict[str, float] = {}
    for stamp, ids in frames:
        for track_id in ids:
            first.setdefault(track_id, stamp)
            last[track_id] = stamp
    lengths = np.array([last[track_id] - first[track_id] for track_id in first])
    stamps = [stamp for stamp, _ids in frames]
    duration = max(stamps) - min(stamps) if stamps else 0.0
    return {
        'tracks': len(first),
        'mean_tracks_per_frame': float(np.mean([len(ids) for _stamp, ids in frames])),
        'track_length_s': {'median': float(np.median(lengths)),
                           'p90': float(np.percentile(lengths, 90))},
        'new_tracks_per_s': len(first) / duration if duration > 0 else float('nan'),
    }


def ground_figures(frames: int, ego_lanes: list[tuple[float, float]]) -> GroundFigures:
    """
    Summarise the ego-lane width and the vehicle's lateral offset from the lane centre.

    Both at target_frame's origin (offset + = left), over the frames whose ground lanes had both ego
    lines.
    """
    values = np.array(ego_lanes, dtype=np.float64).reshape(-1, 2)

    def spread(column: int) -> Spread:
        if not len(values):
            return {'mean': float('nan'), 'std': float('nan')}
        return {'mean': float(values[:, column].mean()), 'std': float(values[:, column].std())}
    return {'frames': frames, 'ego_lane_frames': len(values),
            'ego_lane_width_m': spread(0), 'lateral_offset_m': spread(1)}


def node_figures(frames: int | None,
                 accounting: dict[str, NodeStatus]) -> dict[str, NodeFigures]:
    """
    Per node: its counts, and whether every frame is accounted for.

    Each frame the player published (`frames`; None when unknown, as in a looped soak) was received
    or lost before the node, and each received frame was settled.
    """
    figures: dict[str, NodeFigures] = {}
    for node in NODES:
        status = accounting.get(node, NodeStatus({}))
        counts = status.counts
        sent = status.seen if frames is None else frames
        figures[node] = {
            'received': counts['received'], 'published': counts['published'],
            'dropped': counts['dropped'], 'rejected': counts['rejected'],
            'failed': counts['failed'], 'pending': counts['pending'],
            'lost_before_node': counts['lost_before_node'],
            'frames_in': sent,
            'accounted': (status.seen == sent and counts['pending'] == 0
                          and status.balanced),
            'published_fraction': counts['published'] / max(1, sent),
            'lost_fraction': counts['lost_before_node'] / max(1, sent),
            'latency_ms': status.latency_ms,
            'reasons': status.reasons,
        }
    return figures


def flatten(report: Mapping[str, object], metric: str) -> dict[str, float]:
    """
    'detection.frames_with_class' -> {'car': 1.0, ...}.

    'nodes.published_fraction' -> per node. A section a report lacks has no figures.
    """
    section, name = metric.split('.')
    part = report.get(section, {})
    if not isinstance(part, Mapping):
        return {}
    if section == 'nodes':
        return {node: number(figures.get(name, 0.0)) for node, figures in part.items()
                if isinstance(figures, Mapping)}
    value = part.get(name, {})
    if isinstance(value, Mapping):
        return {key: number(figure) for key, figure in value.items()}
    return {name: number(value)}


def regressions(report: ReplayReport, expected: ReplayReport) -> list[str]:
    """
    Return each figure of `report` outside its tolerance around `expected`'s, as a sentence.

    TOLERANCES gives each metric's tolerance, absolute or relative to the expected value. A
    section `expected` lacks is skipped, and a figure `report` lacks counts as 0.
    """
    problems = []
    for metric, kind, amount in TOLERANCES:
        if metric.split('.')[0] not in expected:
            continue  # a report from before that section existed (e.g. tracking)
        old, new = flatten(expected, metric), flatten(report, metric)
        for key, old_value in old.items():
            new_value = new.get(key, 0.0)
            allowed = amount if kind == 'abs' else amount * abs(old_value)
            if abs(new_value - old_value) > allowed:
                tolerance = f'±{amount:g}' if kind == 'abs' else f'±{amount:.0%} of expected'
                problems.append(f'{metric}[{key}]: expected {old_value:.3f}, got '
                                f'{new_value:.3f} (tolerance {tolerance})')
    return problems


def replay_speed(replayed: ReplayInput) -> str:
    """
    Say how the replay ran: its timing, and in lockstep how fast the machine ran the models.

    Reports written before the timing was recorded replayed at recorded timing.
    """
    if replayed.get('timing', 'recorded') == 'recorded':
        return f"recorded timing at rate {replayed['rate']:g}"
    replay_s, bag_s = replayed['replay_s'], replayed['bag_s']
    per_second = replayed['frames'] / replay_s if replay_s > 0 else 0.0
    real_time = bag_s / replay_s if replay_s > 0 else 0.0
    return (f'lockstep (every frame answered before the next): {replayed["frames"]} frames in '
            f'{replay_s:.1f} s, {per_second:.1f} frames/s, {real_time:.2f}x real time; at '
            f'recorded timing the nodes would have answered about {min(1.0, real_time):.0%} '
            'of the frames')
