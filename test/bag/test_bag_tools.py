"""
Bag tools on the real clip: make -> read back, and play -> record across two DDS processes.

Bags are read back with rosbags directly (not only through triton_perception.bag.reading),
so a bug shared by writer and reader cannot hide itself.
"""
from __future__ import annotations

import json
import os
from pathlib import Path
import subprocess
import sys
import threading
from typing import Any

import cv2
import numpy as np
import pytest
from rosbags.highlevel import AnyReader
from rosbags.rosbag2 import Reader
import yaml

from support.checkout import REPO, SHARED, shared_path
from triton_perception.bag.bag_format import (BagError, COMPRESSED_IMAGE_TYPE, DEFAULT_TOPIC,
                                              IMAGE_TYPE, typestore, typestore_for)
from triton_perception.bag.make import DEFAULT_EPOCH_S, make_bag
from triton_perception.bag.reading import read_images


CLIP = SHARED / 'data' / 'videos' / 'solidWhiteRight.mp4'
ROAD_IMAGES = SHARED / 'data' / 'road' / 'bdd'
RECORDER_PROCESS = REPO / 'test' / 'support' / 'bag_recorder_process.py'

EPOCH_NS = DEFAULT_EPOCH_S * 1_000_000_000
CLIP_FRAME_NS = 40_000_000  # 25 fps
ROUND_TRIP_FRAMES = 50
PLAY_FRAMES = 10
# Upper bound for process start-up, discovery and delivery; every wait ends as soon as its
# condition holds.
ROS_TIMEOUT_S = 30.0


def clip_rgb(count: int) -> list[np.ndarray]:
    """Return the first `count` frames of the highway clip as RGB."""
    capture = cv2.VideoCapture(str(shared_path('data', 'videos', 'solidWhiteRight.mp4')))
    frames = []
    try:
        while len(frames) < count:
            ok, bgr = capture.read()
            assert ok, f'{CLIP} ended after {len(frames)} frames'
            frames.append(cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB))
    finally:
        capture.release()
    return frames


@pytest.fixture(scope='module')
def clip_frames() -> list[np.ndarray]:
    """Return the frames the round-trip bags are made from, read once per module."""
    return clip_rgb(ROUND_TRIP_FRAMES)


def installed_hash(type_name: str) -> str:
    """Return the RIHS01 hash rclpy's generated interface declares (share/<pkg>/msg/<Type>.json)."""
    package, kind, name = type_name.split('/')
    description = Path(sys.prefix) / 'share' / package / kind / f'{name}.json'
    if not description.is_file():
        pytest.fail(f'{description} not installed: run make setup', pytrace=False)
    return json.loads(description.read_text())['type_hashes'][0]['hash_string']


def read_messages(bag: Path) -> list[tuple[Any, int, Any]]:
    """Read (connection, bag time, deserialised message) for every record, via rosbags only."""
    with AnyReader([bag]) as reader:
        return [(connection, stamp, reader.deserialize(raw, connection.msgtype))
                for connection, stamp, raw in reader.messages()]


def raw_records(bag: Path) -> list[bytes]:
    """Return every record's serialised bytes, via rosbags only."""
    with Reader(bag) as reader:
        return [bytes(raw) for _, _, raw in reader.messages()]


def header_ns(message: Any) -> int:
    """Return a message's header stamp in nanoseconds."""
    return message.header.stamp.sec * 1_000_000_000 + message.header.stamp.nanosec


@pytest.mark.parametrize('type_name', [IMAGE_TYPE, COMPRESSED_IMAGE_TYPE])
def test_typestore_hashes_match_rclpy_interfaces(type_name: str) -> None:
    """The bag writer's type hashes equal rclpy's: ros2 bag and the nodes accept our bags."""
    assert typestore().hash_rihs01(type_name) == installed_hash(type_name)


def test_types_outside_the_typestore_come_from_installed_interfaces() -> None:
    """A recorder of pipeline outputs needs vision_msgs, which rosbags does not ship."""
    detections = 'vision_msgs/msg/Detection2DArray'
    expected = installed_hash(detections)  # skips without the dev vision_msgs build
    assert typestore_for([IMAGE_TYPE, detections]).hash_rihs01(detections) == expected
    with pytest.raises(BagError, match='no definition of no_such_msgs/msg/Thing'):
        typestore_for(['no_such_msgs/msg/Thing'])


@pytest.mark.parametrize('storage', ['mcap', 'sqlite3'])
def test_video_round_trip_is_lossless(tmp_path: Path, clip_frames: list[np.ndarray],
                                      storage: str) -> None:
    """
    A video made into a bag reads back pixel for pixel, timed at the clip's rate, in either storage.

    The metadata counts every message and carries the installed type's hash.
    """
    bag = tmp_path / 'bag'
    lines: list[str] = []
    summary = make_bag(CLIP, bag, storage=storage, max_frames=ROUND_TRIP_FRAMES,
                       frame_id='front_camera', progress=lines.append)

    assert summary.message_count == ROUND_TRIP_FRAMES
    assert (summary.width, summary.height, summary.rate_hz) == (960, 540, 25.0)
    assert lines[0] == f'50/{ROUND_TRIP_FRAMES} frames'
    records = read_messages(bag)
    assert len(records) == ROUND_TRIP_FRAMES
    for index, (connection, stamp, message) in enumerate(records):
        assert connection.topic == DEFAULT_TOPIC
        assert connection.msgtype == IMAGE_TYPE
        assert stamp == EPOCH_NS + index * CLIP_FRAME_NS
        assert header_ns(message) == stamp
        assert message.header.frame_id == 'front_camera'
        assert (message.encoding, message.width, message.height, message.step) == \
            ('rgb8', 960, 540, 960 * 3)
        assert np.array_equal(message.data.reshape(540, 960, 3), clip_frames[index]), index

    metadata = yaml.safe_load((bag / 'metadata.yaml').read_text())['rosbag2_bagfile_information']
    assert metadata['storage_identifier'] == storage
    assert metadata['message_count'] == ROUND_TRIP_FRAMES
    (topic,) = metadata['topics_with_message_count']
    assert topic['message_count'] == ROUND_TRIP_FRAMES
    assert topic['topic_metadata']['type_description_hash'] == installed_hash(IMAGE_TYPE)


def test_read_images_matches_the_clip(tmp_path: Path, clip_frames: list[np.ndarray]) -> None:
    """read_images gives the clip's frames with bag time and header stamp both at 25 fps."""
    bag = tmp_path / 'bag'
    make_bag(CLIP, bag, max_frames=5)
    images = list(read_images(bag))
    assert [image.stamp_ns for image in images] == \
        [EPOCH_NS + i * CLIP_FRAME_NS for i in range(5)]
    assert [image.header_stamp_ns for image in images] == [image.stamp_ns for image in images]
    for image, expected in zip(images, clip_frames):
        assert np.array_equal(image.rgb, expected)


def test_bgr8_keeps_opencv_byte_order(tmp_path: Path, clip_frames: list[np.ndarray]) -> None:
    """A bgr8 bag holds OpenCV's byte order, and read_images still returns RGB."""
    bag = tmp_path / 'bag'
    make_bag(CLIP, bag, max_frames=3, encoding='bgr8', storage='sqlite3')
    records = read_messages(bag)
    assert [m.encoding for _, _, m in records] == ['bgr8'] * 3
    for (_, _, message), expected in zip(records, clip_frames):
        assert np.array_equal(message.data.reshape(540, 960, 3), expected[..., ::-1])
    for image, expected in zip(read_images(bag), clip_frames):
        assert np.array_equal(image.rgb, expected)


def test_compressed_round_trip_within_jpeg_tolerance(tmp_path: Path,
                                                     clip_frames: list[np.ndarray]) -> None:
    """A compressed bag holds JPEG CompressedImages that decode to the clip within JPEG's error."""
    bag = tmp_path / 'bag'
    summary = make_bag(CLIP, bag, compressed=True, max_frames=ROUND_TRIP_FRAMES)

    assert summary.msgtype == COMPRESSED_IMAGE_TYPE
    records = read_messages(bag)
    assert len(records) == ROUND_TRIP_FRAMES
    assert {c.msgtype for c, _, _ in records} == {COMPRESSED_IMAGE_TYPE}
    assert {m.format for _, _, m in records} == {'jpeg'}
    assert [header_ns(m) for _, _, m in records] == \
        [EPOCH_NS + i * CLIP_FRAME_NS for i in range(ROUND_TRIP_FRAMES)]
    for image, expected in zip(read_images(bag), clip_frames):
        assert image.rgb.shape == expected.shape
        assert np.abs(image.rgb.astype(np.int16) - expected).mean() < 3.0
    metadata = yaml.safe_load((bag / 'metadata.yaml').read_text())['rosbag2_bagfile_information']
    assert metadata['topics_with_message_count'][0]['topic_metadata']['type_description_hash'] \
        == installed_hash(COMPRESSED_IMAGE_TYPE)


def test_image_directory_is_sorted_and_timed_at_10_hz(tmp_path: Path) -> None:
    """A directory of images becomes a bag in name order, 100 ms apart from the start time given."""
    shared_path('data', 'road', 'bdd')
    paths = sorted(ROAD_IMAGES.glob('*.jpg'))
    bag = tmp_path / 'bag'
    summary = make_bag(ROAD_IMAGES, bag, start_time_s=12.5)

    assert summary.message_count == len(paths)
    images = list(read_images(bag))
    assert [image.stamp_ns for image in images] == \
        [12_500_000_000 + i * 100_000_000 for i in range(len(paths))]
    for image, path in zip(images, paths):
        assert np.array_equal(image.rgb, cv2.cvtColor(cv2.imread(str(path)), cv2.COLOR_BGR2RGB))


@pytest.mark.parametrize('kind, message', [
    ('missing', 'does not exist'),
    ('not_a_video', 'cannot open'),
    ('empty_directory', 'holds no images'),
    ('corrupt_second_image', 'cannot decode'),  # fails mid-bag: the partial bag is removed
])
def test_unusable_source_is_a_clear_error(tmp_path: Path, kind: str, message: str) -> None:
    """A missing, unreadable or empty source is a BagError saying what is wrong, leaving no bag."""
    source = tmp_path / kind
    if kind == 'not_a_video':
        source.write_text('no video here')
    elif kind != 'missing':
        source.mkdir()
    if kind == 'corrupt_second_image':
        cv2.imwrite(str(source / 'a.png'), np.zeros((4, 6, 3), np.uint8))
        (source / 'b.jpg').write_bytes(b'not a jpeg')
    with pytest.raises(BagError, match=message):
        make_bag(source, tmp_path / 'bag')
    assert not (tmp_path / 'bag').exists()


def test_existing_output_is_never_overwritten(tmp_path: Path) -> None:
    """make_bag refuses an output that exists already rather than replace someone's bag."""
    (tmp_path / 'bag').mkdir()
    with pytest.raises(BagError, match='exists already'):
        make_bag(CLIP, tmp_path / 'bag', max_frames=1)


# --- ROS: play_bag and BagRecorder over real Fast DDS ---------------------------------------

@pytest.fixture(scope='module')
def small_bag(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Return a bag of the clip's first PLAY_FRAMES frames, made once per module."""
    shared_path('data', 'videos', 'solidWhiteRight.mp4')
    bag = tmp_path_factory.mktemp('small') / 'bag'
    make_bag(CLIP, bag, max_frames=PLAY_FRAMES)
    return bag


@pytest.mark.ros
def test_play_into_recorder_in_another_process(ros_node: Any, small_bag: Path,
                                               tmp_path: Path) -> None:
    """Frames cross two DDS participants byte for byte, at the scaled timing."""
    from triton_perception.bag.play import play_bag

    recorded = tmp_path / 'recorded'
    recorder = subprocess.Popen(
        [sys.executable, str(RECORDER_PROCESS), str(recorded), DEFAULT_TOPIC, IMAGE_TYPE,
         str(PLAY_FRAMES), str(ROS_TIMEOUT_S)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=dict(os.environ))
    result: dict[str, Any] = {}

    def play() -> None:
        try:
            result['summary'] = play_bag(small_bag, ros_node, rate=2.0, wait_for_subscribers=1,
                                         wait_timeout_s=ROS_TIMEOUT_S)
        except BaseException as error:  # handed to the test thread below
            result['error'] = error

    player = threading.Thread(target=play, name='play_bag')
    try:
        player.start()
        player.join(2 * ROS_TIMEOUT_S)
        out, err = recorder.communicate(timeout=2 * ROS_TIMEOUT_S)
    finally:
        if recorder.poll() is None:
            recorder.kill()
            recorder.wait()
    assert not player.is_alive(), 'play_bag did not finish'
    assert 'error' not in result, f"play_bag failed: {result.get('error')!r}\n{err}"
    assert recorder.returncode == 0, f'recorder process failed:\n{out}\n{err}'

    summary = result['summary']
    assert summary.published == PLAY_FRAMES and summary.passes == 1 and not summary.stopped
    # 10 frames 40 ms apart at rate 2.0: the last one is due 9 x 20 ms after the first.
    assert summary.wall_s >= 0.18
    # Lateness is machine load (`bag play` prints it), so its size is not asserted; but no
    # message can be later than the playback lasted, in milliseconds as the summary says.
    assert summary.lateness_mean_ms <= summary.lateness_max_ms <= 1e3 * summary.wall_s
    report = json.loads(out.strip().splitlines()[-1])
    assert report['counts'] == {DEFAULT_TOPIC: PLAY_FRAMES}
    assert report['publisher_type_hashes'] == [installed_hash(IMAGE_TYPE)]
    assert raw_records(recorded) == raw_records(small_bag)
    stamps = [image.stamp_ns for image in read_images(recorded)]
    assert stamps == sorted(stamps)
    assert [image.header_stamp_ns for image in read_images(recorded)] == \
        [EPOCH_NS + i * CLIP_FRAME_NS for i in range(PLAY_FRAMES)]


@pytest.mark.ros
def test_start_offset_skips_the_beginning(ros_node: Any, small_bag: Path) -> None:
    """A start offset of 0.2 s skips the five frames stamped before it."""
    from triton_perception.bag.play import play_bag

    summary = play_bag(small_bag, ros_node, rate=4.0, start_offset_s=0.2)
    assert summary.published == PLAY_FRAMES - 5  # frames at 0.20 .. 0.36 s


@pytest.mark.ros
def test_loop_runs_until_stopped(ros_node: Any, small_bag: Path) -> None:
    """A looping player plays the bag again and again, every frame each pass, until stopped."""
    from triton_perception.bag.play import play_bag

    stop = threading.Event()
    stopper = threading.Timer(0.5, stop.set)  # a pass lasts 36 ms at rate 10
    stopper.start()
    try:
        summary = play_bag(small_bag, ros_node, rate=10.0, loop=True, stop_event=stop,
                           qos_reliability='best_effort')
    finally:
        stopper.cancel()
    assert summary.stopped
    assert summary.passes >= 2
    assert summary.published >= summary.passes * PLAY_FRAMES


@pytest.mark.ros
def test_play_errors_are_clear(ros_node: Any, small_bag: Path, tmp_path: Path) -> None:
    """An unknown topic, a missing bag or no subscriber in time is a BagError saying which."""
    from triton_perception.bag.play import play_bag

    with pytest.raises(BagError, match='topics not in the bag: /nope'):
        play_bag(small_bag, ros_node, topics=['/nope'])
    with pytest.raises(BagError, match='cannot open bag'):
        play_bag(tmp_path / 'missing', ros_node)
    with pytest.raises(BagError, match='fewer than 1 subscriber'):
        play_bag(small_bag, ros_node, topics=[DEFAULT_TOPIC], wait_for_subscribers=1,
                 wait_timeout_s=0.2)


@pytest.mark.ros
def test_lockstep_waits_for_each_answer_and_names_a_node_that_never_answers(
        ros_node: Any, small_bag: Path) -> None:
    """
    In lockstep each frame goes out once the previous one is answered, whatever the rate.

    A node that stops answering (at frame 3 here) ends the replay within the timeout, with the
    node and the frame's stamp named.
    """
    import time

    from triton_perception.bag.play import Lockstep, play_bag

    with AnyReader([small_bag]) as reader:
        stamps = [reader.deserialize(raw, connection.msgtype).header.stamp
                  for connection, _time, raw in reader.messages()]
    asked: list[tuple[int, int]] = []

    def unanswered(frame: int, stamp_ns: int) -> list[str]:
        asked.append((frame, stamp_ns))
        return ['lane_node'] if frame >= 3 else []

    began = time.monotonic()
    with pytest.raises(BagError) as stalled:
        play_bag(small_bag, ros_node, rate=0.01, topics=[DEFAULT_TOPIC],
                 lockstep=Lockstep(DEFAULT_TOPIC, unanswered, timeout_s=0.5))
    assert time.monotonic() - began < 10.0, 'rate 0.01 would take minutes: lockstep ignores it'
    third = stamps[2]
    assert str(stalled.value).startswith(
        f'lane_node did not answer frame 3 of {DEFAULT_TOPIC} (stamp '
        f'{third.sec}.{third.nanosec:09d}) within 0.5 s')
    assert sorted({frame for frame, _stamp in asked}) == [1, 2, 3]
    assert dict(asked) == {
        index + 1: stamps[index].sec * 1_000_000_000 + stamps[index].nanosec for index in range(3)}
