"""
Bags with a video camera: made from the shipped clip, cut between keyframes, replayed.

`bag make --video` writes CompressedVideo with a keyframe every 10 frames; a bag cut between
two keyframes evaluates from its first keyframe on (the frames before it counted as waiting for
a keyframe), and the nodes serve every decodable frame with the boxes they give the same frames
decoded and replayed as Images.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from rosbags.rosbag2 import Reader

from triton_perception.bag.bag_format import new_writer, typestore_for, VIDEO_TYPE
from triton_perception.bag.frame_export import export_frames
from triton_perception.bag.make import make_bag
from triton_perception.bag.reading import frames_before_keyframe, read_images
from triton_perception.evaluation.evaluation import (camera_input, default_camera_topic, evaluate,
                                                     EvaluationSettings)
from triton_perception.evaluation.metrics.replay_outputs import read_outputs
from triton_perception.frames import DEFAULT_GOP, WAITING_FOR_KEYFRAME
from triton_perception.system import DEFAULT_CLIP

# Two GOPs and the keyframe of a third: the decodable frames run across a keyframe. In
# lockstep a frame waiting for a keyframe is answered by the node's next /diagnostics (1 s by
# default), so the cut leaves two of them: enough to count, few to wait for.
FRAMES = 2 * DEFAULT_GOP + 1
CUT = DEFAULT_GOP - 2  # the cut bag starts 2 frames before the second GOP's keyframe
TOPIC = '/camera/image_raw/foxglove'


def cut_bag(source: Path, output: Path, first: int) -> Path:
    """Write the messages of `source` from the `first`-th on to a new bag (a cut recording)."""
    writer = new_writer(output)
    store = typestore_for([VIDEO_TYPE])
    with Reader(source) as reader:
        writer.open()
        connection = writer.add_connection(TOPIC, VIDEO_TYPE, typestore=store)
        for index, (_connection, stamp_ns, raw) in enumerate(reader.messages()):
            if index >= first:
                writer.write(connection, stamp_ns, raw)
        writer.close()
    return output


@pytest.fixture(scope='module')
def video_bag(shared: Path, tmp_path_factory: Any) -> Path:
    """Return the clip's first FRAMES frames as H.264, cut CUT frames in."""
    directory = tmp_path_factory.mktemp('video_bags')
    summary = make_bag(DEFAULT_CLIP, directory / 'made', video='h264', max_frames=FRAMES)
    assert summary.topic == TOPIC and summary.msgtype == VIDEO_TYPE
    return cut_bag(directory / 'made', directory / 'cut', CUT)


def test_a_cut_video_bag_reads_from_its_first_keyframe(video_bag: Path, tmp_path: Path) -> None:
    """The only camera is found without a topic; frames are read, exported from the keyframe."""
    assert default_camera_topic(video_bag) == TOPIC
    assert camera_input(video_bag, TOPIC) == ('/camera/image_raw', 'foxglove')
    assert frames_before_keyframe(video_bag, TOPIC) == DEFAULT_GOP - CUT
    images = list(read_images(video_bag, TOPIC))
    assert len(images) == FRAMES - DEFAULT_GOP
    assert images[0].rgb.shape == (540, 960, 3)
    summary = export_frames(video_bag, tmp_path / 'png', topic=TOPIC)
    assert summary.exported == FRAMES - DEFAULT_GOP


@pytest.mark.ros
@pytest.mark.server
@pytest.mark.slow
def test_video_bag_evaluates_like_its_decoded_frames(video_bag: Path, triton_server: Any,
                                                     tmp_path: Path) -> None:
    """
    Every decodable frame is served, the rest counted as waiting; boxes as from Images.

    The decoded frames, exported losslessly and made into an Image bag, get the same boxes.
    """
    report = evaluate(EvaluationSettings(bag=video_bag, output=tmp_path / 'video',
                                         triton_url=triton_server.grpc_url,
                                         timing='lockstep'), log=print)
    node = report['nodes']['detection_node']
    waiting = FRAMES - CUT - (FRAMES - DEFAULT_GOP)
    assert node['received'] == FRAMES - CUT, node
    assert node['published'] == FRAMES - DEFAULT_GOP, node
    assert node['reasons'] == {f'dropped: {WAITING_FOR_KEYFRAME}': waiting}, node
    # Decoded once for the process's two nodes: the camera's health sees each frame once.
    health = report.get('camera_health', {})
    assert not any('frozen' in reason or 'stamp' in reason
                   for reason in health.get('reasons', {})), health
    labels = [str(index) for index in range(80)]
    video = read_outputs(tmp_path / 'video' / 'outputs', labels).detections

    export_frames(video_bag, tmp_path / 'png', topic=TOPIC)
    make_bag(tmp_path / 'png', tmp_path / 'images', rate_hz=25.0)
    evaluate(EvaluationSettings(bag=tmp_path / 'images', output=tmp_path / 'raw',
                                triton_url=triton_server.grpc_url, timing='lockstep'), log=print)
    raw = read_outputs(tmp_path / 'raw' / 'outputs', labels).detections
    assert len(video) == len(raw) == FRAMES - DEFAULT_GOP
    pairs = zip(sorted(video.items()), sorted(raw.items()))
    for (video_stamp, boxes), (_raw_stamp, expected) in pairs:
        assert np.array_equal(boxes, expected), video_stamp
    assert sum(len(boxes) for boxes in video.values()) > 0
