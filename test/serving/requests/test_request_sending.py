"""
One way to send a request (serving.request_sending), on a real tritonserver.

One model's request, a camera's joined request and two cameras batched go through the same
`send`: each failure (server gone, shared memory lost, a timeout) leaves every lease released
exactly once, forgets registrations only when the server lost them, and `settle_failure`
settles each frame it is given exactly once, with the reason.
"""
from __future__ import annotations

import time
from typing import Any

import numpy as np
import pytest
import tritonclient.grpc as grpcclient
from tritonclient.utils import InferenceServerException

from support.recording_log import RecordingLog
from support.sample_images import bus_rgb
from triton_perception.frames import Fate, Frame, FrameAccounting
from triton_perception.graphs import LANE_RUNS_OUTPUTS
from triton_perception.serving.requests.camera_batches import camera_suffix
from triton_perception.serving.requests.output_memory import OutputMemory
from triton_perception.serving.requests.request_inputs import (FrameInputs, SharedMemoryInput,
                                                               Tensors)
from triton_perception.serving.requests.request_sending import Part, send, settle_failure
from triton_perception.serving.server.server_config import batched_name
from triton_perception.system import free_ports

pytestmark = [pytest.mark.server]

DETECTION_OUTPUTS = ('DETECTIONS', 'NUM_DETECTIONS')
THRESHOLDS: Tensors = {'SCORE_THRESHOLD': np.array([0.25], np.float32),
                       'IOU_THRESHOLD': np.array([0.45], np.float32),
                       'MAX_DETECTIONS': np.array([100], np.int32)}


class CountedLease(SharedMemoryInput):
    """A request thread's own region that counts its releases and forgotten registrations."""

    def __init__(self, label: str) -> None:
        """Make a region labelled `label` (registered on first use)."""
        super().__init__(label)
        self.released = 0
        self.forgotten = 0

    def release(self) -> None:
        """Count the release."""
        self.released += 1

    def forget_registration(self) -> None:
        """Count it, then forget as the region does."""
        self.forgotten += 1
        super().forget_registration()


# What each kind of request carries: its model, outputs, and each part's tensors (one per camera).
KINDS = {
    'one model': ('yolov5', DETECTION_OUTPUTS, 1),
    'joined': ('perception', (*DETECTION_OUTPUTS, *LANE_RUNS_OUTPUTS), 1),
    'batched': (batched_name('perception', 2),
                tuple(name + camera_suffix(index) for index in range(2)
                      for name in (*DETECTION_OUTPUTS, *LANE_RUNS_OUTPUTS)), 2),
}


def parts_of(kind: str, url: str, log: RecordingLog) -> list[Part]:
    """Return the parts of a request of `kind`, each on a counted lease of its own."""
    cameras = KINDS[kind][2]
    rgb = bus_rgb()
    writer = FrameInputs(True, url, log)
    return [Part(CountedLease(f'sending_{kind.replace(" ", "_")}_{index}'),
                 {'IMAGE': rgb, **THRESHOLDS}, writer, 0,
                 camera_suffix(index) if cameras > 1 else '')
            for index in range(cameras)]


def send_kind(client: grpcclient.InferenceServerClient, kind: str, parts: list[Part],
              outputs: OutputMemory, timeout_s: float = 30.0) -> Any:
    """Send a request of `kind` with `parts`."""
    return send(client, KINDS[kind][0], parts, outputs, timeout_s)


@pytest.mark.parametrize('kind', KINDS)
def test_each_kind_of_request_is_answered_and_releases_its_leases(triton_server: Any,
                                                                  kind: str) -> None:
    """Answered: every part's lease released once, nothing forgotten, the outputs read."""
    client = grpcclient.InferenceServerClient(triton_server.grpc_url)
    log = RecordingLog()
    parts = parts_of(kind, triton_server.grpc_url, log)
    outputs = OutputMemory(KINDS[kind][0], KINDS[kind][1], True, log)
    try:
        answer = send_kind(client, kind, parts, outputs)
        arrays = outputs.arrays(answer.result)
        assert set(arrays) == set(KINDS[kind][1])
        assert answer.times.answered_at >= answer.times.sent_at
        assert [(part.lease.released, part.lease.forgotten) for part in parts  # type: ignore
                ] == [(1, 0)] * len(parts)
    finally:
        for part in parts:
            part.lease.close(client)
        outputs.close(client)
        client.close()


@pytest.mark.parametrize('kind', KINDS)
def test_a_server_that_is_gone_fails_the_request_and_each_frame_once(kind: str) -> None:
    """Unreachable: raised, each lease released once, no registration forgotten."""
    url = f'127.0.0.1:{free_ports(1)[0]}'
    client = grpcclient.InferenceServerClient(url)
    log = RecordingLog()
    parts = parts_of(kind, url, log)
    outputs = OutputMemory(KINDS[kind][0], KINDS[kind][1], True, log)
    with pytest.raises(InferenceServerException) as raised:
        send_kind(client, kind, parts, outputs, timeout_s=5.0)
    assert [(part.lease.released, part.lease.forgotten) for part in parts  # type: ignore
            ] == [(1, 0)] * len(parts)
    accounting = FrameAccounting()
    frames = [Frame(index, accounting.received()) for index in range(len(parts))]
    for frame in frames:
        settle_failure(accounting, log, frame, KINDS[kind][0], 5.0, raised.value, None)
    assert accounting.count(Fate.FAILED) == len(frames)
    assert accounting.snapshot().pending == 0
    assert all('inference failed' in line for line in log.lines)
    client.close()


def forget_region(client: grpcclient.InferenceServerClient, name: str) -> None:
    """
    Make the server forget region `name`, as a restarted server would have.

    Triton refuses while a finished request's steps still hold the region ("currently in use");
    they let go moments later, sooner on a quiet machine.
    """
    deadline = time.monotonic() + 10.0
    while True:
        try:
            client.unregister_system_shared_memory(name)
            return
        except InferenceServerException as error:
            if 'in use' not in str(error) or time.monotonic() > deadline:
                raise
            time.sleep(0.05)


@pytest.mark.parametrize('kind', KINDS)
def test_shared_memory_the_server_lost_is_forgotten_once_and_registered_again(
        triton_server: Any, kind: str) -> None:
    """The server forgot every region: the request fails, each lease forgets once, then works."""
    client = grpcclient.InferenceServerClient(triton_server.grpc_url)
    log = RecordingLog()
    parts = parts_of(kind, triton_server.grpc_url, log)
    outputs = OutputMemory(KINDS[kind][0], KINDS[kind][1], True, log)
    try:
        send_kind(client, kind, parts, outputs)
        for part in parts:
            forget_region(client, part.lease.name)  # type: ignore
        forget_region(client, outputs.region_name)
        with pytest.raises(InferenceServerException):
            send_kind(client, kind, parts, outputs)
        assert [(part.lease.released, part.lease.forgotten) for part in parts  # type: ignore
                ] == [(2, 1)] * len(parts)
        send_kind(client, kind, parts, outputs)  # registered again
        assert [part.lease.released for part in parts] == [3] * len(parts)  # type: ignore
    finally:
        for part in parts:
            part.lease.close(client)
        outputs.close(client)
        client.close()


def test_a_timeout_fails_the_request_and_releases_the_lease(triton_server: Any) -> None:
    """A client timeout shorter than any answer: raised as a timeout, the lease released once."""
    client = grpcclient.InferenceServerClient(triton_server.grpc_url)
    log = RecordingLog()
    parts = parts_of('joined', triton_server.grpc_url, log)
    outputs = OutputMemory('perception', KINDS['joined'][1], True, log)
    try:
        with pytest.raises(InferenceServerException) as raised:
            send_kind(client, 'joined', parts, outputs, timeout_s=1e-4)
        assert parts[0].lease.released == 1  # type: ignore
        accounting = FrameAccounting()
        settle_failure(accounting, log, Frame(0, accounting.received()), 'perception', 1e-4,
                       raised.value, None)
        assert accounting.count(Fate.FAILED) == 1
        assert any('timed out' in reason or 'timeout' in reason
                   for reason in accounting.snapshot().reasons), accounting.snapshot().reasons
    finally:
        parts[0].lease.close(client)
        outputs.close(client)
        client.close()
