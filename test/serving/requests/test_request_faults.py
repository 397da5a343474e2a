"""
A fault raised at the Triton client's boundary settles its frames, and the thread goes on.

Not only Triton's own exception: a RuntimeError from the client's `infer`, an OSError from the
shared-memory input and a ValueError, raised for a window of requests of one model's worker, of a
camera's joined requests and of two cameras batched. Every frame is accounted for, the window's
as failed with the exception's class as the reason, and the frames after it are served by the
same request threads. The process-level view (/diagnostics ERROR in the window, OK after it) is
test/nodes/test_request_faults_process.py.
"""
from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import tritonclient.grpc as grpcclient
from tritonclient.utils import InferenceServerException

from support.client_faults import FaultWindow
from support.recording_log import RecordingLog
from support.sample_images import bus_rgb
from support.worker_runs import DETECTION_OUTPUTS, frames_of, Model, serve_batched, serve_joined
from triton_perception.frames import Frame
from triton_perception.frames.accounting import FrameAccounting
from triton_perception.serving.requests.request_threads import supervised
from triton_perception.serving.requests.worker_log import WorkerLog

pytestmark = [pytest.mark.server]

FRAMES = 6
WINDOW_START = 2  # requests 2 and 3 fail: frames before and after are served
WINDOW = 2


def assert_window_failed(accounting: FrameAccounting, error: type[Exception],
                         failed: int = WINDOW) -> None:
    """Check that the window's frames failed with the error's class and the others published."""
    snapshot = accounting.snapshot()
    assert snapshot.balanced and snapshot.pending == 0, snapshot
    assert snapshot.counts['failed'] == failed, snapshot
    assert snapshot.counts['published'] == FRAMES - failed, snapshot
    assert snapshot.reasons == {f'failed: request: {error.__name__}': failed}, snapshot.reasons
    assert snapshot.last_error.endswith('injected fault (test)'), snapshot.last_error


def test_a_fault_in_one_models_requests_fails_its_frames_and_the_thread_goes_on(
        triton_server: Any) -> None:
    """A RuntimeError from `infer` for two requests of a node's own worker."""
    rgb = frames_of(bus_rgb(), FRAMES)
    model = Model(triton_server.grpc_url, 'yolov5', DETECTION_OUTPUTS, rgb, None)
    model.worker.start()
    try:
        model.wait_ready()
        with FaultWindow(grpcclient.InferenceServerClient, 'infer', RuntimeError,
                         WINDOW_START, WINDOW) as window:
            for number in rgb:
                model.worker.submit(Frame(number, model.accounting.received()))
                model.wait_settled(number + 1)
    finally:
        model.worker.stop()
    assert window.raised == WINDOW
    assert_window_failed(model.accounting, RuntimeError)
    assert sorted(model.results) == [0, 1, 4, 5], 'the same thread served the frames after it'
    assert any('injected fault' in line for line in model.log.lines), model.log.lines


def test_a_fault_in_a_cameras_joined_requests_fails_both_nodes_frames(
        triton_server: Any) -> None:
    """An OSError from the shared-memory input for two joined requests of one camera."""
    rgb = frames_of(bus_rgb(), FRAMES)
    with FaultWindow(grpcclient.InferInput, 'set_shared_memory', OSError,
                     WINDOW_START, WINDOW) as window:
        detection, lanes, _worker, _statistics = serve_joined(triton_server.grpc_url, rgb)
    assert window.raised == WINDOW
    for node in (detection, lanes):
        assert_window_failed(node.accounting, OSError)
        assert sorted(node.results) == [0, 1, 4, 5]


def test_a_fault_in_a_batched_request_fails_that_rounds_frames_of_each_camera(
        triton_server: Any) -> None:
    """A ValueError from `infer` for two batched requests of two cameras."""
    image = bus_rgb()
    frames = [frames_of(np.roll(image, 16 * index, axis=0), FRAMES) for index in range(2)]
    with FaultWindow(grpcclient.InferenceServerClient, 'infer', ValueError,
                     WINDOW_START, WINDOW) as window:
        cameras = serve_batched(triton_server.grpc_url, frames)
    assert window.raised == WINDOW
    for camera in cameras:
        for node in camera.nodes:
            assert_window_failed(node.accounting, ValueError)
            assert sorted(node.results) == [0, 1, 4, 5]
        assert int(camera.worker.figures()['batched_requests']) == FRAMES - WINDOW


def test_a_thread_whose_loop_fails_is_started_again() -> None:
    """What escapes a request loop anyway is logged and the loop runs again."""
    runs: list[int] = []

    def loop() -> None:
        runs.append(len(runs))
        if len(runs) < 3:
            raise KeyError('a bug (test)')

    log = RecordingLog()
    supervised(loop, WorkerLog(log), 'request thread 0')()
    assert runs == [0, 1, 2]
    restarts = [line for line in log.lines if 'started again' in line]
    assert len(restarts) == 2 and 'KeyError' in restarts[0], log.lines


def test_a_batch_that_timed_out_fails_at_once_and_is_not_sent_again(triton_server: Any) -> None:
    """A timeout of the first batched request fails both cameras' frames; no camera is re-sent."""
    image = bus_rgb()
    frames = [frames_of(np.roll(image, 16 * index, axis=0), 3) for index in range(2)]

    def timeout(text: str) -> Exception:
        return InferenceServerException(text, status='StatusCode.DEADLINE_EXCEEDED')
    with FaultWindow(grpcclient.InferenceServerClient, 'infer', timeout, 0, 1) as window:
        cameras = serve_batched(triton_server.grpc_url, frames)
    assert window.calls == 3, 'one request a round: the timed-out batch was not sent again'
    for camera in cameras:
        for node in camera.nodes:
            reasons = node.accounting.snapshot().reasons
            assert list(reasons) == ['failed: timeout after 30 s'], reasons
            assert sorted(node.results) == [1, 2]
