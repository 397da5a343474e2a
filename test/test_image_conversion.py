"""Unit tests for triton_perception.image_conversion (no ROS runtime needed)."""

from __future__ import annotations

import array
import tracemalloc
from types import SimpleNamespace
from typing import Any

import cv2
import numpy as np
import pytest

from triton_perception.image_conversion import (
    SUPPORTED_ENCODINGS,
    ImageRejected,
    compressed_to_rgb,
    encode_rgb,
    image_to_rgb,
)

from conftest import shared_path  # noqa: E402
BUDGET = 10_000_000
PADDING = 13
NO_SENSOR_MSGS = 'ROS 2 sensor_msgs is not installed'
EXACT = ('rgb8', 'bgr8', 'rgba8', 'bgra8')
YUV = ('yuv422', 'uyvy', 'yuv422_yuy2')
BAYER = ('bayer_rggb8', 'bayer_bggr8', 'bayer_gbrg8', 'bayer_grbg8')
# Mean absolute error per channel value after encode -> decode. Measured: smooth image
# YUV 1.16, Bayer 0.16; bus photo YUV 0.62, Bayer 7.1 (bilinear demosaicing on sharp
# edges). A wrong byte order or mosaic pattern scores 17 or more on the photo, 65 or more
# on the smooth image, so the bounds below still catch those mistakes.
LOSSY_BOUNDS = {'smooth': {'yuv': 2.0, 'bayer': 1.0}, 'bus': {'yuv': 1.5, 'bayer': 9.0}}


def _smooth_rgb() -> np.ndarray:
    """Colour gradients: demosaicing and chroma subsampling are near-lossless on them."""
    y, x = np.mgrid[0:48, 0:64]
    return np.stack([x * 4, y * 5, 255 - (x + y) * 2], axis=-1).astype(np.uint8)


def _random_rgb(height: int = 48, width: int = 64) -> np.ndarray:
    return np.random.default_rng(7).integers(0, 256, (height, width, 3), dtype=np.uint8)


def _bus_rgb() -> np.ndarray:
    return np.ascontiguousarray(cv2.imread(str(shared_path('data', 'images', 'bus.jpg')))[..., ::-1])


# Where each colour sits in a 2x2 Bayer cell, as ROS names the patterns (row, column).
BAYER_CELLS = {'bayer_rggb8': {'r': (0, 0), 'g1': (0, 1), 'g2': (1, 0), 'b': (1, 1)},
               'bayer_bggr8': {'b': (0, 0), 'g1': (0, 1), 'g2': (1, 0), 'r': (1, 1)},
               'bayer_gbrg8': {'g1': (0, 0), 'b': (0, 1), 'r': (1, 0), 'g2': (1, 1)},
               'bayer_grbg8': {'g1': (0, 0), 'r': (0, 1), 'b': (1, 0), 'g2': (1, 1)}}
CHANNEL = {'r': 0, 'g1': 1, 'g2': 1, 'b': 2}


def _independent_bytes(rgb: np.ndarray, encoding: str) -> tuple[bytes, int]:
    """The message bytes of `rgb` built without the package's encoder: numpy channel slicing
    and OpenCV, from the encodings' definitions (REP 104 / sensor_msgs image_encodings). YUV
    comes from the package's encoder, which test_yuv_encoder_matches_opencv_encoder checks."""
    height, width = rgb.shape[:2]
    alpha = np.full((height, width, 1), 200, np.uint8)
    if encoding == 'rgb8':
        pixels = rgb
    elif encoding == 'bgr8':
        pixels = rgb[..., ::-1]
    elif encoding == 'rgba8':
        pixels = np.concatenate([rgb, alpha], axis=2)
    elif encoding == 'bgra8':
        pixels = np.concatenate([rgb[..., ::-1], alpha], axis=2)
    elif encoding == 'mono8':
        pixels = cv2.cvtColor(rgb, cv2.COLOR_RGB2GRAY)
    elif encoding in BAYER_CELLS:
        pixels = np.empty((height, width), np.uint8)
        for colour, (row, column) in BAYER_CELLS[encoding].items():
            pixels[row::2, column::2] = rgb[row::2, column::2, CHANNEL[colour]]
    else:
        return encode_rgb(rgb, encoding)
    pixels = np.ascontiguousarray(pixels)
    return pixels.tobytes(), pixels.strides[0]


def _image_msg(
    rgb: np.ndarray, encoding: str, padding: int = 0, **overrides: Any
) -> SimpleNamespace:
    """Build an Image-like message, optionally with ``padding`` junk bytes per row."""
    data, step = _independent_bytes(rgb, encoding)
    height, width = rgb.shape[:2]
    if padding:
        rows = np.frombuffer(data, np.uint8).reshape(height, step)
        data = np.pad(rows, ((0, 0), (0, padding)), constant_values=0xAB).tobytes()
        step += padding
    fields = dict(height=height, width=width, encoding=encoding, is_bigendian=0)
    fields.update(step=step, data=data)
    fields.update(overrides)
    return SimpleNamespace(**fields)


def _compressed_msg(data: bytes, fmt: str = 'jpeg') -> SimpleNamespace:
    return SimpleNamespace(format=fmt, data=data)


def _encode(ext: str, image: np.ndarray, *params: int) -> bytes:
    ok, encoded = cv2.imencode(ext, image, list(params))
    assert ok
    return encoded.tobytes()


def _reason(call: Any, *args: Any) -> str:
    with pytest.raises(ImageRejected) as excinfo:
        call(*args)
    return excinfo.value.reason


def _mean_abs_error(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.abs(a.astype(np.int16) - b.astype(np.int16)).mean())


# --- raw images -----------------------------------------------------------------------


def test_supported_encodings_are_the_documented_set() -> None:
    assert isinstance(SUPPORTED_ENCODINGS, tuple)
    assert set(SUPPORTED_ENCODINGS) == {*EXACT, 'mono8', *YUV, *BAYER}


@pytest.mark.parametrize('padding', [0, PADDING])
@pytest.mark.parametrize('encoding', SUPPORTED_ENCODINGS)
def test_output_is_contiguous_uint8_rgb(encoding: str, padding: int) -> None:
    rgb = _smooth_rgb()
    out = image_to_rgb(_image_msg(rgb, encoding, padding), BUDGET)
    assert out.shape == rgb.shape
    assert out.dtype == np.uint8
    assert out.flags.c_contiguous


@pytest.mark.parametrize('padding', [0, PADDING])
@pytest.mark.parametrize('encoding', EXACT)
def test_colour_encodings_round_trip_exactly(encoding: str, padding: int) -> None:
    rgb = _random_rgb()
    np.testing.assert_array_equal(image_to_rgb(_image_msg(rgb, encoding, padding), BUDGET), rgb)


@pytest.mark.parametrize('padding', [0, PADDING])
def test_mono8_round_trips_to_grey(padding: int) -> None:
    rgb = _random_rgb()
    grey = cv2.cvtColor(rgb, cv2.COLOR_RGB2GRAY)
    out = image_to_rgb(_image_msg(rgb, 'mono8', padding), BUDGET)
    np.testing.assert_array_equal(out, np.repeat(grey[..., None], 3, axis=2))


@pytest.mark.parametrize('padding', [0, PADDING])
@pytest.mark.parametrize('encoding', YUV + BAYER)
@pytest.mark.parametrize('source', ['smooth', 'bus'])
def test_lossy_encodings_round_trip_closely(source: str, encoding: str, padding: int) -> None:
    rgb = _smooth_rgb() if source == 'smooth' else _bus_rgb()
    out = image_to_rgb(_image_msg(rgb, encoding, padding), BUDGET)
    bound = LOSSY_BOUNDS[source]['yuv' if encoding in YUV else 'bayer']
    assert _mean_abs_error(out, rgb) <= bound


@pytest.mark.parametrize('encoding', [*EXACT, 'mono8', *BAYER])
def test_package_encoder_matches_the_encoding_definitions(encoding: str) -> None:
    """encode_rgb (used by the demo, bench and fuzzing) writes what the definitions say
    (alpha aside: the package writes 255)."""
    rgb = _random_rgb()
    ours, step = encode_rgb(rgb, encoding)
    theirs, their_step = _independent_bytes(rgb, encoding)
    assert step == their_step
    ours_array, theirs_array = np.frombuffer(ours, np.uint8), np.frombuffer(theirs, np.uint8)
    if encoding in ('rgba8', 'bgra8'):
        ours_array, theirs_array = ours_array.reshape(-1, 4)[:, :3], theirs_array.reshape(-1, 4)[:, :3]
    np.testing.assert_array_equal(ours_array, theirs_array)


def test_yuv_encoder_matches_opencv_encoder() -> None:
    if not hasattr(cv2, 'COLOR_RGB2YUV_UYVY'):
        pytest.skip('this OpenCV has no RGB to YUV 4:2:2 conversion to compare with')
    rgb = _bus_rgb()
    pairs = (('uyvy', cv2.COLOR_RGB2YUV_UYVY), ('yuv422_yuy2', cv2.COLOR_RGB2YUV_YUY2))
    for encoding, code in pairs:
        ours = np.frombuffer(encode_rgb(rgb, encoding)[0], np.uint8)
        theirs = cv2.cvtColor(rgb, code).reshape(-1)
        assert np.abs(ours.astype(np.int16) - theirs).max() <= 1  # rounding only


def test_yuv422_is_uyvy() -> None:
    rgb = _smooth_rgb()
    assert encode_rgb(rgb, 'yuv422') == encode_rgb(rgb, 'uyvy')


@pytest.mark.parametrize(
    'make_data',
    [
        bytes,
        bytearray,
        memoryview,
        lambda b: array.array('B', b),
        lambda b: np.frombuffer(b, np.uint8),
    ],
    ids=['bytes', 'bytearray', 'memoryview', 'array', 'ndarray'],
)
def test_accepts_every_byte_container(make_data: Any) -> None:
    rgb = _random_rgb()
    msg = _image_msg(rgb, 'bgr8', PADDING)
    msg.data = make_data(msg.data)
    np.testing.assert_array_equal(image_to_rgb(msg, BUDGET), rgb)


def test_accepts_strided_numpy_data() -> None:
    rgb = _random_rgb()
    msg = _image_msg(rgb, 'rgb8')
    doubled = np.repeat(np.frombuffer(msg.data, np.uint8), 2)
    msg.data = doubled[::2]
    np.testing.assert_array_equal(image_to_rgb(msg, BUDGET), rgb)


@pytest.mark.parametrize(
    'make_data',
    [bytes, bytearray, lambda b: array.array('B', b)],
    ids=['bytes', 'bytearray', 'array'],
)
def test_unpadded_rgb8_is_a_read_only_zero_copy_view(make_data: Any) -> None:
    rgb = _random_rgb()
    msg = _image_msg(rgb, 'rgb8')
    msg.data = make_data(msg.data)
    out = image_to_rgb(msg, BUDGET)
    assert np.shares_memory(out, np.frombuffer(msg.data, np.uint8))
    assert not out.flags.writeable
    np.testing.assert_array_equal(out, rgb)


def test_padded_rgb8_is_copied_once_into_a_writable_array() -> None:
    rgb = _random_rgb()
    msg = _image_msg(rgb, 'rgb8', PADDING)
    msg.data = bytearray(msg.data)
    out = image_to_rgb(msg, BUDGET)
    assert not np.shares_memory(out, np.frombuffer(msg.data, np.uint8))
    assert out.flags.writeable
    np.testing.assert_array_equal(out, rgb)


@pytest.mark.parametrize('encoding', [e for e in SUPPORTED_ENCODINGS if e != 'rgb8'])
def test_conversion_reads_padded_rows_in_place(
    encoding: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """cvtColor must get a strided view of msg.data, so its output is the only copy."""
    msg = _image_msg(_smooth_rgb(), encoding, PADDING)
    sources = []
    convert = cv2.cvtColor

    def spy(src: np.ndarray, *args: Any, **kwargs: Any) -> np.ndarray:
        sources.append(src)
        return convert(src, *args, **kwargs)

    monkeypatch.setattr(cv2, 'cvtColor', spy)
    image_to_rgb(msg, BUDGET)
    assert len(sources) == 1
    assert np.shares_memory(sources[0], np.frombuffer(msg.data, np.uint8))


def test_is_bigendian_is_ignored_for_8_bit_data() -> None:
    rgb = _random_rgb()
    out = image_to_rgb(_image_msg(rgb, 'bgra8', PADDING, is_bigendian=1), BUDGET)
    np.testing.assert_array_equal(out, rgb)


def test_bytes_beyond_step_times_height_are_ignored() -> None:
    rgb = _random_rgb()
    msg = _image_msg(rgb, 'bgr8')
    msg.data += b'\x00' * 100
    np.testing.assert_array_equal(image_to_rgb(msg, BUDGET), rgb)


def test_real_sensor_msgs_image() -> None:
    sensor_msgs = pytest.importorskip('sensor_msgs.msg', reason=NO_SENSOR_MSGS)
    rgb = _random_rgb()
    fields = vars(_image_msg(rgb, 'bgr8', PADDING))
    msg = sensor_msgs.Image(**fields)
    assert isinstance(msg.data, array.array)  # what rclpy hands to callbacks
    np.testing.assert_array_equal(image_to_rgb(msg, BUDGET), rgb)

    view_msg = sensor_msgs.Image(**vars(_image_msg(rgb, 'rgb8')))
    out = image_to_rgb(view_msg, BUDGET)
    assert np.shares_memory(out, np.frombuffer(view_msg.data, np.uint8))


@pytest.mark.parametrize('encoding', ['32FC1', 'mono16', 'rgb16', 'bgr16', '8UC1', 'RGB8', ''])
def test_rejects_unsupported_encoding(encoding: str) -> None:
    msg = _image_msg(_random_rgb(), 'rgb8')
    msg.encoding = encoding
    with pytest.raises(ImageRejected) as excinfo:
        image_to_rgb(msg, BUDGET)
    assert excinfo.value.reason == 'unsupported_encoding'
    assert f"'{encoding}'" in str(excinfo.value)
    assert ', '.join(SUPPORTED_ENCODINGS) in str(excinfo.value)


def test_image_rejected_is_a_value_error() -> None:
    assert issubclass(ImageRejected, ValueError)


@pytest.mark.parametrize('height, width', [(0, 64), (48, 0), (0, 0)])
def test_rejects_zero_size(height: int, width: int) -> None:
    msg = _image_msg(_random_rgb(), 'rgb8', height=height, width=width)
    assert _reason(image_to_rgb, msg, BUDGET) == 'empty'


def test_rejects_empty_data() -> None:
    msg = _image_msg(_random_rgb(), 'rgb8', data=b'')
    assert _reason(image_to_rgb, msg, BUDGET) == 'empty'


@pytest.mark.parametrize('encoding', ['rgb8', 'bgra8', 'mono8', 'uyvy', 'bayer_rggb8'])
def test_rejects_step_shorter_than_a_row(encoding: str) -> None:
    msg = _image_msg(_smooth_rgb(), encoding)
    msg.step -= 1
    with pytest.raises(ImageRejected) as excinfo:
        image_to_rgb(msg, BUDGET)
    assert excinfo.value.reason == 'bad_step'
    assert str(msg.step) in str(excinfo.value)


@pytest.mark.parametrize('padding', [0, PADDING])
def test_rejects_truncated_data(padding: int) -> None:
    msg = _image_msg(_random_rgb(), 'bgr8', padding)
    msg.data = msg.data[:-1]
    assert _reason(image_to_rgb, msg, BUDGET) == 'truncated'


@pytest.mark.parametrize('encoding', YUV)
def test_rejects_odd_width_for_yuv422(encoding: str) -> None:
    msg = SimpleNamespace(
        height=4, width=5, encoding=encoding, is_bigendian=0, step=10, data=bytes(40)
    )
    assert _reason(image_to_rgb, msg, BUDGET) == 'odd_width'
    assert _reason(encode_rgb, _random_rgb(4, 5), encoding) == 'odd_width'


def test_rejects_data_that_is_not_a_buffer() -> None:
    msg = _image_msg(_random_rgb(2, 2), 'mono8', data=[0, 1, 2, 3])
    assert _reason(image_to_rgb, msg, BUDGET) == 'bad_data'


def test_pixel_budget_is_inclusive() -> None:
    rgb = _random_rgb()
    pixels = rgb.shape[0] * rgb.shape[1]
    np.testing.assert_array_equal(image_to_rgb(_image_msg(rgb, 'bgr8'), pixels), rgb)
    assert _reason(image_to_rgb, _image_msg(rgb, 'bgr8'), pixels - 1) == 'too_large'


def test_huge_claimed_size_is_rejected_before_allocation() -> None:
    msg = SimpleNamespace(height=100_000, width=100_000, encoding='bgr8', is_bigendian=0)
    msg.step, msg.data = 300_000, bytes(10)
    tracemalloc.start()
    try:
        with pytest.raises(ImageRejected) as excinfo:
            image_to_rgb(msg, BUDGET)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert excinfo.value.reason == 'too_large'
    assert '100000x100000' in str(excinfo.value)
    assert peak < 1_000_000


def test_huge_claimed_size_is_rejected_without_reading_data() -> None:
    class HugeImage:
        height, width, encoding, is_bigendian, step = 100_000, 100_000, 'rgb8', 0, 300_000

        @property
        def data(self) -> bytes:
            raise AssertionError('data was read before the size check')

    assert _reason(image_to_rgb, HugeImage(), BUDGET) == 'too_large'


def test_non_positive_budget_is_a_caller_error() -> None:
    with pytest.raises(ValueError, match='max_image_pixels') as excinfo:
        image_to_rgb(_image_msg(_random_rgb(), 'rgb8'), 0)
    assert not isinstance(excinfo.value, ImageRejected)


def test_encode_rgb_rejects_non_rgb_input() -> None:
    with pytest.raises(ValueError, match='uint8'):
        encode_rgb(np.zeros((4, 4), np.uint8), 'rgb8')
    assert _reason(encode_rgb, _random_rgb(), 'mono16') == 'unsupported_encoding'


# --- compressed images ----------------------------------------------------------------


def test_decodes_real_jpeg_photo() -> None:
    rgb = _bus_rgb()
    out = compressed_to_rgb(_compressed_msg(shared_path('data', 'images', 'bus.jpg').read_bytes()), BUDGET)
    assert out.flags.c_contiguous
    np.testing.assert_array_equal(out, rgb)


@pytest.mark.parametrize('progressive', [0, 1])
def test_decodes_jpeg_to_rgb(progressive: int) -> None:
    rgb = _smooth_rgb()
    params = (cv2.IMWRITE_JPEG_QUALITY, 95, cv2.IMWRITE_JPEG_PROGRESSIVE, progressive)
    data = _encode('.jpg', rgb[..., ::-1], *params)
    out = compressed_to_rgb(_compressed_msg(array.array('B', data)), BUDGET)
    assert out.shape == rgb.shape
    assert _mean_abs_error(out, rgb) <= 2.0


def test_decodes_png_exactly() -> None:
    rgb = _random_rgb()
    msg = _compressed_msg(_encode('.png', rgb[..., ::-1]), 'bgr8; png compressed bgr8')
    out = compressed_to_rgb(msg, BUDGET)
    assert out.flags.c_contiguous and out.flags.writeable
    np.testing.assert_array_equal(out, rgb)


def test_decodes_grey_png_to_grey_rgb() -> None:
    grey = _random_rgb()[..., 0].copy()
    out = compressed_to_rgb(_compressed_msg(_encode('.png', grey), 'png'), BUDGET)
    np.testing.assert_array_equal(out, np.repeat(grey[..., None], 3, axis=2))


def test_format_field_does_not_override_magic_bytes() -> None:
    rgb = _random_rgb()
    out = compressed_to_rgb(_compressed_msg(_encode('.png', rgb[..., ::-1]), 'jpeg'), BUDGET)
    np.testing.assert_array_equal(out, rgb)


def test_exif_orientation_is_ignored() -> None:
    rgb = _smooth_rgb()
    jpeg = _encode('.jpg', rgb[..., ::-1])
    # Big-endian TIFF with a single IFD entry: Orientation (0x0112), SHORT, 6 = rotate 90.
    exif = (
        b'Exif\x00\x00' b'MM\x00\x2a\x00\x00\x00\x08' b'\x00\x01'
        b'\x01\x12\x00\x03\x00\x00\x00\x01\x00\x06\x00\x00' b'\x00\x00\x00\x00'
    )
    rotated = jpeg[:2] + b'\xff\xe1' + (len(exif) + 2).to_bytes(2, 'big') + exif + jpeg[2:]
    assert cv2.imdecode(np.frombuffer(rotated, np.uint8), cv2.IMREAD_COLOR).shape[:2] == (64, 48)
    assert compressed_to_rgb(_compressed_msg(rotated), BUDGET).shape == rgb.shape


def test_real_sensor_msgs_compressed_image() -> None:
    sensor_msgs = pytest.importorskip('sensor_msgs.msg', reason=NO_SENSOR_MSGS)
    rgb = _random_rgb()
    msg = sensor_msgs.CompressedImage(format='png', data=_encode('.png', rgb[..., ::-1]))
    np.testing.assert_array_equal(compressed_to_rgb(msg, BUDGET), rgb)


@pytest.mark.parametrize('ext', ['.jpg', '.png'])
def test_header_size_is_checked_against_budget(ext: str) -> None:
    rgb = _smooth_rgb()
    data = _encode(ext, rgb)
    pixels = rgb.shape[0] * rgb.shape[1]
    assert compressed_to_rgb(_compressed_msg(data), pixels).shape == rgb.shape
    with pytest.raises(ImageRejected) as excinfo:
        compressed_to_rgb(_compressed_msg(data), pixels - 1)
    assert excinfo.value.reason == 'too_large'
    assert '64x48' in str(excinfo.value)


def _png_claiming(width: int, height: int) -> bytes:
    data = bytearray(_encode('.png', _smooth_rgb()))
    data[16:24] = width.to_bytes(4, 'big') + height.to_bytes(4, 'big')
    return bytes(data)


def _jpeg_claiming(width: int, height: int) -> bytes:
    data = bytearray(_encode('.jpg', _smooth_rgb()))
    sof = data.index(b'\xff\xc0')
    data[sof + 5 : sof + 9] = height.to_bytes(2, 'big') + width.to_bytes(2, 'big')
    return bytes(data)


@pytest.mark.parametrize(
    'make_bomb', [lambda: _png_claiming(100_000, 100_000), lambda: _jpeg_claiming(65_535, 65_535)],
    ids=['png', 'jpeg'],
)
def test_decompression_bomb_is_rejected_before_decoding(make_bomb: Any) -> None:
    bomb = make_bomb()
    tracemalloc.start()
    try:
        with pytest.raises(ImageRejected) as excinfo:
            compressed_to_rgb(_compressed_msg(bomb), BUDGET)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert excinfo.value.reason == 'too_large'
    assert peak < 1_000_000


def _corrupt_jpeg(kind: str) -> bytes:
    data = bytearray(_encode('.jpg', _smooth_rgb()))
    if kind == 'precision':
        data[data.index(b'\xff\xc0') + 4] = 7  # libjpeg only decodes 8/12-bit samples
    elif kind == 'huffman':
        dht = data.index(b'\xff\xc4')
        data[dht + 5 : dht + 21] = b'\xff' * 16  # code counts overflow the code space
    elif kind == 'no_frame':
        sof = data.index(b'\xff\xc0')
        del data[sof : sof + 2 + int.from_bytes(data[sof + 2 : sof + 4], 'big')]
    elif kind == 'garbage':
        data[3:] = b'\x00' + b'\x5a' * 200
    return bytes(data)


@pytest.mark.parametrize('kind', ['precision', 'huffman', 'no_frame', 'garbage'])
def test_corrupted_jpeg_is_undecodable(kind: str) -> None:
    msg = _compressed_msg(_corrupt_jpeg(kind))
    assert _reason(compressed_to_rgb, msg, BUDGET) == 'undecodable'


def test_corrupted_png_is_undecodable() -> None:
    data = bytearray(_encode('.png', _random_rgb()))
    data[data.index(b'IDAT') + 20] ^= 0xFF  # breaks the chunk CRC
    assert _reason(compressed_to_rgb, _compressed_msg(bytes(data), 'png'), BUDGET) == 'undecodable'


@pytest.mark.parametrize('ext', ['.jpg', '.png'])
@pytest.mark.parametrize('keep', [0.5, 0.98])
def test_truncated_compressed_data_is_rejected(ext: str, keep: float) -> None:
    data = _encode(ext, _random_rgb())
    msg = _compressed_msg(data[: int(len(data) * keep)])
    assert _reason(compressed_to_rgb, msg, BUDGET) == 'truncated'


@pytest.mark.parametrize('ext, length', [('.jpg', 20), ('.jpg', 100), ('.png', 20)])
def test_compressed_data_cut_inside_header_is_truncated(ext: str, length: int) -> None:
    data = _encode(ext, _smooth_rgb())[:length]
    assert _reason(compressed_to_rgb, _compressed_msg(data), BUDGET) == 'truncated'


@pytest.mark.parametrize('ext', ['.jpg', '.png'])
def test_trailing_bytes_after_the_end_marker_are_tolerated(ext: str) -> None:
    rgb = _smooth_rgb()
    data = _encode(ext, rgb[..., ::-1], cv2.IMWRITE_JPEG_QUALITY, 100) + b'\x00' * 64
    assert _mean_abs_error(compressed_to_rgb(_compressed_msg(data), BUDGET), rgb) <= 1.0


def test_rejects_unsupported_compressed_format() -> None:
    data = _encode('.bmp', _smooth_rgb())
    with pytest.raises(ImageRejected) as excinfo:
        compressed_to_rgb(_compressed_msg(data, 'bmp'), BUDGET)
    assert excinfo.value.reason == 'unsupported_format'
    assert "'bmp'" in str(excinfo.value)


def test_rejects_empty_compressed_data() -> None:
    assert _reason(compressed_to_rgb, _compressed_msg(b''), BUDGET) == 'empty'
