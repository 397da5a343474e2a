"""
A process's cameras served by one request (serving.camera_batches), on a real tritonserver.

Each camera's detection and lane nodes must get from a batched request exactly what the
camera's own joined request gives, for cameras of two sizes in one request; a frame that one
camera's nodes reject, or that the server refuses, must leave the other cameras served.
"""
from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray
import pytest

from support.sample_images import bus_rgb
from support.worker_runs import (Camera, DETECTION_OUTPUTS, frames_of, Node, serve_batched,
                                 serve_joined)
from triton_perception.frames.accounting import Fate
from triton_perception.graphs import LANE_RUNS_OUTPUTS

pytestmark = [pytest.mark.server]

FRAMES = 2


def camera_frames() -> list[dict[int, NDArray[np.uint8]]]:
    """Four cameras: two of the full bus frame, two of a smaller crop (two sizes at once)."""
    bus = bus_rgb()
    crop = np.ascontiguousarray(bus[100:580, 0:640])
    return [frames_of(np.roll(image, 16 * index, axis=0), FRAMES)
            for index, image in enumerate((bus, crop, bus, crop))]


def assert_same_results(batched: Camera, alone: Node, alone_lanes: Node,
                        numbers: list[int]) -> None:
    """Check that the batched camera's nodes got what its own joined requests gave."""
    for number in numbers:
        for name in DETECTION_OUTPUTS:
            np.testing.assert_array_equal(batched.detection.results[number][name],
                                          alone.results[number][name])
        for name in LANE_RUNS_OUTPUTS:
            np.testing.assert_array_equal(batched.lanes.results[number][name],
                                          alone_lanes.results[number][name])


def test_batched_and_unbatched_requests_give_each_camera_the_same_results(
        triton_server: Any) -> None:
    """Four cameras of two sizes in one request each round: each camera's own results."""
    frames = camera_frames()
    cameras = serve_batched(triton_server.grpc_url, frames)
    for camera, rgb in zip(cameras, frames):
        batched = int(camera.worker.figures()['batched_requests'])
        assert batched == FRAMES, camera.detection.log.lines
        detection, lanes, _, statistics = serve_joined(triton_server.grpc_url, rgb)
        assert_same_results(camera, detection, lanes, list(rgb))
        for number in rgb:
            np.testing.assert_allclose(camera.statistics[number], statistics[number],
                                       rtol=1e-5, atol=1e-6)
        assert camera.detection.accounting.count(Fate.PUBLISHED) == FRAMES
        assert camera.shared_frames.regions == 0, 'the last lease frees the regions at stop'


def test_a_corrupt_frame_in_a_batch_of_four_leaves_three_cameras_served(
        triton_server: Any) -> None:
    """Camera 2's frame 1 is rejected by its nodes; the other three are served in the batch."""
    frames = camera_frames()
    cameras = serve_batched(triton_server.grpc_url, frames, reject={2: frozenset({1})})
    for index, camera in enumerate(cameras):
        for node in camera.nodes:
            snapshot = node.accounting.snapshot()
            if index == 2:
                assert sorted(node.results) == [0]
                assert snapshot.reasons == {'rejected: corrupt': 1}
            else:
                assert sorted(node.results) == [0, 1]
                assert node.accounting.count(Fate.PUBLISHED) == FRAMES
    assert [int(camera.worker.figures()['batched_requests']) for camera in cameras] == [2, 2, 1, 2]


def test_a_frame_the_server_refuses_fails_only_its_camera(triton_server: Any) -> None:
    """A four-channel frame makes the server refuse the batch; each camera is sent again alone."""
    frames = camera_frames()
    bad = frames[1][1]
    frames[1][1] = np.ascontiguousarray(
        np.concatenate([bad, bad[..., :1]], axis=2))  # not the [H, W, 3] the ensemble takes
    cameras = serve_batched(triton_server.grpc_url, frames)
    for index, camera in enumerate(cameras):
        for node in camera.nodes:
            if index == 1:
                assert sorted(node.results) == [0]
                assert node.accounting.count(Fate.FAILED) == 1, node.log.lines
            else:
                assert sorted(node.results) == [0, 1], node.log.lines
    assert [int(camera.worker.figures()['batched_requests']) for camera in cameras] == [1, 1, 1, 1]
