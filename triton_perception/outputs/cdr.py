"""
The per-frame result messages written as serialized CDR, ready for `Publisher.publish(bytes)`.

rclpy's `publish` of a message object converts it field by field in C after Python built it
object by object (every nested Detection2D, Pose and covariance array). rclpy's `publish`
also takes the serialized message as `bytes` (`publish_raw`, Humble's `rclpy/publisher.py`
on), so the nodes write the CDR here, one buffer per message, and a subscriber receives the
ordinary type. The bytes are what rmw_fastrtps_cpp writes for the same message: a 4-byte
encapsulation header (`00 01 00 00`, little-endian plain CDR), then the fields in order, each
primitive aligned to its own size counted from the end of that header; a string is a uint32
length counting its terminating NUL, its UTF-8 bytes and the NUL; a sequence is a uint32 count
and its elements; a fixed array is its elements alone. `test/outputs/test_cdr.py` holds every
writer byte-identical to `rclpy.serialization.serialize_message` of the message built the
ordinary way, but for the alignment padding, which Fast CDR leaves as it found the buffer
and which is written here as zeros (each writer takes `writer`, a CdrWriter type, so that a
test can note where the padding went).
"""
from __future__ import annotations

import struct
from typing import Protocol, Sequence

import numpy as np
from numpy.typing import NDArray

from triton_perception.outputs.result_messages import (LANE_POINT_DTYPE, LANE_POINT_FIELDS,
                                                       lane_points)

ENCAPSULATION = b'\x00\x01\x00\x00'
_HEADER_BYTES = len(ENCAPSULATION)
_UINT32 = struct.Struct('<I')
_STAMP = struct.Struct('<iI')
_ZEROS = bytes(8)
# ObjectHypothesisWithPose.pose: position 0, orientation (0, 0, 0, 1), covariance zeros.
_DEFAULT_POSE = struct.pack('<7d', 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0) + bytes(36 * 8)
_BOX = struct.Struct('<5d')  # center.position.x, .y, center.theta, size_x, size_y


class StampLike(Protocol):
    """builtin_interfaces/Time, or a read frame's stamp."""

    @property
    def sec(self) -> int:
        """Return the seconds."""

    @property
    def nanosec(self) -> int:
        """Return the nanoseconds."""


class HeaderLike(Protocol):
    """std_msgs/Header, or a read frame's header."""

    @property
    def stamp(self) -> StampLike:
        """Return the stamp."""

    @property
    def frame_id(self) -> str:
        """Return the frame id."""


class FieldLike(Protocol):
    """sensor_msgs/PointField."""

    @property
    def name(self) -> str:
        """Return the field's name."""

    @property
    def offset(self) -> int:
        """Return its offset in a point."""

    @property
    def datatype(self) -> int:
        """Return the datatype, one of the PointField constants."""

    @property
    def count(self) -> int:
        """Return its elements per point."""


class CdrWriter:
    """Appends CDR fields to one buffer; `value()` returns the serialized message."""

    __slots__ = ('_buffer',)

    def __init__(self) -> None:
        """Start a message: the encapsulation header, nothing else."""
        self._buffer = bytearray(ENCAPSULATION)

    def align(self, size: int) -> None:
        """Pad with zeros to a multiple of `size` counted from the end of the header."""
        padding = -(len(self._buffer) - _HEADER_BYTES) % size
        if padding:
            self.pad(padding)

    def pad(self, count: int) -> None:
        """Append `count` (1 to 7) zero bytes of padding."""
        self._buffer += _ZEROS[:count]

    def __len__(self) -> int:
        """Return the bytes written so far, the encapsulation header included."""
        return len(self._buffer)

    def uint32(self, value: int) -> None:
        """Append a uint32."""
        self.align(4)
        self._buffer += _UINT32.pack(value)

    def uint8(self, value: int) -> None:
        """Append one byte: a uint8, a bool, or an int8 as its two's complement."""
        self._buffer.append(value & 0xFF)

    def packed(self, alignment: int, data: bytes) -> None:
        """Append bytes already packed little-endian, aligned as their first field."""
        self.align(alignment)
        self._buffer += data

    def string(self, text: str) -> None:
        """Append a string: its length with the NUL, its UTF-8 bytes, the NUL."""
        encoded = text.encode('utf-8')
        self.uint32(len(encoded) + 1)
        self._buffer += encoded
        self._buffer.append(0)

    def octets(self, data: bytes | memoryview) -> None:
        """Append a uint8[] sequence: its count, then the bytes."""
        self.uint32(len(data))
        self._buffer += data

    def header(self, header: HeaderLike) -> None:
        """Append a std_msgs/Header (anything with stamp.sec, stamp.nanosec and frame_id)."""
        self.align(4)
        self._buffer += _STAMP.pack(header.stamp.sec, header.stamp.nanosec)
        self.string(header.frame_id)

    def value(self, last: bytes | memoryview = b'') -> bytes:
        """Return the message's bytes, `last` (a large last field's contents) appended."""
        return b''.join((self._buffer, last))


def detection_array_cdr(detections: NDArray[np.float32], header: HeaderLike,
                        track_ids: Sequence[str] | None = None,
                        writer: type[CdrWriter] = CdrWriter) -> bytes:
    """
    Return vision_msgs/Detection2DArray as outputs.detection_array_message builds it, serialized.

    `detections`: DETECTIONS rows (x1, y1, x2, y2, score, class_id) in pixels; `track_ids`: each
    row's id ('' for none).
    """
    rows = np.asarray(detections, dtype=np.float64).reshape(-1, 6)
    boxes = np.empty((len(rows), 5), dtype=np.float64)
    boxes[:, 0] = (rows[:, 0] + rows[:, 2]) / 2.0
    boxes[:, 1] = (rows[:, 1] + rows[:, 3]) / 2.0
    boxes[:, 2] = 0.0
    boxes[:, 3] = rows[:, 2] - rows[:, 0]
    boxes[:, 4] = rows[:, 3] - rows[:, 1]
    class_ids = [str(int(value)) for value in rows[:, 5].tolist()]
    scores = rows[:, 4].tolist()
    ids = track_ids if track_ids is not None else [''] * len(rows)
    out = writer()
    out.header(header)
    out.uint32(len(rows))
    box_bytes = boxes.tobytes()
    for index, (class_id, score, track_id) in enumerate(zip(class_ids, scores, ids)):
        out.header(header)
        out.uint32(1)  # results: one hypothesis
        out.string(class_id)
        out.packed(8, struct.pack('<d', score) + _DEFAULT_POSE)
        out.packed(8, box_bytes[index * 40:(index + 1) * 40])
        out.string(track_id)
    return out.value()


def point_cloud_cdr(header: HeaderLike, fields: Sequence[FieldLike], point_step: int, width: int,
                    data: bytes, writer: type[CdrWriter] = CdrWriter) -> bytes:
    """
    Return a sensor_msgs/PointCloud2 of one row (height 1), little-endian and dense, serialized.

    `fields`: PointField-like objects (name, offset, datatype, count).
    """
    out = writer()
    out.header(header)
    out.uint32(1)
    out.uint32(width)
    out.uint32(len(fields))
    for field in fields:
        out.string(field.name)
        out.uint32(field.offset)
        out.uint8(field.datatype)
        out.uint32(field.count)
    out.uint8(0)  # is_bigendian
    out.uint32(point_step)
    out.uint32(point_step * width)
    out.octets(data)
    out.uint8(1)  # is_dense
    return out.value()


def lanes_cloud_cdr(lanes: NDArray[np.float32], scores: NDArray[np.float32],
                    sides: NDArray[np.int8], header: HeaderLike,
                    writer: type[CdrWriter] = CdrWriter) -> bytes:
    """Return outputs.lanes_cloud_message's PointCloud2 of the same lanes, serialized."""
    points = lane_points(lanes, scores, sides)
    return point_cloud_cdr(header, LANE_POINT_FIELDS, LANE_POINT_DTYPE.itemsize, len(points),
                           points.tobytes(), writer)


def image_cdr(pixels: NDArray[np.uint8], header: HeaderLike, encoding: str,
              writer: type[CdrWriter] = CdrWriter) -> bytes:
    """Return a sensor_msgs/Image of an rgb8 [H, W, 3] or mono8 [H, W] array, serialized."""
    channels = 1 if pixels.ndim == 2 else pixels.shape[2]
    out = writer()
    out.header(header)
    out.uint32(pixels.shape[0])
    out.uint32(pixels.shape[1])
    out.string(encoding)
    out.uint8(0)  # is_bigendian
    out.uint32(pixels.shape[1] * channels)
    data = np.ascontiguousarray(pixels).reshape(-1).data
    out.uint32(len(data))  # the pixels' count; the pixels are copied once, by value()
    return out.value(data)
