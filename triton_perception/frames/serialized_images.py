"""
Read a serialized sensor_msgs/Image or CompressedImage without building the message.

A subscription with ``raw=True`` hands over the message as its CDR bytes. rclpy would build a
Python message from them and copy the pixels into it (ros2/rclpy#1025); reading the few header
fields here instead leaves the pixels where they are: ``data`` is a read-only numpy view into
the given buffer, which must stay alive (and unchanged) while the view is used.

The bytes are CDR as DDS sends them: a 4-byte encapsulation header (only little-endian plain
CDR, ``00 01``, is read; its options may count padding at the end), then the fields, each
aligned to its size counted from the end of that header. A string is a uint32 length counting
its terminating NUL, then its bytes; a byte sequence is a uint32 count, then the bytes.
Anything else, a message cut short, a length longer than what is left, a string without its
NUL, is refused with one error, ``UnreadableMessage``, whose ``reason`` says which.

What the fields say about the pixels (an encoding, data shorter than step x height, a budget)
is image_conversion's to check, for a read frame as for a built message, so a frame is
rejected for the same reasons however it was taken.
"""
from __future__ import annotations

from dataclasses import dataclass
import struct
from typing import Callable, TYPE_CHECKING, Union

import numpy as np
from numpy.typing import NDArray

from triton_perception.frames.accounting import FrameRejected

if TYPE_CHECKING:
    from std_msgs.msg import Header

_CDR_LE = b'\x00\x01'
_CDR_BE = b'\x00\x00'
_ENCAPSULATION = 4
_UINT32 = struct.Struct('<I')
_STAMP = struct.Struct('<iI')
_SIZE = struct.Struct('<II')
Buffer = Union[bytes, bytearray, memoryview]


class UnreadableMessage(FrameRejected):
    """
    The bytes are not a serialized message of the expected type.

    ``reason`` is one of: big_endian, bad_encapsulation, truncated, bad_length, bad_string,
    trailing_bytes.
    """


@dataclass(frozen=True)
class ReadStamp:
    """A builtin_interfaces/Time's fields as read."""

    sec: int
    nanosec: int


@dataclass(frozen=True)
class ReadHeader:
    """A std_msgs/Header's fields as read: what read_image builds unless told otherwise."""

    stamp: ReadStamp
    frame_id: str


def read_header(sec: int, nanosec: int, frame_id: str) -> ReadHeader:
    """Return the header fields as a ReadHeader (the default ``make_header``)."""
    return ReadHeader(ReadStamp(sec, nanosec), frame_id)


# Builds a read frame's header: a std_msgs/Header for a node that passes it on, or a ReadHeader.
HeaderFactory = Callable[[int, int, str], 'Header | ReadHeader']


@dataclass  # not frozen: image_conversion's message protocols have plain attributes
class ReadImage:
    """The fields of a sensor_msgs/Image; ``data`` is a read-only view of the serialized bytes."""

    header: Header | ReadHeader
    height: int
    width: int
    encoding: str
    is_bigendian: int
    step: int
    data: NDArray[np.uint8]


@dataclass
class ReadCompressedImage:
    """The fields of a sensor_msgs/CompressedImage; ``data`` views the serialized bytes."""

    header: Header | ReadHeader
    format: str  # noqa: A003 (sensor_msgs/CompressedImage's field name)
    data: NDArray[np.uint8]


class _Cursor:
    """A position in the CDR body; offsets count from the end of the encapsulation header."""

    def __init__(self, buffer: Buffer) -> None:
        self.view = memoryview(buffer).cast('B')
        if len(self.view) < _ENCAPSULATION:
            raise UnreadableMessage('truncated', f'{len(self.view)} bytes hold no CDR header')
        kind = bytes(self.view[:2])
        if kind == _CDR_BE:
            raise UnreadableMessage('big_endian', 'big-endian CDR is not read (only 00 01)')
        if kind != _CDR_LE:
            raise UnreadableMessage('bad_encapsulation',
                                    f'encapsulation {kind.hex()} is not little-endian CDR (0001)')
        # The options' last two bits count the padding a writer appended (DDS-XTypes 7.4.3.4).
        self.view = self.view[:len(self.view) - (self.view[3] & 3)]
        self.position = _ENCAPSULATION

    def align(self, size: int) -> None:
        self.position += -(self.position - _ENCAPSULATION) % size

    def fixed(self, layout: struct.Struct, what: str) -> tuple[int, ...]:
        """Unpack `layout` (integers only, as every layout here) at the next 4-byte boundary."""
        self.align(4)
        end = self.position + layout.size
        if end > len(self.view):
            raise UnreadableMessage('truncated', f'the message ends inside {what} '
                                    f'(byte {self.position} of {len(self.view)})')
        values = layout.unpack_from(self.view, self.position)
        self.position = end
        return values

    def octet(self, what: str) -> int:
        if self.position >= len(self.view):
            raise UnreadableMessage('truncated', f'the message ends before {what}')
        value = self.view[self.position]
        self.position += 1
        return int(value)

    def sized(self, what: str) -> tuple[int, int]:
        """Return (start, length) of a length-prefixed run, after checking it fits."""
        length = self.fixed(_UINT32, f'the length of {what}')[0]
        if length > len(self.view) - self.position:
            raise UnreadableMessage('bad_length', f'{what} claims {length} bytes; only '
                                    f'{len(self.view) - self.position} are left')
        start = self.position
        self.position += length
        return start, length

    def string(self, what: str) -> str:
        start, length = self.sized(what)
        if length == 0:  # what Fast CDR reads as '' (writers send at least the NUL)
            return ''
        raw = bytes(self.view[start:start + length])
        if raw[-1] != 0 or 0 in raw[:-1]:
            raise UnreadableMessage('bad_string', f'{what} of {length} bytes is not one '
                                    'NUL-terminated string')
        try:
            return raw[:-1].decode('utf-8')
        except UnicodeDecodeError:
            raise UnreadableMessage('bad_string', f'{what} is not UTF-8') from None

    def octets(self, what: str) -> NDArray[np.uint8]:
        start, length = self.sized(what)
        data = np.frombuffer(self.view, np.uint8, count=length, offset=start)
        data.flags.writeable = False  # a view of the received message, shared by its readers
        return data

    def header(self, make_header: HeaderFactory) -> Header | ReadHeader:
        sec, nanosec = self.fixed(_STAMP, 'header.stamp')
        return make_header(sec, nanosec, self.string('header.frame_id'))

    def end(self) -> None:
        """Allow what a writer pads a sample to (a multiple of 4), nothing more."""
        left = len(self.view) - self.position
        if left >= 4:
            raise UnreadableMessage('trailing_bytes', f'{left} bytes follow the last field')


def read_image(buffer: Buffer, make_header: HeaderFactory = read_header) -> ReadImage:
    """
    Read a serialized sensor_msgs/Image; ``data`` is a view of ``buffer``, not a copy.

    ``make_header(sec, nanosec, frame_id)`` builds ``header`` (a std_msgs/Header for a node
    that passes it on; read_header by default). Raises UnreadableMessage.
    """
    cursor = _Cursor(buffer)
    header = cursor.header(make_header)
    height, width = cursor.fixed(_SIZE, 'height and width')
    encoding = cursor.string('encoding')
    is_bigendian = cursor.octet('is_bigendian')
    step = cursor.fixed(_UINT32, 'step')[0]
    data = cursor.octets('data')
    cursor.end()
    return ReadImage(header, height, width, encoding, is_bigendian, step, data)


def read_compressed_image(buffer: Buffer,
                          make_header: HeaderFactory = read_header) -> ReadCompressedImage:
    """Read a serialized sensor_msgs/CompressedImage as read_image reads an Image."""
    cursor = _Cursor(buffer)
    header = cursor.header(make_header)
    image_format = cursor.string('format')
    data = cursor.octets('data')
    cursor.end()
    return ReadCompressedImage(header, image_format, data)
