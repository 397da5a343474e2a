"""
Convert sensor_msgs Image / CompressedImage payloads into RGB numpy arrays.

The module has no ROS imports so the conversion rules can be unit-tested and reused by
offline bag tools; messages are duck-typed (anything with the message's attributes works).
Every incoming image is validated against its own header and a caller-given pixel budget
before anything proportional to the claimed size is allocated, so a malformed or hostile
message is rejected with an ``ImageRejected`` instead of exhausting memory on the Jetson.
"""

from __future__ import annotations

import re
from typing import cast, NamedTuple, Protocol, TYPE_CHECKING

import cv2
import numpy as np
from numpy.typing import NDArray

from triton_perception.frames.accounting import FrameRejected

if TYPE_CHECKING:
    from triton_perception.frames.serialized_images import Buffer


class ImageLike(Protocol):
    """The sensor_msgs/Image fields read here (``is_bigendian`` is ignored: all are 8-bit)."""

    height: int
    width: int
    encoding: str
    step: int

    @property
    def data(self) -> object:
        """Return the pixels: any byte buffer (see _byte_view); anything else is rejected."""


class CompressedImageLike(Protocol):
    """The sensor_msgs/CompressedImage fields read here."""

    format: str  # noqa: A003 (sensor_msgs/CompressedImage's field name)

    @property
    def data(self) -> object:
        """Return the encoded image: a byte buffer (see _byte_view); anything else is rejected."""


class ImageRejected(FrameRejected):
    """
    An incoming image cannot be converted.

    ``reason`` is a stable code for counters and logs: unsupported_encoding,
    unsupported_format, empty, too_large, bad_step, odd_width, truncated, bad_data,
    undecodable. The message names the offending values for humans.
    """


class _Encoding(NamedTuple):
    bytes_per_pixel: int
    to_rgb: int | None  # cv2 colour conversion code; None when the bytes already are RGB


# OpenCV names Bayer codes after the 2x2 block starting at pixel (1, 1), so ROS 'rggb'
# is OpenCV 'BG' (the same mapping cv_bridge uses); these names exist in every OpenCV.
_ENCODINGS: dict[str, _Encoding] = {
    'rgb8': _Encoding(3, None),
    'bgr8': _Encoding(3, cv2.COLOR_BGR2RGB),
    'rgba8': _Encoding(4, cv2.COLOR_RGBA2RGB),
    'bgra8': _Encoding(4, cv2.COLOR_BGRA2RGB),
    'mono8': _Encoding(1, cv2.COLOR_GRAY2RGB),
    'yuv422': _Encoding(2, cv2.COLOR_YUV2RGB_UYVY),  # ROS 'yuv422' is UYVY byte order
    'uyvy': _Encoding(2, cv2.COLOR_YUV2RGB_UYVY),
    'yuv422_yuy2': _Encoding(2, cv2.COLOR_YUV2RGB_YUY2),
    'bayer_rggb8': _Encoding(1, cv2.COLOR_BayerBG2RGB),
    'bayer_bggr8': _Encoding(1, cv2.COLOR_BayerRG2RGB),
    'bayer_gbrg8': _Encoding(1, cv2.COLOR_BayerGR2RGB),
    'bayer_grbg8': _Encoding(1, cv2.COLOR_BayerGB2RGB),
}

SUPPORTED_ENCODINGS: tuple[str, ...] = tuple(_ENCODINGS)

_FROM_RGB: dict[str, int] = {
    'bgr8': cv2.COLOR_RGB2BGR,
    'rgba8': cv2.COLOR_RGB2RGBA,
    'bgra8': cv2.COLOR_RGB2BGRA,
    'mono8': cv2.COLOR_RGB2GRAY,
}

_PNG_SIGNATURE = b'\x89PNG\r\n\x1a\n'
_PNG_END = re.compile(rb'IEND\xaeB`\x82')  # IEND chunk type + its fixed CRC
_JPEG_SOI = b'\xff\xd8\xff'
_JPEG_EOI = re.compile(rb'\xff\xd9')
# Start-of-frame markers carry the image size; C4 (DHT), C8 (JPG) and CC (DAC) do not.
_JPEG_SOF = frozenset(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}
_JPEG_SOS = 0xDA
_DECODE_FLAGS = cv2.IMREAD_COLOR | cv2.IMREAD_IGNORE_ORIENTATION


def image_to_rgb(msg: ImageLike, max_image_pixels: int) -> NDArray[np.uint8]:
    """
    Return a C-contiguous uint8 [H, W, 3] RGB array for a sensor_msgs/Image.

    Unpadded rgb8 is returned as a read-only view sharing memory with ``msg.data`` (no
    copy); copy it before mutating. Every other case costs exactly one copy: the padded
    rows are read in place as a strided view by cv2.cvtColor (or copied once for rgb8).
    """
    pixels, encoding, unpadded = _checked_pixels(msg, max_image_pixels)
    if encoding.to_rgb is not None:
        # OpenCV's stubs return any integer or float array; uint8 pixels stay uint8.
        return cast(NDArray[np.uint8], cv2.cvtColor(pixels, encoding.to_rgb))
    if unpadded:
        pixels.flags.writeable = False  # protect the message buffer the view aliases
        return pixels
    return np.ascontiguousarray(pixels)


def check_image(msg: ImageLike, max_image_pixels: int) -> None:
    """Every check of image_to_rgb without converting: cheap enough for a ROS callback."""
    _checked_pixels(msg, max_image_pixels)


def _checked_pixels(msg: ImageLike,
                    max_image_pixels: int) -> tuple[NDArray[np.uint8], _Encoding, bool]:
    """Return the pixel bytes as an [H, W(, C)] view of the message, after validating its header."""
    _check_budget(max_image_pixels)
    encoding = _lookup(msg.encoding)
    height, width, step = int(msg.height), int(msg.width), int(msg.step)
    if height <= 0 or width <= 0:
        raise ImageRejected('empty', f'image has no pixels: {width}x{height}')
    _check_pixels(width, height, max_image_pixels)
    _check_even_width(msg.encoding, width)
    row_bytes = width * encoding.bytes_per_pixel
    if step < row_bytes:
        raise ImageRejected(
            'bad_step',
            f'step {step} is less than width {width} x {encoding.bytes_per_pixel} bytes '
            f"per pixel = {row_bytes} for encoding '{msg.encoding}'",
        )
    buf = _byte_view(msg.data)
    if buf.size == 0:
        raise ImageRejected('empty', f'data is empty for a {width}x{height} image')
    if buf.size < step * height:
        raise ImageRejected(
            'truncated',
            f'data has {buf.size} bytes but step {step} x height {height} needs {step * height}',
        )
    pixels = buf[: step * height].reshape(height, step)[:, :row_bytes]
    if encoding.bytes_per_pixel > 1:
        pixels = pixels.reshape(height, width, encoding.bytes_per_pixel)
    return pixels, encoding, step == row_bytes


def compressed_to_rgb(msg: CompressedImageLike, max_image_pixels: int) -> NDArray[np.uint8]:
    """
    Decode a JPEG or PNG sensor_msgs/CompressedImage to a C-contiguous uint8 RGB array.

    The container is recognised by its magic bytes, not by ``msg.format`` (publishers fill
    that in inconsistently); the size in its header is checked against
    ``max_image_pixels`` before decoding, so a decompression bomb never allocates.
    EXIF orientation is ignored, as image_transport does, so the output keeps the
    header's width and height. The payload is assumed to hold BGR/grey, as
    compressed_image_transport writes it.
    """
    buf, kind, width, height = _checked_container(msg, max_image_pixels)
    bgr = cv2.imdecode(buf, _DECODE_FLAGS)
    if bgr is None:
        raise ImageRejected(
            'undecodable', f'OpenCV could not decode {buf.size} bytes of {width}x{height} {kind}'
        )
    # OpenCV's stubs return any integer or float array; decoded 8-bit images are uint8.
    return cast(NDArray[np.uint8], cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB, dst=bgr))


def check_compressed(msg: CompressedImageLike, max_image_pixels: int) -> None:
    """Run the container and size checks of compressed_to_rgb, without decoding."""
    _checked_container(msg, max_image_pixels)


def _checked_container(msg: CompressedImageLike,
                       max_image_pixels: int) -> tuple[NDArray[np.uint8], str, int, int]:
    _check_budget(max_image_pixels)
    buf = _byte_view(msg.data)
    if buf.size == 0:
        raise ImageRejected('empty', f'compressed data is empty (format {msg.format!r})')
    view = memoryview(buf.data)
    if bytes(view[:8]) == _PNG_SIGNATURE:
        kind = 'PNG'
        width, height = _png_size(view)
    elif bytes(view[:3]) == _JPEG_SOI:
        kind = 'JPEG'
        width, height = _jpeg_size(view)
    else:
        raise ImageRejected(
            'unsupported_format',
            f'data starting with {bytes(view[:8]).hex()} is neither JPEG nor PNG '
            f'(format {msg.format!r})',
        )
    _check_pixels(width, height, max_image_pixels)
    return buf, kind, width, height


def encode_rgb(rgb: NDArray[np.uint8], encoding: str) -> tuple[bytes, int]:
    """
    Return (data, step) of an unpadded sensor_msgs/Image holding ``rgb`` in ``encoding``.

    Lets tests and bag tools produce every encoding the decoder accepts. Bayer output
    samples the mosaic from the RGB image; YUV 4:2:2 uses BT.601 limited range (what
    OpenCV decodes) with each chroma pair averaged, computed in numpy so that it does not
    depend on the OpenCV version.
    """
    if rgb.dtype != np.uint8 or rgb.ndim != 3 or rgb.shape[2] != 3:
        raise ValueError(f'expected a uint8 [H, W, 3] array, got {rgb.dtype} {rgb.shape}')
    bytes_per_pixel = _lookup(encoding).bytes_per_pixel
    _check_even_width(encoding, rgb.shape[1])
    if encoding in _FROM_RGB:
        pixels = cv2.cvtColor(rgb, _FROM_RGB[encoding])
    elif encoding.startswith('bayer_'):
        pixels = _mosaic(rgb, encoding[len('bayer_'): -1])
    elif bytes_per_pixel == 2:
        pixels = _rgb_to_yuv422(rgb, luma_first=encoding == 'yuv422_yuy2')
    else:
        pixels = rgb
    return pixels.tobytes(), rgb.shape[1] * bytes_per_pixel


def _check_budget(max_image_pixels: int) -> None:
    if max_image_pixels < 1:
        raise ValueError(f'max_image_pixels must be positive, got {max_image_pixels}')


def _lookup(encoding: str) -> _Encoding:
    try:
        return _ENCODINGS[encoding]
    except KeyError:
        raise ImageRejected(
            'unsupported_encoding',
            f"encoding '{encoding}' is not supported; supported: {', '.join(SUPPORTED_ENCODINGS)}",
        ) from None


def _check_pixels(width: int, height: int, max_image_pixels: int) -> None:
    if width * height > max_image_pixels:
        raise ImageRejected(
            'too_large',
            f'{width}x{height} = {width * height} pixels exceeds max_image_pixels '
            f'{max_image_pixels}',
        )


def _check_even_width(encoding: str, width: int) -> None:
    """YUV 4:2:2 shares one chroma pair between two pixels, so rows hold whole pairs."""
    if _ENCODINGS[encoding].bytes_per_pixel == 2 and width % 2:
        raise ImageRejected(
            'odd_width', f"encoding '{encoding}' needs an even width, got {width}"
        )


def _byte_view(data: object) -> NDArray[np.uint8]:
    """
    View message data as flat uint8 without copying.

    rclpy gives array.array('B'); bytes, bytearray, memoryview and numpy arrays work too.
    """
    if isinstance(data, np.ndarray):
        data = np.ascontiguousarray(data)  # no-op unless a caller passed a strided array
    try:  # np.frombuffer checks the buffer protocol itself: TypeError for anything else
        return np.frombuffer(cast('Buffer', data), dtype=np.uint8)
    except TypeError:
        raise ImageRejected(
            'bad_data', f'data of type {type(data).__name__} is not a byte buffer'
        ) from None


def _png_size(view: memoryview) -> tuple[int, int]:
    """Read width and height from the IHDR chunk, which PNG requires to come first."""
    if len(view) < 24:
        raise ImageRejected('truncated', f'PNG of {len(view)} bytes ends inside its header')
    if bytes(view[12:16]) != b'IHDR':
        raise ImageRejected('undecodable', 'PNG does not start with an IHDR chunk')
    offset = 8
    while True:  # every chunk must fit in the data: a huge claimed IDAT makes OpenCV allocate
        if offset + 12 > len(view):
            raise ImageRejected('truncated', f'PNG of {len(view)} bytes has no IEND chunk')
        length = int.from_bytes(view[offset:offset + 4], 'big')
        kind = bytes(view[offset + 4:offset + 8])
        if offset + 12 + length > len(view):
            raise ImageRejected('truncated', f'PNG chunk {kind!r} claims {length} bytes; only '
                                f'{len(view) - offset - 12} remain')
        if kind == b'IEND':
            break
        offset += 12 + length
    return int.from_bytes(view[16:20], 'big'), int.from_bytes(view[20:24], 'big')


def _jpeg_size(view: memoryview) -> tuple[int, int]:
    """
    Walk the marker segments up to the first scan and read the frame size from SOF.

    Also requires an end-of-image marker after the scan: byte stuffing keeps FF D9 out of
    entropy-coded data, so its absence means the stream was cut short (older OpenCV
    would otherwise return a partly grey image).
    """
    size: tuple[int, int] | None = None
    pos = 2
    while pos + 4 <= len(view):
        if view[pos] != 0xFF:
            raise ImageRejected('undecodable', f'JPEG has no marker at offset {pos}')
        marker = view[pos + 1]
        if marker == 0xFF:  # fill byte before a marker
            pos += 1
            continue
        if marker == 0x01 or 0xD0 <= marker <= 0xD7:  # TEM and RSTn carry no length
            pos += 2
            continue
        if marker < 0xC0 or marker in (0xD8, 0xD9):
            raise ImageRejected(
                'undecodable', f'JPEG has marker FF{marker:02X} at offset {pos} before its scan'
            )
        segment_end = pos + 2 + int.from_bytes(view[pos + 2: pos + 4], 'big')
        if marker in _JPEG_SOF:
            if size is not None:
                raise ImageRejected('undecodable', 'JPEG has more than one frame header')
            if pos + 9 > len(view):
                break
            size = (int.from_bytes(view[pos + 7: pos + 9], 'big'),
                    int.from_bytes(view[pos + 5: pos + 7], 'big'))
        elif marker == _JPEG_SOS:
            if size is None:
                raise ImageRejected('undecodable', 'JPEG scan starts before a frame header')
            if _JPEG_EOI.search(view, segment_end) is None:
                raise ImageRejected(
                    'truncated', f'JPEG of {len(view)} bytes has no end-of-image marker'
                )
            return size
        pos = segment_end
    raise ImageRejected('truncated', f'JPEG of {len(view)} bytes ends before its first scan')


def _mosaic(rgb: NDArray[np.uint8], pattern: str) -> NDArray[np.uint8]:
    """Sample a Bayer mosaic; ``pattern`` lists the 2x2 tile's colours row by row."""
    mosaic = np.empty(rgb.shape[:2], dtype=np.uint8)
    for index, colour in enumerate(pattern):
        row, col = divmod(index, 2)
        mosaic[row::2, col::2] = rgb[row::2, col::2, 'rgb'.index(colour)]
    return mosaic


def _rgb_to_yuv422(rgb: NDArray[np.uint8], luma_first: bool) -> NDArray[np.uint8]:
    """Pack BT.601 limited-range YUV 4:2:2 as [H, W, 2]: UYVY, or YUYV if ``luma_first``."""
    height, width = rgb.shape[:2]
    values = rgb.astype(np.float32)
    luma = 16.0 + values @ np.array([65.481, 128.553, 24.966], np.float32) / 255.0
    pairs = values.reshape(height, width // 2, 2, 3).mean(axis=2)
    u = 128.0 + pairs @ np.array([-37.797, -74.203, 112.0], np.float32) / 255.0
    v = 128.0 + pairs @ np.array([112.0, -93.786, -18.214], np.float32) / 255.0
    # Limited range keeps every value inside 16..240, so rounding cannot wrap uint8.
    packed = np.empty((height, width, 2), dtype=np.uint8)
    luma_index = 0 if luma_first else 1
    packed[..., luma_index] = np.rint(luma)
    packed[:, 0::2, 1 - luma_index] = np.rint(u)
    packed[:, 1::2, 1 - luma_index] = np.rint(v)
    return packed
