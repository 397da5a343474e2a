"""
The output messages published as serialized CDR, ready for `Publisher.publish(bytes)`.

Only the messages whose bytes pay are written here: `bench --glue --publish-cost` measured, per
kind, building the rclpy message and publishing it against writing its bytes and publishing
those (docs/performance-log.md, "Which output messages are published as bytes"). The
Detection2DArray (built object by object: every nested Detection2D, Pose and covariance
array) and the images (whose uint8[] data rclpy converts, and Humble's message classes check
value by value) cost less as bytes; the other messages are built as rclpy messages
(result_messages, ground/ground_messages) and rclpy serializes them. rclpy's `publish` takes
the serialized message as `bytes` (`publish_raw`, Humble's `rclpy/publisher.py` on); a
subscriber receives the ordinary type. The bytes are what rmw_fastrtps_cpp writes for the same
message: a 4-byte encapsulation header (`00 01 00 00`, little-endian plain CDR), then the
fields in order, each primitive aligned to its own size counted from the end of that header; a
string is a uint32 length counting its terminating NUL, its UTF-8 bytes and the NUL; a sequence
is a uint32 count and its elements; a fixed array is its elements alone. The alignment padding,
which Fast CDR leaves as it found the buffer, is written as zeros. `test/outputs/test_cdr.py`
holds every writer byte-identical to `rclpy.serialization.serialize_message` of the same message
built as an rclpy message (bench/glue/untaken_ways), but for the padding, which it finds in the
bytes and checks is zero.
"""
from __future__ import annotations

import struct
from typing import Protocol, Sequence

import numpy as np
from numpy.typing import NDArray

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
                        track_ids: Sequence[str] | None = None) -> bytes:
    """
    Return vision_msgs/Detection2DArray of DETECTIONS rows, serialized: one Detection2D a row.

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
    out = CdrWriter()
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


def image_cdr(pixels: NDArray[np.uint8], header: HeaderLike, encoding: str) -> bytes:
    """Return a sensor_msgs/Image of an rgb8 [H, W, 3] or mono8 [H, W] array, serialized."""
    channels = 1 if pixels.ndim == 2 else pixels.shape[2]
    out = CdrWriter()
    out.header(header)
    out.uint32(pixels.shape[0])
    out.uint32(pixels.shape[1])
    out.string(encoding)
    out.uint8(0)  # is_bigendian
    out.uint32(pixels.shape[1] * channels)
    data = np.ascontiguousarray(pixels).reshape(-1).data
    out.uint32(len(data))  # the pixels' count; the pixels are copied once, by value()
    return out.value(data)
