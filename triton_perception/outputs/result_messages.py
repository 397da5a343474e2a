"""
Inference results -> standard ROS messages (vision_msgs, sensor_msgs); no rclpy needed.

Every output message carries the input frame's header unchanged, so consumers can match
results to frames by stamp and place them in the camera's frame. The readers take messages of
other publishers too (overlay_node draws whatever is on its topics): what they cannot read,
valid ROS or not, raises UnreadableResult with a reason, never an IndexError from deep inside.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
from numpy.typing import NDArray
from sensor_msgs.msg import Image, PointCloud2, PointField
from std_msgs.msg import Header
from vision_msgs.msg import Detection2DArray, LabelInfo, VisionClass

from triton_perception.errors import TritonPerceptionError
from triton_perception.system import config_file

# One lane polyline sample per point; offsets are part of the published contract (docs/topics.md).
LANE_POINT_DTYPE = np.dtype({
    'names': ['u', 'v', 'lane_id', 'side', 'score'],
    'formats': ['<f4', '<f4', '<u2', 'i1', '<f4'],
    'offsets': [0, 4, 8, 10, 12],
    'itemsize': 16,
})
# sensor_msgs/PointField's datatype of each numpy scalar type a point layout uses.
POINT_FIELD_TYPES = {
    np.dtype(np.int8): PointField.INT8, np.dtype(np.uint8): PointField.UINT8,
    np.dtype(np.int16): PointField.INT16, np.dtype(np.uint16): PointField.UINT16,
    np.dtype(np.int32): PointField.INT32, np.dtype(np.uint32): PointField.UINT32,
    np.dtype(np.float32): PointField.FLOAT32, np.dtype(np.float64): PointField.FLOAT64,
}


def point_fields(layout: np.dtype[np.void]) -> tuple[PointField, ...]:
    """
    Return the PointFields of a little-endian structured point dtype, in the dtype's order.

    The dtype is a point layout's one definition: its fields' names, offsets and types are the
    PointCloud2's fields, and its itemsize the point_step.
    """
    fields = []
    for name in layout.names or ():
        kind, offset = layout.fields[name][:2]  # type: ignore[index]
        base = kind.base.newbyteorder('<')
        if kind.base.byteorder == '>' or base not in POINT_FIELD_TYPES:
            raise ValueError(f'{name}: {kind} is no little-endian PointField datatype')
        fields.append(PointField(name=name, offset=offset, datatype=POINT_FIELD_TYPES[base],
                                 count=int(np.prod(kind.shape, dtype=np.int64))))
    return tuple(fields)


LANE_POINT_FIELDS = point_fields(LANE_POINT_DTYPE)

# Beyond this a box corner is no pixel of any image, and OpenCV's int coordinates overflow.
MAX_PIXEL_COORDINATE = 1e6


class UnreadableResult(TritonPerceptionError, ValueError):
    """A result message that cannot be read as this package reads it; `reason` is a short code."""

    def __init__(self, reason: str, message: str) -> None:
        """Keep `reason`, the code counted per reason, beside the human-readable `message`."""
        super().__init__(message)
        self.reason = reason


def load_labels(labels_file: str = '') -> list[str]:
    """Class names by id: one per line; the COCO names when no file is given."""
    path = Path(labels_file).expanduser() if labels_file else config_file('coco_labels.txt')
    labels = [line.strip() for line in path.read_text(encoding='utf-8').splitlines()]
    return [label for label in labels if label]


def label_info_message(labels: list[str], header: Header, threshold: float) -> LabelInfo:
    """
    Return the LabelInfo that maps each class id (the label's index) to its name.

    `threshold` is the detection score threshold in use, which LabelInfo carries.
    """
    return LabelInfo(header=header, threshold=float(threshold),
                     class_map=[VisionClass(class_id=index, class_name=name)
                                for index, name in enumerate(labels)])


def class_name(labels: list[str], class_id: int) -> str:
    """Return the label, or the id as text for a model with more classes than the labels file."""
    return labels[class_id] if 0 <= class_id < len(labels) else str(class_id)


def class_index(class_id: str, labels: list[str]) -> int:
    """
    `ObjectHypothesis.class_id` -> the class's index in LabelInfo (-1 when unknown).

    vision_msgs: class_id is the class's id, looked up in the LabelInfo (VisionInfo) the
    detector publishes; this package writes the decimal id. Bags recorded before it did carry
    the class name, which is accepted too.
    """
    if class_id.isdigit():
        return int(class_id)
    return labels.index(class_id) if class_id in labels else -1


def lane_ids(lanes: NDArray[np.float32]) -> NDArray[np.uint16]:
    """
    lane_id of each polyline of LANES [L, P, 2].

    Numbered left to right by where the lanes start (at the image border); `lanes` and
    `lanes/ground` share this numbering.
    """
    ids = np.empty(len(lanes), dtype=np.uint16)
    if len(lanes):
        ids[np.argsort(lanes[:, 0, 0], kind='stable')] = np.arange(len(lanes), dtype=np.uint16)
    return ids


def lane_points(lanes: NDArray[np.float32], scores: NDArray[np.float32],
                sides: NDArray[np.int8]) -> NDArray[np.void]:
    """LANES [L, P, 2] -> structured points, lane_id numbering lanes left to right."""
    count, points_per_lane = lanes.shape[0], lanes.shape[1] if lanes.ndim == 3 else 0
    points = np.zeros(count * points_per_lane, dtype=LANE_POINT_DTYPE)
    if count == 0:
        return points
    points['u'] = lanes[:, :, 0].reshape(-1)
    points['v'] = lanes[:, :, 1].reshape(-1)
    points['lane_id'] = np.repeat(lane_ids(lanes), points_per_lane)
    points['side'] = np.repeat(sides.astype(np.int8), points_per_lane)
    points['score'] = np.repeat(scores.astype(np.float32), points_per_lane)
    return points


def lanes_cloud_message(lanes: NDArray[np.float32], scores: NDArray[np.float32],
                        sides: NDArray[np.int8], header: Header) -> PointCloud2:
    """
    Return the lanes as a PointCloud2 of LANE_POINT_DTYPE points (u, v in pixels), one per sample.

    `lanes`: [L, P, 2] polylines in frame pixels.
    `scores`: [L] lane scores.
    `sides`: [L] side labels (lanes.lane_sides).
    `header`: the input frame's header, carried unchanged.
    """
    points = lane_points(lanes, scores, sides)
    return PointCloud2(header=header, height=1, width=len(points), fields=list(LANE_POINT_FIELDS),
                       is_bigendian=False, point_step=LANE_POINT_DTYPE.itemsize,
                       row_step=LANE_POINT_DTYPE.itemsize * len(points), data=points.tobytes(),
                       is_dense=True)


def read_lane_points(cloud: PointCloud2) -> NDArray[np.void]:
    """
    Return the inverse of lanes_cloud_message, as docs/topics.md documents it.

    Raises UnreadableResult for a cloud whose layout is not LANE_POINT_DTYPE's or whose size
    disagrees with its data.
    """
    fields = [(field.name, field.offset, field.datatype, field.count) for field in cloud.fields]
    if fields != [(field.name, field.offset, field.datatype, field.count)
                  for field in LANE_POINT_FIELDS] or cloud.point_step != LANE_POINT_DTYPE.itemsize:
        raise UnreadableResult('lanes_layout', f'a lanes cloud of another layout (point_step '
                               f'{cloud.point_step}, fields {[name for name, *_ in fields]})')
    points = cloud.width * cloud.height
    if cloud.height > 1 or len(cloud.data) != points * cloud.point_step:
        raise UnreadableResult('lanes_size', f'a lanes cloud of {cloud.width}x{cloud.height} '
                               f'points holds {len(cloud.data)} bytes')
    return np.frombuffer(bytes(cloud.data), dtype=LANE_POINT_DTYPE, count=points)


def track_ids_from_message(message: Detection2DArray) -> list[str]:
    """Each detection's id (the track id; '' for none), in the order of its detections."""
    return [str(detection.id) for detection in message.detections]


def detections_from_message(message: Detection2DArray, labels: list[str]) -> NDArray[np.float32]:
    """
    Detection2DArray -> DETECTIONS rows, so that one drawing function serves every caller.

    Works on rclpy messages and on rosbags-deserialised ones alike (same field names). Raises
    UnreadableResult for a detection without a hypothesis (valid in vision_msgs, but it has
    no class to draw or score) and for a box that is no place in an image.
    """
    rows = []
    for detection in message.detections:
        if not detection.results:
            raise UnreadableResult('detection_without_results',
                                   'a Detection2D without results (no class, no score)')
        box, hypothesis = detection.bbox, detection.results[0].hypothesis
        class_id = class_index(hypothesis.class_id, labels)
        rows.append((box.center.position.x - box.size_x / 2, box.center.position.y - box.size_y / 2,
                     box.center.position.x + box.size_x / 2, box.center.position.y + box.size_y / 2,
                     hypothesis.score, class_id))
    detections = np.array(rows, dtype=np.float64).reshape(-1, 6)
    if not (np.abs(detections[:, :4]) <= MAX_PIXEL_COORDINATE).all():
        raise UnreadableResult('detection_box', 'a Detection2D box that is not finite or lies '
                               f'beyond {MAX_PIXEL_COORDINATE:g} pixels')
    return detections.astype(np.float32)


def lanes_from_cloud(cloud: PointCloud2) -> tuple[list[NDArray[np.float32]], NDArray[np.int8]]:
    """
    PointCloud2 -> (polylines [P, 2] per lane, LANE_SIDES) for drawing.

    Raises UnreadableResult as read_lane_points does, and for points that are no place in an
    image.
    """
    points = read_lane_points(cloud)
    if not ((np.abs(points['u']) <= MAX_PIXEL_COORDINATE).all()
            and (np.abs(points['v']) <= MAX_PIXEL_COORDINATE).all()):
        raise UnreadableResult('lanes_points', 'lane points that are not finite or lie beyond '
                               f'{MAX_PIXEL_COORDINATE:g} pixels')
    lanes, sides = [], []
    for lane_id in np.unique(points['lane_id']):
        lane = points[points['lane_id'] == lane_id]
        lanes.append(np.stack([lane['u'], lane['v']], axis=1))
        sides.append(int(lane['side'][0]))
    return lanes, np.array(sides, dtype=np.int8)


def mask_from_image(message: Image) -> NDArray[np.uint8]:
    """
    Read a mono8 Image (drivable_area) as uint8 [H, W], honouring row padding.

    Raises UnreadableResult for another encoding or a size that disagrees with the data.
    """
    if message.encoding != 'mono8':
        raise UnreadableResult('mask_encoding', f'a drivable-area mask in {message.encoding!r}, '
                               'not mono8')
    if message.step < message.width or len(message.data) != message.height * message.step:
        raise UnreadableResult('mask_size', f'a {message.width}x{message.height} mask (step '
                               f'{message.step}) holding {len(message.data)} bytes')
    return np.frombuffer(bytes(message.data), dtype=np.uint8).reshape(
        message.height, message.step)[:, :message.width]
