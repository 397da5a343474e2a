"""
What a replay published, read back from its outputs bag, and the frames of the replayed camera.

Every metric (metric_registry.py) scores these: the detections with their track ids and the
lanes with their sides, per input frame keyed by the frame's header stamp (ns).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray
from rosbags.highlevel import AnyReader

from triton_perception.bag import (BagError, CAMERA_TYPES, camera_typestore, IMAGE_TYPE, typestore,
                                   video_packet, VIDEO_TYPES)
from triton_perception.frames import FrameRejected, VideoDecoder
from triton_perception.outputs import class_index, LANE_POINT_DTYPE

if TYPE_CHECKING:  # rosbags' message classes have these messages' fields
    from ffmpeg_image_transport_msgs.msg import FFMPEGPacket
    from foxglove_msgs.msg import CompressedVideo
    from sensor_msgs.msg import CompressedImage, Image, PointCloud2
    from vision_msgs.msg import Detection2DArray


@dataclass
class ReplayOutputs:
    """
    What the nodes published, per input frame (header stamp in ns).

    Detections are rows [x1, y1, x2, y2, score, class], tracks the same and the track number,
    lanes [N, 2] (u, v) arrays with their sides.
    """

    detections: dict[int, NDArray[np.float64]] = field(default_factory=dict)
    tracks: dict[int, NDArray[np.float64]] = field(default_factory=dict)
    lanes: dict[int, list[NDArray[np.float64]]] = field(default_factory=dict)
    lane_sides: dict[int, list[int]] = field(default_factory=dict)


@dataclass(frozen=True)
class ReplayedFrames:
    """The replayed image topic: (1-based index, header stamp) per frame and the frame size."""

    frames: list[tuple[int, int]]
    size: tuple[int, int]


def replayed_frames(bag: Path, topic: str) -> ReplayedFrames:
    """
    Return the frames of `topic` in `bag` as MOTChallenge counts them, and their size.

    A video topic counts every packet as a frame, those before its first keyframe too.
    """
    frames, size = [], (0, 0)
    video = VideoDecoder()
    with AnyReader([Path(bag)], default_typestore=camera_typestore()) as reader:
        connections = [c for c in reader.connections if c.topic == topic
                       and c.msgtype in CAMERA_TYPES]
        if not connections:
            raise BagError(f'{bag} has no camera topic {topic}')
        for index, (connection, _time, raw) in enumerate(reader.messages(connections), start=1):
            message: Image | CompressedImage | CompressedVideo | FFMPEGPacket = \
                reader.deserialize(raw, connection.msgtype)
            if connection.msgtype in VIDEO_TYPES:
                stamp, packet = video_packet(message)
                if size == (0, 0):  # the first frame the stream decodes to gives the size
                    try:
                        height, width = video.decode(packet).shape[:2]
                        size = (int(width), int(height))
                    except FrameRejected:  # before the first keyframe, or undecodable
                        pass
            else:
                stamp = message.header.stamp
            frames.append((index, stamp.sec * 1_000_000_000 + stamp.nanosec))
            if index == 1 and connection.msgtype == IMAGE_TYPE:
                size = (int(message.width), int(message.height))
    return ReplayedFrames(frames, size)


def read_outputs(outputs_bag: Path, class_names: list[str]) -> ReplayOutputs:
    """Read the detections (with track ids) and lanes (with sides) of an outputs bag."""
    outputs = ReplayOutputs()
    track_numbers: dict[str, int] = {}
    with AnyReader([Path(outputs_bag)], default_typestore=typestore()) as reader:
        for connection, _time, raw in reader.messages():
            topic = connection.topic
            if not (topic.endswith('/detections') or topic.endswith('/lanes')):
                continue
            message: Detection2DArray | PointCloud2 = reader.deserialize(raw, connection.msgtype)
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
