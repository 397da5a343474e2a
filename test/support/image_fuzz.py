"""
Seeded generators of hostile camera frames: the fields of sensor_msgs Image and CompressedImage.

Each call draws one kind of damage (invalid encoding, truncated or oversized data, bad step,
absurd sizes, random bytes, corrupted or bomb-like JPEG/PNG) or a valid frame, so that the
fields can fill either a ROS message or a duck-typed object for the pure converters.
"""
from __future__ import annotations

import random
import struct
from typing import Any
import zlib

import cv2
import numpy as np

from triton_perception.frames.image_conversion import encode_rgb, SUPPORTED_ENCODINGS

UINT32_MAX = 2**32 - 1
INVALID_ENCODINGS = ('', '32FC1', '16UC1', 'rgb16', 'RGB8', 'jpeg', 'bgr8 ', 'mono16', '8UC3',
                     'bayer_rggb16', 'nv12')
FORMATS = ('jpeg', 'png', '', 'bgr8; jpeg compressed bgr8', 'rgb8; png compressed', 'tiff')
PNG_SIGNATURE = b'\x89PNG\r\n\x1a\n'


def _noise(rng: random.Random, height: int, width: int) -> np.ndarray:
    return np.frombuffer(rng.randbytes(height * width * 3), np.uint8).reshape(height, width, 3)


def _valid_image(rng: random.Random) -> dict[str, Any]:
    encoding = rng.choice(SUPPORTED_ENCODINGS)
    bytes_per_pixel = 2 if encoding in ('yuv422', 'uyvy', 'yuv422_yuy2') else 1
    width = rng.randint(1, 32) * 2 if bytes_per_pixel == 2 else rng.randint(1, 64)
    height = rng.randint(1, 64)
    data, step = encode_rgb(_noise(rng, height, width), encoding)
    padding = rng.choice((0, 0, rng.randint(1, 16)))
    if padding:
        rows = np.frombuffer(data, np.uint8).reshape(height, step)
        data = np.pad(rows, ((0, 0), (0, padding))).tobytes()
        step += padding
    return {'height': height, 'width': width, 'encoding': encoding,
            'is_bigendian': rng.randint(0, 1), 'step': step, 'data': data}


def fuzzed_image(rng: random.Random) -> dict[str, Any]:
    """Fields of a sensor_msgs/Image: valid about one time in six, otherwise damaged."""
    fields = _valid_image(rng)
    kind = rng.choice(('valid', 'encoding', 'truncated', 'oversized', 'step', 'huge', 'zero',
                       'random', 'odd_width'))
    if kind == 'encoding':
        fields['encoding'] = rng.choice(
            INVALID_ENCODINGS + (rng.randbytes(rng.randint(1, 12)).decode('latin-1'),))
    elif kind == 'truncated':
        fields['data'] = fields['data'][:rng.randint(0, len(fields['data']) - 1)]
    elif kind == 'oversized':
        fields['data'] += rng.randbytes(rng.randint(1, 4096))
    elif kind == 'step':
        fields['step'] = rng.choice((0, rng.randint(0, fields['step']), UINT32_MAX))
    elif kind == 'huge':
        fields[rng.choice(('width', 'height'))] = rng.randint(65, UINT32_MAX)
    elif kind == 'zero':
        fields[rng.choice(('width', 'height'))] = 0
    elif kind == 'random':
        fields = {'height': rng.randint(0, 70), 'width': rng.randint(0, 70),
                  'encoding': rng.choice(SUPPORTED_ENCODINGS + INVALID_ENCODINGS),
                  'is_bigendian': rng.randint(0, 1), 'step': rng.randint(0, 300),
                  'data': rng.randbytes(rng.randint(0, 6000))}
    elif kind == 'odd_width':
        width = rng.randint(0, 31) * 2 + 1
        fields.update(encoding=rng.choice(('yuv422', 'uyvy', 'yuv422_yuy2')), width=width,
                      step=width * 2, data=rng.randbytes(width * 2 * fields['height']))
    return fields


def _png_chunk(kind: bytes, payload: bytes) -> bytes:
    return (struct.pack('>I', len(payload)) + kind + payload
            + struct.pack('>I', zlib.crc32(kind + payload)))


def png_bomb(width: int, height: int) -> bytes:
    """Return a PNG whose header claims `width` x `height`, with almost no data behind it."""
    header = struct.pack('>IIBBBBB', width, height, 8, 2, 0, 0, 0)
    return (PNG_SIGNATURE + _png_chunk(b'IHDR', header)
            + _png_chunk(b'IDAT', zlib.compress(b'\0' * 64)) + _png_chunk(b'IEND', b''))


def jpeg_bomb(rng: random.Random, width: int, height: int) -> bytes:
    """Return a real JPEG with its frame header rewritten to claim `width` x `height`."""
    ok, jpeg = cv2.imencode('.jpg', _noise(rng, 8, 8))
    assert ok
    data = bytearray(jpeg.tobytes())
    sof = data.index(b'\xff\xc0')
    data[sof + 5:sof + 9] = struct.pack('>HH', height, width)
    return bytes(data)


def fuzzed_compressed(rng: random.Random) -> dict[str, Any]:
    """Fields of a sensor_msgs/CompressedImage: valid JPEG/PNG about one time in six."""
    extension = rng.choice(('.jpg', '.png'))
    ok, encoded = cv2.imencode(extension, _noise(rng, rng.randint(1, 64), rng.randint(1, 64)))
    assert ok
    data = encoded.tobytes()
    kind = rng.choice(('valid', 'truncated', 'corrupt', 'tail', 'random', 'magic', 'bomb',
                       'empty'))
    if kind == 'truncated':
        data = data[:rng.randint(0, len(data) - 1)]
    elif kind == 'corrupt':
        damaged = bytearray(data)
        for _ in range(rng.randint(1, 8)):
            damaged[rng.randint(min(20, len(data) - 1), len(data) - 1)] = rng.randint(0, 255)
        data = bytes(damaged)
    elif kind == 'tail':
        data += rng.randbytes(rng.randint(1, 2048))
    elif kind == 'random':
        data = rng.randbytes(rng.randint(1, 2048))
    elif kind == 'magic':
        data = rng.choice((PNG_SIGNATURE, b'\xff\xd8\xff')) + rng.randbytes(rng.randint(0, 512))
    elif kind == 'bomb':
        size = (rng.randint(5000, 65535), rng.randint(5000, 65535))
        data = png_bomb(*size) if extension == '.png' else jpeg_bomb(rng, *size)
    elif kind == 'empty':
        data = b''
    return {'format': rng.choice(FORMATS), 'data': data}
