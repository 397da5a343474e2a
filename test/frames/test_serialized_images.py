"""
frames.serialized_images against rclpy's own deserialization, and on damaged bytes.

The bytes are what rclpy.serialization.serialize_message writes (as a subscription with
``raw=True`` receives them); every message the reader reads must equal what
deserialize_message builds, and every message it cannot read is refused with a reason.
"""
from __future__ import annotations

import random
import struct
from typing import Any, Callable

import cv2
import numpy as np
import pytest
from rclpy.serialization import deserialize_message, serialize_message
from sensor_msgs.msg import CompressedImage, Image
from std_msgs.msg import Header

from triton_perception.frames.image_conversion import (check_image, encode_rgb, ImageRejected,
                                                       SUPPORTED_ENCODINGS)
from triton_perception.frames.serialized_images import (read_compressed_image, read_image,
                                                        UnreadableMessage)

SEED = 41
REASONS = {'big_endian', 'bad_encapsulation', 'truncated', 'bad_length', 'bad_string',
           'trailing_bytes'}
LONG_FRAME_ID = 'camera/' + 'front_left_' * 60


def _header(rng: random.Random, frame_id: str | None = None) -> Header:
    header = Header(frame_id=frame_id if frame_id is not None
                    else rng.choice(('', 'c', 'cam', 'camera', LONG_FRAME_ID)))
    header.stamp.sec = rng.randint(-2**31, 2**31 - 1)
    header.stamp.nanosec = rng.randint(0, 999_999_999)
    return header


def _image(rng: random.Random, encoding: str, width: int, height: int, padding: int,
           frame_id: str | None = None) -> Image:
    rgb = np.frombuffer(rng.randbytes(width * height * 3), np.uint8).reshape(height, width, 3)
    data, step = encode_rgb(rgb, encoding)
    if padding:
        rows = np.frombuffer(data, np.uint8).reshape(height, step)
        data = np.pad(rows, ((0, 0), (0, padding)), constant_values=7).tobytes()
        step += padding
    return Image(header=_header(rng, frame_id), height=height, width=width, encoding=encoding,
                 is_bigendian=rng.randint(0, 1), step=step, data=data)


def _compressed(rng: random.Random, extension: str, frame_id: str | None = None
                ) -> CompressedImage:
    height, width = rng.randint(1, 40), rng.randint(1, 40)
    noise = np.frombuffer(rng.randbytes(width * height * 3), np.uint8).reshape(height, width, 3)
    ok, encoded = cv2.imencode(extension, noise)
    assert ok
    return CompressedImage(header=_header(rng, frame_id), format=extension[1:],
                           data=encoded.tobytes())


def _assert_same(read: Any, message: Any, raw: bytes) -> None:
    """Assert that `read` holds `message`'s fields and that its data is a view of `raw`."""
    assert (read.header.stamp.sec, read.header.stamp.nanosec, read.header.frame_id) == (
        message.header.stamp.sec, message.header.stamp.nanosec, message.header.frame_id)
    names = ('format',) if isinstance(message, CompressedImage) else (
        'height', 'width', 'encoding', 'is_bigendian', 'step')
    for name in names:
        assert getattr(read, name) == getattr(message, name), name
    assert read.data.dtype == np.uint8 and read.data.ndim == 1
    assert read.data.tobytes() == bytes(message.data)
    assert not read.data.flags.writeable
    if read.data.size:
        assert np.shares_memory(read.data, np.frombuffer(raw, np.uint8))


def _check_against_rclpy(message: Any) -> None:
    raw = serialize_message(message)
    kind = type(message)
    reader: Callable[[bytes], Any] = read_compressed_image if kind is CompressedImage \
        else read_image
    _assert_same(reader(raw), deserialize_message(raw, kind), raw)


@pytest.mark.parametrize('encoding', SUPPORTED_ENCODINGS)
@pytest.mark.parametrize('padding', (0, 1, 3, 13))
def test_every_encoding_reads_as_rclpy_deserializes(encoding: str, padding: int) -> None:
    """Each supported encoding, unpadded and with odd row padding, at odd sizes."""
    rng = random.Random(f'{SEED}{encoding}{padding}')
    even = encoding in ('yuv422', 'uyvy', 'yuv422_yuy2')
    for width, height in ((2 if even else 1, 1), (34 if even else 33, 7), (64, 3)):
        _check_against_rclpy(_image(rng, encoding, width, height, padding))


@pytest.mark.parametrize('frame_id', ('', 'a', 'abc', 'abcd', LONG_FRAME_ID, 'kamera_ü'))
def test_frame_ids_of_every_length_shift_the_fields_after_them(frame_id: str) -> None:
    """The string lengths move every later field's alignment: 0 to 3 bytes of padding."""
    rng = random.Random(SEED)
    for encoding in ('rgb8', 'mono8', 'bayer_rggb8'):
        _check_against_rclpy(_image(rng, encoding, 5, 3, 1, frame_id))
    for extension in ('.jpg', '.png'):
        _check_against_rclpy(_compressed(rng, extension, frame_id))


def test_empty_data_and_odd_encoding_lengths_read_as_rclpy_deserializes() -> None:
    """An empty image and encodings of every length mod 4 (rclpy accepts any string)."""
    for encoding in ('', 'x', 'rgb', 'mono', 'bgr8x'):
        _check_against_rclpy(Image(encoding=encoding))
    _check_against_rclpy(CompressedImage())
    _check_against_rclpy(CompressedImage(format='jpeg', data=b'\x01\x02\x03'))


def test_compressed_images_read_as_rclpy_deserializes() -> None:
    """JPEG and PNG payloads of many sizes, so the data ends at every alignment."""
    rng = random.Random(SEED)
    for _ in range(20):
        _check_against_rclpy(_compressed(rng, rng.choice(('.jpg', '.png'))))


def test_the_reader_copies_no_pixels() -> None:
    """A 1920x1080 bgr8 frame: the data is the serialized buffer's memory, read-only."""
    rng = random.Random(SEED)
    message = Image(header=_header(rng), height=1080, width=1920, encoding='bgr8',
                    step=1920 * 3, data=bytes(1920 * 1080 * 3))
    raw = serialize_message(message)
    read = read_image(memoryview(raw))
    assert np.shares_memory(read.data, np.frombuffer(raw, np.uint8))
    assert read.data.size == 1920 * 1080 * 3


@pytest.mark.parametrize('damage, reason', [
    (lambda raw: b'\x00\x00' + raw[2:], 'big_endian'),
    (lambda raw: b'\x00\x07' + raw[2:], 'bad_encapsulation'),
    (lambda raw: raw[:3], 'truncated'),
    (lambda raw: raw[:10], 'truncated'),
    (lambda raw: raw[:-1], 'bad_length'),
    (lambda raw: raw + bytes(8), 'trailing_bytes'),
    (lambda raw: raw[:12] + struct.pack('<I', 2**32 - 1) + raw[16:], 'bad_length'),
    (lambda raw: raw[:19] + b'X' + raw[20:], 'bad_string'),
])
def test_damaged_images_are_refused_with_their_reason(damage: Callable[[bytes], bytes],
                                                      reason: str) -> None:
    """Big-endian, cut, lying lengths, a string without its NUL, bytes after the last field."""
    message = Image(height=2, width=2, encoding='mono8', step=2, data=b'\x01\x02\x03\x04')
    message.header.frame_id = 'cam'  # frame_id's NUL is byte 19
    with pytest.raises(UnreadableMessage) as refusal:
        read_image(damage(serialize_message(message)))
    assert refusal.value.reason == reason


def test_a_read_image_is_checked_as_a_message_is() -> None:
    """Data shorter than step x height reads, and image_conversion rejects it as truncated."""
    message = Image(height=3, width=2, encoding='mono8', step=2, data=b'\x01\x02\x03\x04')
    read = read_image(serialize_message(message))
    with pytest.raises(ImageRejected) as rejection:
        check_image(read, 100)
    assert rejection.value.reason == 'truncated'


def _mutated(rng: random.Random, raw: bytes) -> bytes:
    """Return `raw` truncated, bit-flipped, with a lying length, or replaced by random bytes."""
    kind = rng.choice(('truncate', 'flip', 'flip', 'length', 'length', 'random', 'encapsulation'))
    data = bytearray(raw)
    if kind == 'truncate':
        return bytes(data[:rng.randrange(len(data))])
    if kind == 'flip':
        for _ in range(rng.randint(1, 8)):
            # Most flips land in the first bytes: the header fields and the lengths.
            index = rng.randrange(min(len(data), rng.choice((32, 64, len(data)))))
            data[index] ^= 1 << rng.randrange(8)
        return bytes(data)
    if kind == 'length':
        offset = 4 + 4 * rng.randrange((min(len(data), 80) - 4) // 4)
        original = struct.unpack_from('<I', data, offset)[0]
        value = rng.choice((original + rng.randint(-4, 4), rng.randint(0, 2**32 - 1),
                            len(data) - offset, 0))
        struct.pack_into('<I', data, offset, value % 2**32)
        return bytes(data)
    if kind == 'random':
        body = rng.randbytes(rng.randint(0, 200))
        return rng.choice((b'\x00\x01\x00\x00', b'')) + body
    data[1] = rng.choice((0, 2, 3, 7, 0x0b))
    return bytes(data)


def _valid_message(rng: random.Random) -> Image | CompressedImage:
    if rng.random() < 0.3:
        return _compressed(rng, rng.choice(('.jpg', '.png')))
    return _image(rng, rng.choice(SUPPORTED_ENCODINGS), rng.randint(1, 12) * 2,
                  rng.randint(1, 8), rng.choice((0, 0, 1, 3)))


def test_fuzzed_bytes_read_as_rclpy_deserializes_or_are_refused() -> None:
    """
    2,000 damaged messages: each reads exactly as rclpy deserializes it, or is refused.

    Never another exception, and never a frame that differs from rclpy's (or that rclpy
    refuses). rclpy deserializes only what the reader read, so no lying length makes it
    allocate gigabytes.
    """
    rng = random.Random(SEED)
    outcomes: dict[str, int] = {}
    for _ in range(2000):
        message = _valid_message(rng)
        kind = type(message)
        raw = _mutated(rng, serialize_message(message))
        reader: Callable[[bytes], Any] = read_compressed_image if kind is CompressedImage \
            else read_image
        try:
            read = reader(raw)
        except UnreadableMessage as refusal:
            assert refusal.reason in REASONS, refusal.reason
            assert str(refusal)
            outcomes[refusal.reason] = outcomes.get(refusal.reason, 0) + 1
            continue
        _assert_same(read, deserialize_message(raw, kind), raw)
        outcomes['read'] = outcomes.get('read', 0) + 1
    assert outcomes.get('read', 0) > 200, outcomes
    assert set(outcomes) >= REASONS, outcomes
