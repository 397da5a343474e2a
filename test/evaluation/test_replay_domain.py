"""
A replay hears only its bag, whatever else publishes on its topic in the caller's ROS domain.

The labelled clip's first frames are evaluated twice in lockstep: once on a quiet machine, once
while a probe publishes road frames of other stamps on the replayed topic in the caller's
domain (a live camera beside an evaluation on a robot). The replay runs in a domain of its own,
which its report names: its nodes receive the bag's frames only, and the scores are the same.
"""
from __future__ import annotations

import os
from pathlib import Path
import threading
from typing import Any

import numpy as np
import pytest
from sensor_msgs.msg import Image

from support.highway_clip import clip_bag, LABELS
from support.perception_nodes import image_message
from support.ros_helpers import Probe
from triton_perception.bag import DEFAULT_TOPIC
from triton_perception.bag.make import DEFAULT_EPOCH_S
from triton_perception.evaluation.evaluation import evaluate, EvaluationSettings
from triton_perception.evaluation.metrics.report_schema import ReplayReport

pytestmark = [pytest.mark.ros, pytest.mark.server, pytest.mark.slow]
FRAMES = 24  # two ego-lane labels (frames 1 and 23) and six of the cars (every 4th frame)
FRAME_NS = 40_000_000  # the clip's 25 frames/s, as bag make stamps them
NOISE_PERIOD_S = 0.05


def first_labels(directory: Path) -> tuple[Path, Path]:
    """Return copies of the clip's ego-lane and car labels that keep the first FRAMES frames."""
    culane = directory / 'culane'
    culane.mkdir()
    for path in sorted((LABELS / 'culane').iterdir()):
        if int(path.name.split('.')[0]) - DEFAULT_EPOCH_S * 10**9 < FRAMES * FRAME_NS:
            (culane / path.name).write_text(path.read_text())
    cars = directory / 'gt.txt'
    cars.write_text(''.join(line for line in (LABELS / 'gt.txt').open()
                            if int(line.split(',')[0]) <= FRAMES))
    return culane, cars


def evaluated(bag: Path, output: Path, url: str, labels: tuple[Path, Path]) -> ReplayReport:
    """Evaluate `bag` in lockstep against the ego-lane and car `labels`."""
    return evaluate(EvaluationSettings(
        bag=bag, output=output, triton_url=url, timing='lockstep', labels=labels,
        lanes_scored='ego', lane_rows_from_labels=True, sparse_tracks=True), log=print)


def test_a_replay_beside_a_publisher_on_its_topic_scores_as_a_quiet_one(
        shared: Path, triton_server: Any, tmp_path: Path, probe: Probe,
        road_rgb: np.ndarray) -> None:
    """The nodes receive the bag's frames only, and every score equals the quiet run's."""
    bag = clip_bag(shared, tmp_path, FRAMES)
    labels = first_labels(tmp_path)
    quiet = evaluated(bag, tmp_path / 'quiet', triton_server.grpc_url, labels)
    publisher = probe.publisher(Image, DEFAULT_TOPIC)
    stop, sent = threading.Event(), []

    def publish() -> None:
        while not stop.wait(NOISE_PERIOD_S):
            sent.append(len(sent))
            publisher.publish(image_message(road_rgb, 'rgb8', 'camera', 5000 + len(sent)))
    noise = threading.Thread(target=publish, daemon=True)
    noise.start()
    try:
        noisy = evaluated(bag, tmp_path / 'noisy', triton_server.grpc_url, labels)
    finally:
        stop.set()
        noise.join()
    assert len(sent) > FRAMES, 'the other publisher sent less than the bag holds'
    domain = noisy['input'].get('ros_domain_id')
    assert domain is not None and domain != int(os.environ['ROS_DOMAIN_ID']), noisy['input']
    assert {node: figures['received'] for node, figures in noisy['nodes'].items()} == \
        {node: FRAMES for node in noisy['nodes']}, noisy['nodes']
    assert noisy['accuracy'] == quiet['accuracy']
    assert noisy['tracking'] == quiet['tracking']
