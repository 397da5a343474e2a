"""
A camera's detection and lane nodes served by one request per frame (serving.joined_worker).

Real tritonserver, real weights: the joined request must give each node exactly what its own
request gives, with the camera's health statistics beside; one node's rejected frame must
leave the other served; and without the joined ensemble the nodes are served one request each.
"""
from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest

from support.sample_images import bus_rgb
from support.worker_runs import DETECTION_OUTPUTS, frames_of, run_models, serve_joined
from triton_perception.frames.accounting import Fate
from triton_perception.graphs import LANE_RUNS_OUTPUTS
from triton_perception.health import figures_from_statistics, frame_figures

pytestmark = [pytest.mark.server]


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
    assert int(worker.figures()['joined_requests']) == len(rgb)
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


def test_an_output_nobody_publishes_is_not_asked_of_the_server(triton_server: Any) -> None:
    """
    The lane node's outputs of the moment are what the joined request asks for.

    Every other frame it consumes no drivable area: that frame's answer has none (the server was
    not asked for it), its runs are the same, and the next frame has it again.
    """
    rgb = frames_of(bus_rgb(), 4)
    asked = itertools.count()

    def every_other() -> tuple[str, ...]:
        return LANE_RUNS_OUTPUTS if next(asked) % 2 == 0 else LANE_RUNS_OUTPUTS[:2]
    _detection, lanes, worker, _ = serve_joined(triton_server.grpc_url, rgb,
                                                lane_outputs=every_other)
    assert int(worker.figures()['joined_requests']) == len(rgb)
    assert [sorted(lanes.results[number]) for number in rgb] == [
        sorted(LANE_RUNS_OUTPUTS), sorted(LANE_RUNS_OUTPUTS[:2])] * 2
    for number in (1, 3):
        for name in LANE_RUNS_OUTPUTS[:2]:
            np.testing.assert_array_equal(lanes.results[number][name],
                                          lanes.results[number - 1][name])


def test_a_rejected_frame_of_one_node_leaves_the_other_served(triton_server: Any) -> None:
    """A frame the detection node rejects is still served to the lane node, alone."""
    rgb = frames_of(bus_rgb(), 3)
    detection, lanes, worker, _ = serve_joined(triton_server.grpc_url, rgb,
                                               reject=frozenset({1}))
    assert sorted(lanes.results) == [0, 1, 2]
    assert sorted(detection.results) == [0, 2]
    assert detection.accounting.count(Fate.REJECTED) == 1
    assert detection.accounting.snapshot().reasons == {'rejected: corrupt': 1}
    assert int(worker.figures()['joined_requests']) == 2, 'frame 1 went to the lane model alone'


def test_without_the_joined_ensemble_each_node_gets_its_own_request(
        triton_server: Any) -> None:
    """A joined model the server does not have: one request per model, same results, said once."""
    rgb = frames_of(bus_rgb(), 2)
    detection, lanes, worker, statistics = serve_joined(triton_server.grpc_url, rgb,
                                                        joined_model='no_such_ensemble')
    assert int(worker.figures()['joined_requests']) == 0 and not statistics
    assert sorted(detection.results) == sorted(lanes.results) == [0, 1]
    assert any('one request per model' in line for line in detection.log.lines), \
        detection.log.lines
