"""
The CDR writers give the bytes rclpy's own serializer gives for the same message.

The same message built the other way is the bench's (bench/glue/untaken_ways), so these hold
both what the nodes publish and what `bench --glue --publish-cost` compares.
"""
from __future__ import annotations

import numpy as np
import pytest
from rclpy.serialization import deserialize_message, serialize_message
from sensor_msgs.msg import Image, PointCloud2
from std_msgs.msg import Header
from vision_msgs.msg import Detection2DArray

from support.cdr_layout import padding_offsets
from triton_perception.bench.glue.untaken_ways import (detection_array_message, image_message,
                                                       lanes_cloud_cdr)
from triton_perception.outputs.cdr import detection_array_cdr, image_cdr
from triton_perception.outputs.result_messages import lanes_cloud_message


def same_but_padding(written: bytes, expected: bytes, message_type: type) -> bool:
    """
    Whether `written` is `expected` in every byte but the alignment padding, which is zero.

    Both are walked field by field (support.cdr_layout): the padding must lie at the same
    offsets in both, and only there may they differ (Fast CDR leaves it as it found the buffer).
    """
    padding = padding_offsets(written, message_type)
    assert padding_offsets(expected, message_type) == padding
    if len(written) != len(expected):
        return False
    theirs = bytearray(expected)
    for offset in padding:
        assert written[offset] == 0
        theirs[offset] = 0
    return written == bytes(theirs)


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
    assert same_but_padding(detection_array_cdr(rows, header, track_ids), expected,
                            Detection2DArray)


def test_a_detection_array_reads_back_as_the_ordinary_type() -> None:
    """What a subscriber deserialises is the message built the ordinary way."""
    rows = np.array([[10.5, 20, 110, 220.25, 0.9, 2], [0, 0, 5, 5, 0.5, 5]], dtype=np.float32)
    header = Header(frame_id='camera')
    message = deserialize_message(detection_array_cdr(rows, header, ['7', '']),
                                  Detection2DArray)
    assert message == detection_array_message(rows, header, ['7', ''])


@pytest.mark.parametrize('seed', SEEDS)
def test_lane_clouds_match_rclpy(seed: int) -> None:
    """The bench's lanes written as CDR (the way not taken) are the message lane_node publishes."""
    rng = np.random.default_rng(seed)
    header = header_of(rng)
    count, points = int(rng.choice([0, 1, 3, 9])), int(rng.choice([1, 20, 72]))
    lanes = rng.uniform(0, 1920, size=(count, points, 2)).astype(np.float32)
    scores = rng.uniform(0, 1, size=count).astype(np.float32)
    sides = rng.integers(-2, 3, size=count).astype(np.int8)
    written = lanes_cloud_cdr(lanes, scores, sides, header)
    assert same_but_padding(written, serialize_message(
        lanes_cloud_message(lanes, scores, sides, header)), PointCloud2)
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
    written = image_cdr(pixels, header, encoding)
    assert same_but_padding(written, serialize_message(image_message(pixels, header, encoding)),
                            Image)
    assert deserialize_message(written, Image).data.tobytes() == pixels.tobytes()


def test_a_strided_view_is_written_as_its_pixels() -> None:
    """A non-contiguous array (a crop) is written as the pixels it shows."""
    pixels = np.arange(60, dtype=np.uint8).reshape(6, 10)[1:5, 2:7]
    header = Header(frame_id='c')
    assert same_but_padding(image_cdr(pixels, header, 'mono8'), serialize_message(
        image_message(pixels, header, 'mono8')), Image)


def test_padding_is_found_in_the_bytes() -> None:
    """The score (a double) after a one-digit class id and its NUL is aligned: 2 zero bytes."""
    header = Header(frame_id='cam')
    rows = np.array([[0, 0, 5, 5, 0.5, 5]], dtype=np.float32)
    written = detection_array_cdr(rows, header)
    # The class id '5' and its NUL end at 50; 52 is 48 past the encapsulation, a multiple of 8.
    assert padding_offsets(written, Detection2DArray)[:2] == [50, 51]
    assert written[50:52] == b'\0\0'
