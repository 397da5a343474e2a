"""
Frames served through the package's request workers on a tritonserver, as the nodes hand them over.

One worker per model (`Model`, `run_models`: detection and lanes at once, one frame after the
other), or a camera's JoinedWorker with a detection and a lane member (`Node`, `serve_joined`);
each keeps what it was delivered by frame and fails with its worker's log after WAIT_S.
"""
from __future__ import annotations

from contextlib import ExitStack
import os
from pathlib import Path
import threading
import time
from typing import Any, Callable

import numpy as np
from numpy.typing import NDArray

from support.recording_log import RecordingLog
from triton_perception.frames import Frame, FrameRejected
from triton_perception.frames.accounting import Fate, FrameAccounting
from triton_perception.graphs import LANE_RUNS_OUTPUTS
from triton_perception.serving.requests.camera_batches import CameraBatches
from triton_perception.serving.requests.joined_worker import JoinedWorker
from triton_perception.serving.requests.member_worker import MemberWorker
from triton_perception.serving.requests.request_inputs import Tensors
from triton_perception.serving.requests.shared_frames import SharedFrames
from triton_perception.serving.requests.triton_client import ClientSettings, InferenceWorker

DETECTION_OUTPUTS = ('DETECTIONS', 'NUM_DETECTIONS')
LANE_OUTPUTS = ('LANE_PROBABILITY', 'DRIVABLE_MARGIN')
WAIT_S = 60.0


class Model:
    """One model's worker on the session server, and the results it delivered, by frame."""

    def __init__(self, url: str, model: str, outputs: tuple[str, ...],
                 rgb: dict[int, np.ndarray], shared_frames: SharedFrames | None,
                 transport: str = 'shared_memory') -> None:
        """Serve `model` with frames whose RGB arrays `rgb` holds by frame number."""
        self.accounting = FrameAccounting()
        self.results: dict[int, Tensors] = {}
        self._done = threading.Condition()
        self._rgb = rgb
        self.log = RecordingLog()
        settings = ClientSettings(url=url, model=model, outputs=outputs, transport=transport)
        self.output_regions: set[str] = set()  # seen while delivering
        self.worker = InferenceWorker(settings, self.accounting, self._prepare, self._deliver,
                                      self.log, shared_frames)

    def _prepare(self, frame: Frame) -> Tensors:
        tensors: Tensors = {'IMAGE': self._rgb[frame.message]}
        if self.worker.settings.model == 'yolov5':
            tensors.update(SCORE_THRESHOLD=np.array([0.25], np.float32),
                           IOU_THRESHOLD=np.array([0.45], np.float32),
                           MAX_DETECTIONS=np.array([100], np.int32))
        return tensors

    def _deliver(self, frame: Frame, inputs: Tensors, outputs: Tensors) -> None:
        self.output_regions.update(path.name for path in output_regions())
        with self._done:
            self.results[frame.message] = outputs
            self._done.notify_all()

    def wait_ready(self) -> None:
        """
        Wait until the worker takes frames, polling: its readiness notifies nothing here.

        (Waiting on the results' condition would always sit out the whole WAIT_S.)
        """
        deadline = time.monotonic() + WAIT_S
        while not self.worker.ready and time.monotonic() < deadline:
            time.sleep(0.02)
        assert self.worker.ready, self.log.lines

    def wait_settled(self, count: int) -> None:
        """Wait until `count` frames are settled, or fail with the log."""
        wait_settled(self.accounting, self._done, count, self.log)

    def wait_for(self, number: int) -> None:
        """Wait until frame `number` is delivered, or fail with the worker's log."""
        with self._done:
            assert self._done.wait_for(lambda: number in self.results, WAIT_S), (
                self.log.lines, self.accounting.count(Fate.FAILED))


def wait_settled(accounting: FrameAccounting, done: threading.Condition, count: int,
                 log: RecordingLog) -> None:
    """Wait until `count` frames of `accounting` are settled, or fail with `log`."""
    def settled() -> bool:
        return sum(accounting.count(fate) for fate in Fate) >= count
    deadline = time.monotonic() + WAIT_S
    with done:
        while not settled() and time.monotonic() < deadline:
            done.wait(0.05)  # a failed or rejected frame settles without a delivery
        assert settled(), log.lines


def frames_of(image: np.ndarray, count: int) -> dict[int, np.ndarray]:
    """Return `count` different frames: `image` shifted by a few pixels each time."""
    return {number: np.ascontiguousarray(np.roll(image, 8 * number, axis=1))
            for number in range(count)}


def run_models(url: str, rgb: dict[int, np.ndarray], shared_frames: SharedFrames | None,
               lane_outputs: tuple[str, ...] = LANE_OUTPUTS) -> tuple[Model, Model]:
    """Send every frame to detection and lanes at once, one frame after the other."""
    detection = Model(url, 'yolov5', DETECTION_OUTPUTS, rgb, shared_frames)
    lanes = Model(url, 'lane_detection', lane_outputs, rgb, shared_frames)
    for model in (detection, lanes):
        model.worker.start()
    try:
        for model in (detection, lanes):
            model.wait_ready()
        for number in rgb:
            for model in (detection, lanes):
                model.worker.submit(Frame(number, model.accounting.received()))
            for model in (detection, lanes):
                model.wait_for(number)
    finally:
        for model in (detection, lanes):
            model.worker.stop()
    return detection, lanes


def output_regions() -> list[Path]:
    """Return this process's output regions in /dev/shm."""
    return sorted(Path('/dev/shm').glob(f'triton_perception_*_outputs_{os.getpid()}_*'))


class Node:
    """One node's member of a camera's JoinedWorker, and what it was delivered, by frame."""

    def __init__(self, worker: JoinedWorker, url: str, model: str, outputs: tuple[str, ...],
                 rgb: dict[int, np.ndarray], reject: frozenset[int] = frozenset(),
                 wanted: Callable[[], tuple[str, ...]] | None = None) -> None:
        """
        Serve `model` through `worker`; frames numbered in `reject` are rejected here.

        `wanted`: the node's outputs of the moment (Member.wanted), all of them by default.
        """
        self.accounting = FrameAccounting()
        self.results: dict[int, Tensors] = {}
        self.log = RecordingLog()
        self._model = model
        self._rgb = rgb
        self._reject = reject
        self._done = threading.Condition()
        # A timeout far beyond a loaded machine's slowest request: a request that timed out
        # fails its frames (a batch is not sent again), and these runs compare results.
        settings = ClientSettings(url=url, model=model, outputs=outputs,
                                  transport='shared_memory', timeout_s=WAIT_S / 2)
        self.worker: MemberWorker = worker.member(model, settings, self.accounting,
                                                  self._prepare, self._deliver, self.log, wanted)

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
        wait_settled(self.accounting, self._done, count, self.log)


def serve_joined(url: str, rgb: dict[int, np.ndarray], joined_model: str = 'perception',
                 reject: frozenset[int] = frozenset(),
                 lane_outputs: Callable[[], tuple[str, ...]] | None = None
                 ) -> tuple[Node, Node, JoinedWorker, dict[int, Any]]:
    """
    Serve every frame to a detection and a lane node of one camera; return what each got.

    `lane_outputs`: the lane node's outputs of the moment, all of them by default.
    """
    statistics: dict[int, Any] = {}
    worker = JoinedWorker(joined_model, SharedFrames(),
                          lambda message, values: statistics.__setitem__(message, values))
    detection = Node(worker, url, 'yolov5', DETECTION_OUTPUTS, rgb, reject)
    lanes = Node(worker, url, 'lane_detection', LANE_RUNS_OUTPUTS, rgb, wanted=lane_outputs)
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


class Camera:
    """One camera of the process: its JoinedWorker on the process's batches, and its nodes."""

    def __init__(self, batches: CameraBatches, url: str, name: str,
                 rgb: dict[int, NDArray[np.uint8]], reject: frozenset[int] = frozenset()) -> None:
        """Serve `rgb` to a detection and a lane node; frames numbered in `reject` are rejected."""
        self.statistics: dict[int, Any] = {}
        self.shared_frames = SharedFrames()
        self.worker = JoinedWorker('perception', self.shared_frames,
                                   lambda message, values: self.statistics.__setitem__(
                                       message, values), name, None, batches)
        self.detection = Node(self.worker, url, 'yolov5', DETECTION_OUTPUTS, rgb, reject)
        self.lanes = Node(self.worker, url, 'lane_detection', LANE_RUNS_OUTPUTS, rgb, reject)
        self.nodes = (self.detection, self.lanes)


def serve_batched(url: str, frames: list[dict[int, NDArray[np.uint8]]],
                  reject: dict[int, frozenset[int]] | None = None) -> list[Camera]:
    """Hand each frame number to every camera at once, as one set, and wait for all."""
    batches = CameraBatches()
    cameras = [Camera(batches, url, f'/cam{index}', rgb, (reject or {}).get(index, frozenset()))
               for index, rgb in enumerate(frames)]
    for camera in cameras:
        for node in camera.nodes:
            node.worker.start()
    try:
        deadline = time.monotonic() + WAIT_S  # polled: readiness notifies no condition here
        for camera in cameras:
            while not camera.worker.ready and time.monotonic() < deadline:
                time.sleep(0.02)
            assert camera.worker.ready, camera.detection.log.lines
        for number in range(len(frames[0])):
            with batches.holding(), ExitStack() as offering:
                for camera in cameras:
                    offering.enter_context(camera.worker.slot.offering())
                    for node in camera.nodes:
                        node.worker.submit(Frame(number, node.accounting.received()))
            for camera in cameras:
                for node in camera.nodes:
                    node.wait_settled(number + 1)
    finally:
        for camera in cameras:
            for node in camera.nodes:
                node.worker.stop()
    return cameras
