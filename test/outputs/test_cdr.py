"""The CDR writers give the bytes rclpy's own serializer gives for the same message."""
from __future__ import annotations

import numpy as np
import pytest
from rclpy.serialization import deserialize_message, serialize_message
from sensor_msgs.msg import Image, PointCloud2
from std_msgs.msg import Header
from vision_msgs.msg import Detection2DArray

from triton_perception.outputs.cdr import (CdrWriter, detection_array_cdr, image_cdr,
                                           point_cloud_cdr)
from triton_perception.outputs.result_messages import (detection_array_message, image_message,
                                                       LANE_POINT_DTYPE, LANE_POINT_FIELDS,
                                                       lane_points, lanes_cloud_message)


class PaddingNoted(CdrWriter):
    """A CdrWriter that notes where it put padding: Fast CDR leaves those bytes unwritten."""

    written: list[tuple[bytes, list[int]]] = []

    def __init__(self) -> None:
        """Start a message and its list of padding offsets."""
        super().__init__()
        self.padding: list[int] = []

    def pad(self, count: int) -> None:
        """Note the padding's offsets, then write it."""
        self.padding += range(len(self), len(self) + count)
        super().pad(count)

    def value(self, last: bytes | memoryview = b'') -> bytes:
        """Return the bytes and keep them, with their padding, for `same_but_padding`."""
        written = super().value(last)
        PaddingNoted.written.append((written, self.padding))
        return written


def same_but_padding(written: bytes, expected: bytes) -> bool:
    """Whether the last message PaddingNoted wrote is `expected` in every byte but padding."""
    last, padding = PaddingNoted.written[-1]
    assert last == written
    if len(written) != len(expected):
        return False
    ours, theirs = bytearray(written), bytearray(expected)
    for offset in padding:
        assert ours[offset] == 0
        theirs[offset] = 0
    return ours == theirs


FRAME_IDS = ('', 'camera', 'front/optical', 'kamera_ä_深度', 'x' * 257)
SEEDS = range(40)


def header_of(rng: np.random.Generator) -> Header:
    """Return a header with a random stamp and one of FRAME_IDS (odd lengths, non-ASCII)."""
    header = Header(frame_id=FRAME_IDS[int(rng.integers(len(FRAME_IDS)))])
    header.stamp.sec = int(rng.integers(-2**31, 2**31))
    header.stamp.nanosec = int(rng.integers(0, 10**9))
    return header


def detections_of(rng: np.random.Generator) -> np.ndarray:
    """Return 0 to 40 random DETECTIONS rows (x1, y1, x2, y2, score, class_id), float32."""
    count = int(rng.choice([0, 1, 2, 7, 40]))
    corners = rng.uniform(-10.0, 4000.0, size=(count, 2)).astype(np.float32)
    sizes = rng.uniform(0.0, 500.0, size=(count, 2)).astype(np.float32)
    scores = rng.uniform(0.0, 1.0, size=(count, 1)).astype(np.float32)
    classes = rng.integers(0, 1000, size=(count, 1)).astype(np.float32)
    return np.hstack([corners, corners + sizes, scores, classes]).astype(np.float32)


@pytest.mark.parametrize('seed', SEEDS)
def test_detection_arrays_match_rclpy(seed: int) -> None:
    """Random rows, headers and track ids (some empty, some non-ASCII): the same bytes."""
    rng = np.random.default_rng(seed)
    header, rows = header_of(rng), detections_of(rng)
    track_ids = None if seed % 3 == 0 else [
        str(rng.integers(0, 10**int(rng.integers(0, 9)))) if rng.random() < 0.8 else 'spur_ü'
        for _ in range(len(rows))]
    expected = serialize_message(detection_array_message(rows, header, track_ids))
    assert same_but_padding(detection_array_cdr(rows, header, track_ids, PaddingNoted),
                            expected)


def test_a_detection_array_reads_back_as_the_ordinary_type() -> None:
    """What a subscriber deserialises is the message built the ordinary way."""
    rows = np.array([[10.5, 20, 110, 220.25, 0.9, 2], [0, 0, 5, 5, 0.5, 5]], dtype=np.float32)
    header = Header(frame_id='camera')
    message = deserialize_message(detection_array_cdr(rows, header, ['7', '']),
                                  Detection2DArray)
    assert message == detection_array_message(rows, header, ['7', ''])


@pytest.mark.parametrize('seed', SEEDS)
def test_lane_clouds_match_rclpy(seed: int) -> None:
    """Random lanes, scores and sides, none included: the same bytes."""
    rng = np.random.default_rng(seed)
    header = header_of(rng)
    count, points = int(rng.choice([0, 1, 3, 9])), int(rng.choice([1, 20, 72]))
    lanes = rng.uniform(0, 1920, size=(count, points, 2)).astype(np.float32)
    scores = rng.uniform(0, 1, size=count).astype(np.float32)
    sides = rng.integers(-2, 3, size=count).astype(np.int8)
    cloud = lane_points(lanes, scores, sides)
    written = point_cloud_cdr(header, LANE_POINT_FIELDS, LANE_POINT_DTYPE.itemsize, len(cloud),
                              cloud.tobytes(), PaddingNoted)
    assert same_but_padding(written, serialize_message(
        lanes_cloud_message(lanes, scores, sides, header)))
    assert deserialize_message(written, PointCloud2) == lanes_cloud_message(
        lanes, scores, sides, header)


@pytest.mark.parametrize('size', [(1, 1), (3, 5), (7, 13), (540, 960), (2160, 3840)])
@pytest.mark.parametrize('encoding', ['mono8', 'rgb8'])
def test_images_match_rclpy(size: tuple[int, int], encoding: str) -> None:
    """Odd and 4K sizes, one and three channels: the same bytes."""
    rng = np.random.default_rng(size[0])
    shape = size if encoding == 'mono8' else (*size, 3)
    pixels = rng.integers(0, 256, size=shape, dtype=np.uint8)
    header = header_of(rng)
    written = image_cdr(pixels, header, encoding, PaddingNoted)
    assert same_but_padding(written, serialize_message(image_message(pixels, header, encoding)))
    assert deserialize_message(written, Image).data.tobytes() == pixels.tobytes()


def test_a_strided_view_is_written_as_its_pixels() -> None:
    """A non-contiguous array (a crop) is written as the pixels it shows."""
    pixels = np.arange(60, dtype=np.uint8).reshape(6, 10)[1:5, 2:7]
    header = Header(frame_id='c')
    assert same_but_padding(image_cdr(pixels, header, 'mono8', PaddingNoted), serialize_message(
        image_message(pixels, header, 'mono8')))
