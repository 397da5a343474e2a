"""
Unit tests for triton_perception.frames.image_conversion's raw Image path.

Every supported encoding decoded to RGB, padded rows, byte containers, and malformed messages
rejected with a reason (no ROS runtime needed). CompressedImage: test_compressed_conversion.py.
"""
from __future__ import annotations

import array
import tracemalloc
from types import SimpleNamespace
from typing import Any

import cv2
import numpy as np
import pytest

from support.sample_images import (BUDGET, bus_rgb, mean_abs_error, NO_SENSOR_MSGS, random_rgb,
                                   rejection_reason, smooth_rgb)
from triton_perception.frames.image_conversion import (encode_rgb, image_to_rgb, ImageRejected,
                                                       SUPPORTED_ENCODINGS)

PADDING = 13
EXACT = ('rgb8', 'bgr8', 'rgba8', 'bgra8')
YUV = ('yuv422', 'uyvy', 'yuv422_yuy2')
BAYER = ('bayer_rggb8', 'bayer_bggr8', 'bayer_gbrg8', 'bayer_grbg8')
# Mean absolute error per channel value after encode -> decode. Measured: smooth image
# YUV 1.16, Bayer 0.16; bus photo YUV 0.62, Bayer 7.1 (bilinear demosaicing on sharp
# edges). A wrong byte order or mosaic pattern scores 17 or more on the photo, 65 or more
# on the smooth image, so the bounds below still catch those mistakes.
LOSSY_BOUNDS = {'smooth': {'yuv': 2.0, 'bayer': 1.0}, 'bus': {'yuv': 1.5, 'bayer': 9.0}}

# Where each colour sits in a 2x2 Bayer cell, as ROS names the patterns (row, column).
BAYER_CELLS = {'bayer_rggb8': {'r': (0, 0), 'g1': (0, 1), 'g2': (1, 0), 'b': (1, 1)},
               'bayer_bggr8': {'b': (0, 0), 'g1': (0, 1), 'g2': (1, 0), 'r': (1, 1)},
               'bayer_gbrg8': {'g1': (0, 0), 'b': (0, 1), 'r': (1, 0), 'g2': (1, 1)},
               'bayer_grbg8': {'g1': (0, 0), 'r': (0, 1), 'b': (1, 0), 'g2': (1, 1)}}
CHANNEL = {'r': 0, 'g1': 1, 'g2': 1, 'b': 2}


def _independent_bytes(rgb: np.ndarray, encoding: str) -> tuple[bytes, int]:
    """
    Return the message bytes of `rgb` built without the package's encoder.

    numpy channel slicing and OpenCV, from the encodings' definitions (REP 104 / sensor_msgs
    image_encodings). YUV comes from the package's encoder, which
    test_yuv_encoder_matches_opencv_encoder checks.
    """
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
    fields = {'height': height, 'width': width, 'encoding': encoding, 'is_bigendian': 0}
    fields.update(step=step, data=data)
    fields.update(overrides)
    return SimpleNamespace(**fields)


# --- raw images -----------------------------------------------------------------------


def test_supported_encodings_are_the_documented_set() -> None:
    """The supported encodings are exactly the documented ones, as a tuple for error messages."""
    assert isinstance(SUPPORTED_ENCODINGS, tuple)
    assert set(SUPPORTED_ENCODINGS) == {*EXACT, 'mono8', *YUV, *BAYER}


@pytest.mark.parametrize('padding', [0, PADDING])
@pytest.mark.parametrize('encoding', SUPPORTED_ENCODINGS)
def test_output_is_contiguous_uint8_rgb(encoding: str, padding: int) -> None:
    """Every encoding, with or without padded rows, becomes a C-contiguous uint8 RGB array."""
    rgb = smooth_rgb()
    out = image_to_rgb(_image_msg(rgb, encoding, padding), BUDGET)
    assert out.shape == rgb.shape
    assert out.dtype == np.uint8
    assert out.flags.c_contiguous


@pytest.mark.parametrize('padding', [0, PADDING])
@pytest.mark.parametrize('encoding', EXACT)
def test_colour_encodings_round_trip_exactly(encoding: str, padding: int) -> None:
    """rgb8, bgr8, rgba8 and bgra8 decode to exactly their pixels, padded rows included."""
    rgb = random_rgb()
    np.testing.assert_array_equal(image_to_rgb(_image_msg(rgb, encoding, padding), BUDGET), rgb)


@pytest.mark.parametrize('padding', [0, PADDING])
def test_mono8_round_trips_to_grey(padding: int) -> None:
    """mono8 decodes to grey RGB: three equal channels."""
    rgb = random_rgb()
    grey = cv2.cvtColor(rgb, cv2.COLOR_RGB2GRAY)
    out = image_to_rgb(_image_msg(rgb, 'mono8', padding), BUDGET)
    np.testing.assert_array_equal(out, np.repeat(grey[..., None], 3, axis=2))


@pytest.mark.parametrize('padding', [0, PADDING])
@pytest.mark.parametrize('encoding', YUV + BAYER)
@pytest.mark.parametrize('source', ['smooth', 'bus'])
def test_lossy_encodings_round_trip_closely(source: str, encoding: str, padding: int) -> None:
    """
    YUV 4:2:2 and Bayer frames decode within their measured error bounds.

    A wrong byte order or mosaic pattern would exceed the bounds many times over.
    """
    rgb = smooth_rgb() if source == 'smooth' else bus_rgb()
    out = image_to_rgb(_image_msg(rgb, encoding, padding), BUDGET)
    bound = LOSSY_BOUNDS[source]['yuv' if encoding in YUV else 'bayer']
    assert mean_abs_error(out, rgb) <= bound


@pytest.mark.parametrize('encoding', [*EXACT, 'mono8', *BAYER])
def test_package_encoder_matches_the_encoding_definitions(encoding: str) -> None:
    """
    encode_rgb (used by the demo, bench and fuzzing) writes what the definitions say.

    Alpha aside: the package writes 255.
    """
    rgb = random_rgb()
    ours, step = encode_rgb(rgb, encoding)
    theirs, their_step = _independent_bytes(rgb, encoding)
    assert step == their_step
    ours_array, theirs_array = np.frombuffer(ours, np.uint8), np.frombuffer(theirs, np.uint8)
    if encoding in ('rgba8', 'bgra8'):
        ours_array = ours_array.reshape(-1, 4)[:, :3]
        theirs_array = theirs_array.reshape(-1, 4)[:, :3]
    np.testing.assert_array_equal(ours_array, theirs_array)


def test_yuv_encoder_matches_opencv_encoder() -> None:
    """The package's UYVY and YUY2 encoder agrees with OpenCV's to within rounding."""
    if not hasattr(cv2, 'COLOR_RGB2YUV_UYVY'):
        pytest.skip('this OpenCV has no RGB to YUV 4:2:2 conversion to compare with')
    rgb = bus_rgb()
    pairs = (('uyvy', cv2.COLOR_RGB2YUV_UYVY), ('yuv422_yuy2', cv2.COLOR_RGB2YUV_YUY2))
    for encoding, code in pairs:
        ours = np.frombuffer(encode_rgb(rgb, encoding)[0], np.uint8)
        theirs = cv2.cvtColor(rgb, code).reshape(-1)
        assert np.abs(ours.astype(np.int16) - theirs).max() <= 1  # rounding only


def test_yuv422_is_uyvy() -> None:
    """yuv422 is encoded as UYVY, as ROS defines it."""
    rgb = smooth_rgb()
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
    """Frame data in bytes, bytearray, memoryview, array.array or ndarray decodes the same."""
    rgb = random_rgb()
    msg = _image_msg(rgb, 'bgr8', PADDING)
    msg.data = make_data(msg.data)
    np.testing.assert_array_equal(image_to_rgb(msg, BUDGET), rgb)


def test_accepts_strided_numpy_data() -> None:
    """A non-contiguous numpy data array decodes correctly."""
    rgb = random_rgb()
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
    """Unpadded rgb8 decodes to a read-only view of the message's data: no copy on the hot path."""
    rgb = random_rgb()
    msg = _image_msg(rgb, 'rgb8')
    msg.data = make_data(msg.data)
    out = image_to_rgb(msg, BUDGET)
    assert np.shares_memory(out, np.frombuffer(msg.data, np.uint8))
    assert not out.flags.writeable
    np.testing.assert_array_equal(out, rgb)


def test_padded_rgb8_is_copied_once_into_a_writable_array() -> None:
    """Padded rgb8 is copied into a writeable array of its own, without the padding."""
    rgb = random_rgb()
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
    """The cvtColor call must get a strided view of msg.data, so its output is the only copy."""
    msg = _image_msg(smooth_rgb(), encoding, PADDING)
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
    """is_bigendian changes nothing for 8-bit encodings, which have no byte order."""
    rgb = random_rgb()
    out = image_to_rgb(_image_msg(rgb, 'bgra8', PADDING, is_bigendian=1), BUDGET)
    np.testing.assert_array_equal(out, rgb)


def test_bytes_beyond_step_times_height_are_ignored() -> None:
    """Data longer than step x height decodes, the excess ignored."""
    rgb = random_rgb()
    msg = _image_msg(rgb, 'bgr8')
    msg.data += b'\x00' * 100
    np.testing.assert_array_equal(image_to_rgb(msg, BUDGET), rgb)


def test_real_sensor_msgs_image() -> None:
    """
    A real sensor_msgs Image, whose data is an array.array, decodes like the duck-typed one.

    Unpadded rgb8 is still a view of its data.
    """
    sensor_msgs = pytest.importorskip('sensor_msgs.msg', reason=NO_SENSOR_MSGS)
    rgb = random_rgb()
    fields = vars(_image_msg(rgb, 'bgr8', PADDING))
    msg = sensor_msgs.Image(**fields)
    assert isinstance(msg.data, array.array)  # what rclpy hands to callbacks
    np.testing.assert_array_equal(image_to_rgb(msg, BUDGET), rgb)

    view_msg = sensor_msgs.Image(**vars(_image_msg(rgb, 'rgb8')))
    out = image_to_rgb(view_msg, BUDGET)
    assert np.shares_memory(out, np.frombuffer(view_msg.data, np.uint8))


@pytest.mark.parametrize('encoding', ['32FC1', 'mono16', 'rgb16', 'bgr16', '8UC1', 'RGB8', ''])
def test_rejects_unsupported_encoding(encoding: str) -> None:
    """
    An unsupported encoding is rejected as unsupported_encoding, naming it and the supported list.

    Encodings are case-sensitive and the empty one is not guessed.
    """
    msg = _image_msg(random_rgb(), 'rgb8')
    msg.encoding = encoding
    with pytest.raises(ImageRejected) as excinfo:
        image_to_rgb(msg, BUDGET)
    assert excinfo.value.reason == 'unsupported_encoding'
    assert f"'{encoding}'" in str(excinfo.value)
    assert ', '.join(SUPPORTED_ENCODINGS) in str(excinfo.value)


def test_image_rejected_is_a_value_error() -> None:
    """An ImageRejected is a ValueError: callers catching bad values catch it too."""
    assert issubclass(ImageRejected, ValueError)


@pytest.mark.parametrize('height, width', [(0, 64), (48, 0), (0, 0)])
def test_rejects_zero_size(height: int, width: int) -> None:
    """A frame of zero height or width is rejected as empty."""
    msg = _image_msg(random_rgb(), 'rgb8', height=height, width=width)
    assert rejection_reason(image_to_rgb, msg, BUDGET) == 'empty'


def test_rejects_empty_data() -> None:
    """A frame with no data is rejected as empty."""
    msg = _image_msg(random_rgb(), 'rgb8', data=b'')
    assert rejection_reason(image_to_rgb, msg, BUDGET) == 'empty'


@pytest.mark.parametrize('encoding', ['rgb8', 'bgra8', 'mono8', 'uyvy', 'bayer_rggb8'])
def test_rejects_step_shorter_than_a_row(encoding: str) -> None:
    """A step shorter than a row is rejected as bad_step, naming the step."""
    msg = _image_msg(smooth_rgb(), encoding)
    msg.step -= 1
    with pytest.raises(ImageRejected) as excinfo:
        image_to_rgb(msg, BUDGET)
    assert excinfo.value.reason == 'bad_step'
    assert str(msg.step) in str(excinfo.value)


@pytest.mark.parametrize('padding', [0, PADDING])
def test_rejects_truncated_data(padding: int) -> None:
    """Data one byte short of step x height is rejected as truncated, padded rows or not."""
    msg = _image_msg(random_rgb(), 'bgr8', padding)
    msg.data = msg.data[:-1]
    assert rejection_reason(image_to_rgb, msg, BUDGET) == 'truncated'


@pytest.mark.parametrize('encoding', YUV)
def test_rejects_odd_width_for_yuv422(encoding: str) -> None:
    """A YUV 4:2:2 frame of odd width is rejected as odd_width, when decoded and when encoded."""
    msg = SimpleNamespace(
        height=4, width=5, encoding=encoding, is_bigendian=0, step=10, data=bytes(40)
    )
    assert rejection_reason(image_to_rgb, msg, BUDGET) == 'odd_width'
    assert rejection_reason(encode_rgb, random_rgb(4, 5), encoding) == 'odd_width'


def test_rejects_data_that_is_not_a_buffer() -> None:
    """Data that is no buffer (a list) is rejected as bad_data rather than raising a TypeError."""
    msg = _image_msg(random_rgb(2, 2), 'mono8', data=[0, 1, 2, 3])
    assert rejection_reason(image_to_rgb, msg, BUDGET) == 'bad_data'


def test_pixel_budget_is_inclusive() -> None:
    """A frame of exactly the pixel budget decodes; a budget one pixel smaller rejects it."""
    rgb = random_rgb()
    pixels = rgb.shape[0] * rgb.shape[1]
    np.testing.assert_array_equal(image_to_rgb(_image_msg(rgb, 'bgr8'), pixels), rgb)
    assert rejection_reason(image_to_rgb, _image_msg(rgb, 'bgr8'), pixels - 1) == 'too_large'


def test_huge_claimed_size_is_rejected_before_allocation() -> None:
    """A frame claiming 100000x100000 pixels is rejected as too_large before any allocation."""
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
    """The size is checked before the data is touched: a huge claim never reads its data."""
    class HugeImage:
        height, width, encoding, is_bigendian, step = 100_000, 100_000, 'rgb8', 0, 300_000

        @property
        def data(self) -> bytes:
            raise AssertionError('data was read before the size check')

    assert rejection_reason(image_to_rgb, HugeImage(), BUDGET) == 'too_large'


def test_non_positive_budget_is_a_caller_error() -> None:
    """A pixel budget of zero is the caller's error, a ValueError but not a frame's rejection."""
    with pytest.raises(ValueError, match='max_image_pixels') as excinfo:
        image_to_rgb(_image_msg(random_rgb(), 'rgb8'), 0)
    assert not isinstance(excinfo.value, ImageRejected)


def test_encode_rgb_rejects_non_rgb_input() -> None:
    """encode_rgb refuses input that is not uint8 RGB, and an encoding it cannot write."""
    with pytest.raises(ValueError, match='uint8'):
        encode_rgb(np.zeros((4, 4), np.uint8), 'rgb8')
    assert rejection_reason(encode_rgb, random_rgb(), 'mono16') == 'unsupported_encoding'
