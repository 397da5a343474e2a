"""
The way each output message is not published, kept only to measure the choice again.

Every output message has one builder in the package (outputs/, ground/): CDR bytes where they
pay, the rclpy message elsewhere. `bench --glue --publish-cost` sets each against the other
way, which lives here and nowhere in the nodes: the Detection2DArray and the Image built as
rclpy messages, the lanes PointCloud2 written as CDR. `test/outputs/test_cdr.py` holds both
ways to the same bytes, so that the bench compares the same message.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
from numpy.typing import NDArray
from sensor_msgs.msg import Image
from std_msgs.msg import Header
from vision_msgs.msg import Detection2D, Detection2DArray, ObjectHypothesisWithPose

from triton_perception.outputs import CdrWriter, LANE_POINT_DTYPE, lane_points, point_fields

_LANE_FIELDS = point_fields(LANE_POINT_DTYPE)


def detection_array_message(detections: NDArray[np.float32], header: Header,
                            track_ids: Sequence[str] | None = None) -> Detection2DArray:
    """Return outputs.detection_array_cdr's message built as an rclpy message."""
    ids = track_ids if track_ids is not None else [''] * len(detections)
    built = []
    for (x1, y1, x2, y2, score, class_id), track_id in zip(detections.tolist(), ids):
        hypothesis = ObjectHypothesisWithPose()
        hypothesis.hypothesis.class_id = str(int(class_id))
        hypothesis.hypothesis.score = float(score)
        detection = Detection2D(header=header, id=track_id, results=[hypothesis])
        # Filled in place: the generated constructor builds a default box even when given one.
        box = detection.bbox
        box.center.position.x = (x1 + x2) / 2.0
        box.center.position.y = (y1 + y2) / 2.0
        box.size_x = x2 - x1
        box.size_y = y2 - y1
        built.append(detection)
    return Detection2DArray(header=header, detections=built)


def image_message(pixels: NDArray[np.uint8], header: Header, encoding: str) -> Image:
    """Return outputs.image_cdr's Image built as an rclpy message (one copy)."""
    channels = 1 if pixels.ndim == 2 else pixels.shape[2]
    return Image(header=header, height=pixels.shape[0], width=pixels.shape[1], encoding=encoding,
                 is_bigendian=0, step=pixels.shape[1] * channels,
                 data=np.ascontiguousarray(pixels).tobytes())


def lanes_cloud_cdr(lanes: NDArray[np.float32], scores: NDArray[np.float32],
                    sides: NDArray[np.int8], header: Header) -> bytes:
    """Return outputs.lanes_cloud_message's PointCloud2 of the same lanes, as CDR."""
    points = lane_points(lanes, scores, sides)
    out = CdrWriter()
    out.header(header)
    out.uint32(1)  # height
    out.uint32(len(points))
    out.uint32(len(_LANE_FIELDS))
    for field in _LANE_FIELDS:
        out.string(field.name)
        out.uint32(field.offset)
        out.uint8(field.datatype)
        out.uint32(field.count)
    out.uint8(0)  # is_bigendian
    out.uint32(LANE_POINT_DTYPE.itemsize)
    out.uint32(LANE_POINT_DTYPE.itemsize * len(points))
    out.octets(points.tobytes())
    out.uint8(1)  # is_dense
    return out.value()
