"""
A camera's detection and lane nodes served by one request per frame (serving.joined_worker).

Real tritonserver, real weights: the joined request must give each node exactly what its own
request gives, with the camera's health statistics beside; one node's rejected frame must
leave the other served; and without the joined ensemble the nodes are served one request each.
"""
from __future__ import annotations

import threading
import time
from typing import Any

import numpy as np
import pytest

from sample_images import bus_rgb
from test_shared_frames import frames_of, QuietLog, run_models
from triton_perception.frames import Frame, FrameRejected
from triton_perception.frames.accounting import Fate, FrameAccounting
from triton_perception.graphs import LANE_RUNS_OUTPUTS
from triton_perception.health import figures_from_statistics, frame_figures
from triton_perception.serving.requests.joined_worker import JoinedWorker
from triton_perception.serving.requests.member_worker import MemberWorker
from triton_perception.serving.requests.request_inputs import Tensors
from triton_perception.serving.requests.shared_frames import SharedFrames
from triton_perception.serving.requests.triton_client import ClientSettings

pytestmark = [pytest.mark.server]

DETECTION_OUTPUTS = ('DETECTIONS', 'NUM_DETECTIONS')
WAIT_S = 60.0


class Node:
    """One node's member of a camera's JoinedWorker, and what it was delivered, by frame."""

    def __init__(self, worker: JoinedWorker, url: str, model: str, outputs: tuple[str, ...],
                 rgb: dict[int, np.ndarray], reject: frozenset[int] = frozenset()) -> None:
        """Serve `model` through `worker`; frames numbered in `reject` are rejected here."""
        self.accounting = FrameAccounting()
        self.results: dict[int, Tensors] = {}
        self.log = QuietLog()
        self._model = model
        self._rgb = rgb
        self._reject = reject
        self._done = threading.Condition()
        settings = ClientSettings(url=url, model=model, outputs=outputs,
                                  transport='shared_memory')
        self.worker: MemberWorker = worker.member(model, settings, self.accounting,
                                                  self._prepare, self._deliver, self.log)

    def _prepare(self, frame: Frame) -> Tensors:
        if frame.message in self._reject:
            raise FrameRejected('corrupt', 'a corrupt frame (test)')
        tensors: Tensors = {'IMAGE': self._rgb[frame.message]}
        if self._model == 'yolov5':
            tensors.update(SCORE_THRESHOLD=np.array([0.25], np.float32),
                           IOU_THRESHOLD=np.array([0.45], np.float32),
                           MAX_DETECTIONS=np.array([100], np.int32))
        return tensors

    def _deliver(self, frame: Frame, inputs: Tensors, outputs: Tensors) -> None:
        with self._done:
            self.results[frame.message] = outputs
            self._done.notify_all()

    def wait_settled(self, count: int) -> None:
        """Wait until `count` frames are settled, or fail with the log."""
        def settled() -> bool:
            return sum(self.accounting.count(fate) for fate in Fate) >= count
        deadline = time.monotonic() + WAIT_S
        with self._done:
            while not settled() and time.monotonic() < deadline:
                self._done.wait(0.05)  # a failed or rejected frame settles without a delivery
            assert settled(), self.log.lines


def serve_joined(url: str, rgb: dict[int, np.ndarray], joined_model: str = 'perception',
                 reject: frozenset[int] = frozenset()) -> tuple[Node, Node, JoinedWorker,
                                                                dict[int, Any]]:
    """Serve every frame to a detection and a lane node of one camera; return what each got."""
    statistics: dict[int, Any] = {}
    worker = JoinedWorker(joined_model, SharedFrames(),
                          lambda message, values: statistics.__setitem__(message, values))
    detection = Node(worker, url, 'yolov5', DETECTION_OUTPUTS, rgb, reject)
    lanes = Node(worker, url, 'lane_detection', LANE_RUNS_OUTPUTS, rgb)
    for node in (detection, lanes):
        node.worker.start()
    try:
        deadline = time.monotonic() + WAIT_S  # polled: readiness notifies no condition here
        while not worker.ready and time.monotonic() < deadline:
            time.sleep(0.02)
        assert worker.ready, detection.log.lines
        for number in rgb:
            with worker.slot.offering():  # as CameraFrames hands a message to every node
                for node in (detection, lanes):
                    node.worker.submit(Frame(number, node.accounting.received()))
            for node in (detection, lanes):
                node.wait_settled(number + 1)
    finally:
        for node in (detection, lanes):
            node.worker.stop()
    return detection, lanes, worker, statistics


def test_one_request_gives_each_node_what_its_own_request_gives(triton_server: Any) -> None:
    """
    Joined and separate requests give the same detections and lane runs for every frame.

    The health statistics come with each joined answer and judge the frame as the node's own
    check of its pixels does.
    """
    rgb = frames_of(bus_rgb(), 3)
    detection, lanes, worker, statistics = serve_joined(triton_server.grpc_url, rgb)
    alone_detection, alone_lanes = run_models(triton_server.grpc_url, rgb, None,
                                              lane_outputs=LANE_RUNS_OUTPUTS)
    assert worker.joined_requests == len(rgb)
    for number in rgb:
        for name in DETECTION_OUTPUTS:
            np.testing.assert_array_equal(detection.results[number][name],
                                          alone_detection.results[number][name])
        for name in LANE_RUNS_OUTPUTS:
            np.testing.assert_array_equal(lanes.results[number][name],
                                          alone_lanes.results[number][name])
        served = figures_from_statistics(statistics[number])
        own = frame_figures(rgb[number])
        assert served.sharpness == pytest.approx(own.sharpness, rel=1e-3)
        assert served.dark_fraction == pytest.approx(own.dark_fraction, abs=1e-4)


def test_a_rejected_frame_of_one_node_leaves_the_other_served(triton_server: Any) -> None:
    """A frame the detection node rejects is still served to the lane node, alone."""
    rgb = frames_of(bus_rgb(), 3)
    detection, lanes, worker, _ = serve_joined(triton_server.grpc_url, rgb,
                                               reject=frozenset({1}))
    assert sorted(lanes.results) == [0, 1, 2]
    assert sorted(detection.results) == [0, 2]
    assert detection.accounting.count(Fate.REJECTED) == 1
    assert detection.accounting.snapshot().reasons == {'rejected: corrupt': 1}
    assert worker.joined_requests == 2, 'frame 1 went to the lane model alone'


def test_without_the_joined_ensemble_each_node_gets_its_own_request(
        triton_server: Any) -> None:
    """A joined model the server does not have: one request per model, same results, said once."""
    rgb = frames_of(bus_rgb(), 2)
    detection, lanes, worker, statistics = serve_joined(triton_server.grpc_url, rgb,
                                                        joined_model='no_such_ensemble')
    assert worker.joined_requests == 0 and not statistics
    assert sorted(detection.results) == sorted(lanes.results) == [0, 1]
    assert any('one request per model' in line for line in detection.log.lines), \
        detection.log.lines
