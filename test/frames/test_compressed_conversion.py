"""
Unit tests for triton_perception.frames.image_conversion's CompressedImage path.

JPEG and PNG decoded to RGB, sizes checked against the pixel budget before decoding, damaged data
rejected with a reason (no ROS runtime needed).
"""
from __future__ import annotations

import array
import tracemalloc
from types import SimpleNamespace
from typing import Any

import cv2
import numpy as np
import pytest

from support.checkout import shared_path
from support.sample_images import (BUDGET, bus_rgb, mean_abs_error, NO_SENSOR_MSGS, random_rgb,
                                   rejection_reason, smooth_rgb)
from triton_perception.frames.image_conversion import compressed_to_rgb, ImageRejected


def compressed_msg(data: bytes, fmt: str = 'jpeg') -> SimpleNamespace:
    """Return a duck-typed CompressedImage with `data` and format `fmt`."""
    return SimpleNamespace(format=fmt, data=data)


def encoded(ext: str, image: np.ndarray, *params: int) -> bytes:
    """Return `image` encoded by OpenCV as `ext` with the writer parameters `params`."""
    ok, encoded = cv2.imencode(ext, image, list(params))
    assert ok
    return encoded.tobytes()


# --- compressed images ----------------------------------------------------------------


def test_decodes_real_jpeg_photo() -> None:
    """A real camera JPEG decodes to the same RGB as OpenCV's reader gives, C-contiguous."""
    rgb = bus_rgb()
    data = shared_path('data', 'images', 'bus.jpg').read_bytes()
    out = compressed_to_rgb(compressed_msg(data), BUDGET)
    assert out.flags.c_contiguous
    np.testing.assert_array_equal(out, rgb)


@pytest.mark.parametrize('progressive', [0, 1])
def test_decodes_jpeg_to_rgb(progressive: int) -> None:
    """Baseline and progressive JPEGs decode to RGB within JPEG's error, from an array.array too."""
    rgb = smooth_rgb()
    params = (cv2.IMWRITE_JPEG_QUALITY, 95, cv2.IMWRITE_JPEG_PROGRESSIVE, progressive)
    data = encoded('.jpg', rgb[..., ::-1], *params)
    out = compressed_to_rgb(compressed_msg(array.array('B', data)), BUDGET)
    assert out.shape == rgb.shape
    assert mean_abs_error(out, rgb) <= 2.0


def test_decodes_png_exactly() -> None:
    """A PNG decodes to exactly its RGB pixels, in a writeable array."""
    rgb = random_rgb()
    msg = compressed_msg(encoded('.png', rgb[..., ::-1]), 'bgr8; png compressed bgr8')
    out = compressed_to_rgb(msg, BUDGET)
    assert out.flags.c_contiguous and out.flags.writeable
    np.testing.assert_array_equal(out, rgb)


def test_decodes_grey_png_to_grey_rgb() -> None:
    """A greyscale PNG decodes to RGB with three equal channels: the models take three."""
    grey = random_rgb()[..., 0].copy()
    out = compressed_to_rgb(compressed_msg(encoded('.png', grey), 'png'), BUDGET)
    np.testing.assert_array_equal(out, np.repeat(grey[..., None], 3, axis=2))


def test_format_field_does_not_override_magic_bytes() -> None:
    """The magic bytes choose the decoder, not the format field: a PNG called jpeg decodes."""
    rgb = random_rgb()
    out = compressed_to_rgb(compressed_msg(encoded('.png', rgb[..., ::-1]), 'jpeg'), BUDGET)
    np.testing.assert_array_equal(out, rgb)


def test_exif_orientation_is_ignored() -> None:
    """An EXIF orientation tag leaves the frame unrotated: results stay in the camera's pixels."""
    rgb = smooth_rgb()
    jpeg = encoded('.jpg', rgb[..., ::-1])
    # Big-endian TIFF with a single IFD entry: Orientation (0x0112), SHORT, 6 = rotate 90.
    exif = (
        b'Exif\x00\x00' b'MM\x00\x2a\x00\x00\x00\x08' b'\x00\x01'
        b'\x01\x12\x00\x03\x00\x00\x00\x01\x00\x06\x00\x00' b'\x00\x00\x00\x00'
    )
    rotated = jpeg[:2] + b'\xff\xe1' + (len(exif) + 2).to_bytes(2, 'big') + exif + jpeg[2:]
    assert cv2.imdecode(np.frombuffer(rotated, np.uint8), cv2.IMREAD_COLOR).shape[:2] == (64, 48)
    assert compressed_to_rgb(compressed_msg(rotated), BUDGET).shape == rgb.shape


def test_real_sensor_msgs_compressed_image() -> None:
    """A real sensor_msgs CompressedImage decodes like the duck-typed one."""
    sensor_msgs = pytest.importorskip('sensor_msgs.msg', reason=NO_SENSOR_MSGS)
    rgb = random_rgb()
    msg = sensor_msgs.CompressedImage(format='png', data=encoded('.png', rgb[..., ::-1]))
    np.testing.assert_array_equal(compressed_to_rgb(msg, BUDGET), rgb)


@pytest.mark.parametrize('ext', ['.jpg', '.png'])
def test_header_size_is_checked_against_budget(ext: str) -> None:
    """A frame larger than the pixel budget is rejected as too_large, naming its size."""
    rgb = smooth_rgb()
    data = encoded(ext, rgb)
    pixels = rgb.shape[0] * rgb.shape[1]
    assert compressed_to_rgb(compressed_msg(data), pixels).shape == rgb.shape
    with pytest.raises(ImageRejected) as excinfo:
        compressed_to_rgb(compressed_msg(data), pixels - 1)
    assert excinfo.value.reason == 'too_large'
    assert '64x48' in str(excinfo.value)


def _png_claiming(width: int, height: int) -> bytes:
    data = bytearray(encoded('.png', smooth_rgb()))
    data[16:24] = width.to_bytes(4, 'big') + height.to_bytes(4, 'big')
    return bytes(data)


def _jpeg_claiming(width: int, height: int) -> bytes:
    data = bytearray(encoded('.jpg', smooth_rgb()))
    sof = data.index(b'\xff\xc0')
    data[sof + 5: sof + 9] = height.to_bytes(2, 'big') + width.to_bytes(2, 'big')
    return bytes(data)


@pytest.mark.parametrize(
    'make_bomb', [lambda: _png_claiming(100_000, 100_000), lambda: _jpeg_claiming(65_535, 65_535)],
    ids=['png', 'jpeg'],
)
def test_decompression_bomb_is_rejected_before_decoding(make_bomb: Any) -> None:
    """A header claiming a huge image is rejected before decoding, with no pixels allocated."""
    bomb = make_bomb()
    tracemalloc.start()
    try:
        with pytest.raises(ImageRejected) as excinfo:
            compressed_to_rgb(compressed_msg(bomb), BUDGET)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert excinfo.value.reason == 'too_large'
    assert peak < 1_000_000


def _corrupt_jpeg(kind: str) -> bytes:
    data = bytearray(encoded('.jpg', smooth_rgb()))
    if kind == 'precision':
        data[data.index(b'\xff\xc0') + 4] = 7  # libjpeg only decodes 8/12-bit samples
    elif kind == 'huffman':
        dht = data.index(b'\xff\xc4')
        data[dht + 5: dht + 21] = b'\xff' * 16  # code counts overflow the code space
    elif kind == 'no_frame':
        sof = data.index(b'\xff\xc0')
        del data[sof: sof + 2 + int.from_bytes(data[sof + 2: sof + 4], 'big')]
    elif kind == 'garbage':
        data[3:] = b'\x00' + b'\x5a' * 200
    return bytes(data)


@pytest.mark.parametrize('kind', ['precision', 'huffman', 'no_frame', 'garbage'])
def test_corrupted_jpeg_is_undecodable(kind: str) -> None:
    """A JPEG damaged in its frame header, Huffman table or data is rejected as undecodable."""
    msg = compressed_msg(_corrupt_jpeg(kind))
    assert rejection_reason(compressed_to_rgb, msg, BUDGET) == 'undecodable'


def test_corrupted_png_is_undecodable() -> None:
    """A PNG with a broken chunk CRC is rejected as undecodable, not decoded into garbage."""
    data = bytearray(encoded('.png', random_rgb()))
    data[data.index(b'IDAT') + 20] ^= 0xFF  # breaks the chunk CRC
    message = compressed_msg(bytes(data), 'png')
    assert rejection_reason(compressed_to_rgb, message, BUDGET) == 'undecodable'


@pytest.mark.parametrize('ext', ['.jpg', '.png'])
@pytest.mark.parametrize('keep', [0.5, 0.98])
def test_truncated_compressed_data_is_rejected(ext: str, keep: float) -> None:
    """JPEG or PNG data cut short is rejected as truncated, even when nearly whole."""
    data = encoded(ext, random_rgb())
    msg = compressed_msg(data[: int(len(data) * keep)])
    assert rejection_reason(compressed_to_rgb, msg, BUDGET) == 'truncated'


@pytest.mark.parametrize('ext, length', [('.jpg', 20), ('.jpg', 100), ('.png', 20)])
def test_compressed_data_cut_inside_header_is_truncated(ext: str, length: int) -> None:
    """Data cut inside the header is truncated, not undecodable: the sender lost bytes."""
    data = encoded(ext, smooth_rgb())[:length]
    assert rejection_reason(compressed_to_rgb, compressed_msg(data), BUDGET) == 'truncated'


@pytest.mark.parametrize('ext', ['.jpg', '.png'])
def test_trailing_bytes_after_the_end_marker_are_tolerated(ext: str) -> None:
    """Bytes after the end marker are tolerated: the image before them is whole."""
    rgb = smooth_rgb()
    data = encoded(ext, rgb[..., ::-1], cv2.IMWRITE_JPEG_QUALITY, 100) + b'\x00' * 64
    assert mean_abs_error(compressed_to_rgb(compressed_msg(data), BUDGET), rgb) <= 1.0


def test_rejects_unsupported_compressed_format() -> None:
    """A format other than JPEG or PNG is rejected as unsupported_format, naming the format."""
    data = encoded('.bmp', smooth_rgb())
    with pytest.raises(ImageRejected) as excinfo:
        compressed_to_rgb(compressed_msg(data, 'bmp'), BUDGET)
    assert excinfo.value.reason == 'unsupported_format'
    assert "'bmp'" in str(excinfo.value)


def test_rejects_empty_compressed_data() -> None:
    """Empty data is rejected as empty."""
    assert rejection_reason(compressed_to_rgb, compressed_msg(b''), BUDGET) == 'empty'
