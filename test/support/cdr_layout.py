"""
Where a serialized message's alignment padding lies, read from its bytes and its type.

A CDR writer's padding cannot be compared with rclpy's (Fast CDR leaves those bytes as it found
the buffer), so a test finds it by walking the message's fields through the bytes: each
primitive aligned to its size from the end of the 4-byte encapsulation header, strings and
sequences led by a uint32 count. The walk also checks that the bytes hold exactly one message.
"""
from __future__ import annotations

import importlib
import struct

from rosidl_parser.definition import (AbstractGenericString, AbstractNestedType, Array,
                                      BasicType, NamespacedType)

HEADER_BYTES = 4
SIZES = {'boolean': 1, 'octet': 1, 'char': 1, 'uint8': 1, 'int8': 1, 'int16': 2, 'uint16': 2,
         'int32': 4, 'uint32': 4, 'float': 4, 'int64': 8, 'uint64': 8, 'double': 8}


class _Walk:
    """A position in the bytes and the padding offsets passed so far."""

    def __init__(self, data: bytes) -> None:
        self.data, self.position, self.padding = data, HEADER_BYTES, []

    def align(self, size: int) -> None:
        skip = -(self.position - HEADER_BYTES) % size
        self.padding += range(self.position, self.position + skip)
        self.position += skip

    def count(self) -> int:
        self.align(4)
        (value,) = struct.unpack_from('<I', self.data, self.position)
        self.position += 4
        return int(value)

    def elements(self, kind: object, count: int) -> None:
        if isinstance(kind, BasicType):  # contiguous: one alignment for all
            self.align(SIZES[kind.typename])
            self.position += count * SIZES[kind.typename]
            return
        for _ in range(count):
            self.field(kind)

    def field(self, kind: object) -> None:
        if isinstance(kind, BasicType):
            self.elements(kind, 1)
        elif isinstance(kind, AbstractGenericString):
            length = self.count()  # first: it moves the position past the count
            self.position += length
        elif isinstance(kind, Array):
            self.elements(kind.value_type, kind.size)
        elif isinstance(kind, AbstractNestedType):
            self.elements(kind.value_type, self.count())
        elif isinstance(kind, NamespacedType):
            self.message(getattr(importlib.import_module('.'.join(kind.namespaces)), kind.name))
        else:
            raise TypeError(f'no CDR layout for {kind!r}')

    def message(self, message_type: type) -> None:
        for kind in message_type.SLOT_TYPES:  # type: ignore[attr-defined]
            self.field(kind)


def padding_offsets(data: bytes, message_type: type) -> list[int]:
    """Return the offsets of `data` (a serialized `message_type`) that are alignment padding."""
    walk = _Walk(data)
    walk.message(message_type)
    assert walk.position == len(data), f'{len(data) - walk.position} bytes after the message'
    return walk.padding
