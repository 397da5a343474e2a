"""
A camera's frame is written into Triton shared memory once for both ensembles that read it.

The lane maps come back through a region of the request thread, not in the response.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Iterator

import numpy as np
import pytest
import tritonclient.grpc as grpcclient
from tritonclient.utils import InferenceServerException

from support.recording_log import RecordingLog
from support.sample_images import bus_rgb
from support.worker_runs import frames_of, LANE_OUTPUTS, Model, output_regions, run_models
from triton_perception.frames import Frame
from triton_perception.frames.accounting import Fate
from triton_perception.serving.requests.output_memory import (MIN_SHARED_OUTPUT_BYTES,
                                                              OutputMemory, OutputSpec,
                                                              shared_output_layout)
from triton_perception.serving.requests.request_errors import lost_shared_memory
from triton_perception.serving.requests.shared_frames import REGION_LABEL, SharedFrames
from triton_perception.serving.requests.shared_memory_region import unregister_region

pytestmark = [pytest.mark.server]

REGION_PREFIX = f'triton_perception_{REGION_LABEL}_{os.getpid()}_'


def frame_regions() -> list[Path]:
    """Return this process's shared frame regions in /dev/shm."""
    return sorted(Path('/dev/shm').glob(f'{REGION_PREFIX}*'))


def registered(client: grpcclient.InferenceServerClient,
               names: list[str] | None = None) -> list[str]:
    """Return the frame regions (of `names`, if given) that the server has registered."""
    status = client.get_system_shared_memory_status(as_json=True).get('regions', {})
    return sorted(name for name in status if name.startswith(REGION_PREFIX)
                  and (names is None or name in names))


@pytest.fixture(scope='module')
def bus_frames() -> dict[int, np.ndarray]:
    """Give six frames made from bus.jpg."""
    return frames_of(bus_rgb(), 6)


@pytest.fixture(scope='module')
def own_regions(triton_server: Any, bus_frames: dict[int, np.ndarray]) -> Iterator[
        tuple[Model, Model]]:
    """Give both models' results with a region per request thread (the per-node layout)."""
    yield run_models(triton_server.grpc_url, bus_frames, None)


def test_both_models_read_one_copy_of_each_frame(
        triton_server: Any, bus_frames: dict[int, np.ndarray],
        own_regions: tuple[Model, Model]) -> None:
    """Each frame is copied once, read by both requests, and the results are the same."""
    shared_frames = SharedFrames()
    detection, lanes = run_models(triton_server.grpc_url, bus_frames, shared_frames)
    assert shared_frames.writes == len(bus_frames)
    assert shared_frames.reads == 2 * len(bus_frames)
    for number in bus_frames:
        for shared, own in zip((detection, lanes), own_regions):
            for name, array in own.results[number].items():
                np.testing.assert_array_equal(shared.results[number][name], array, err_msg=name)
    assert own_regions[0].results[0]['NUM_DETECTIONS'][0] >= 4  # bus.jpg: people and a bus
    for model in (detection, lanes):
        assert model.accounting.count(Fate.PUBLISHED) == len(bus_frames)
    assert shared_frames.regions == 0 and frame_regions() == [], 'the last lease frees them'


def test_regions_are_reused_and_registered_again_after_the_server_lost_them(
        triton_server: Any, bus_frames: dict[int, np.ndarray]) -> None:
    """A region is reused for newer frames, and registered again once the server lost it."""
    shared_frames = SharedFrames()
    client = grpcclient.InferenceServerClient(triton_server.grpc_url)
    try:
        lease = shared_frames.lease('worker')
        # Only this test's regions count: an earlier test's request thread may still be closing
        # its own lease after its worker's stop gave up waiting for it.
        for number, generation in ((0, 1), (1, 1), (2, 2)):
            lease.tensor(client, bus_frames[number], generation)
            lease.release()
            assert registered(client, shared_frames.region_names) == shared_frames.region_names
        assert shared_frames.regions == 1 and shared_frames.writes == 3
        ours = shared_frames.region_names
        assert unregister_region(client, ours[0])  # as a restart does
        lease.tensor(client, bus_frames[3], 2)
        lease.forget_registration()  # what the worker does when the request says so
        lease.release()
        lease.tensor(client, bus_frames[3], 2)
        assert registered(client, ours) == ours
        lease.close(client)
        assert shared_frames.regions == 0
        assert [path for path in frame_regions() if path.name in ours] == []
        assert registered(client, ours) == []
    finally:
        client.close()


def test_only_large_fixed_size_outputs_go_through_shared_memory() -> None:
    """The lane maps qualify; open, small, text and unknown outputs stay in the response."""
    specs = [OutputSpec('LANE_PROBABILITY', 'UINT8', (360, 640)),
             OutputSpec('DRIVABLE_MARGIN', 'UINT8', (360, 640)),
             OutputSpec('DETECTIONS', 'FP32', (-1, 6)),
             OutputSpec('NUM_DETECTIONS', 'INT32', (1,)),
             OutputSpec('SMALL', 'FP32', (100, 100)),
             OutputSpec('WIDE', 'FP16', (3, 50001)),
             OutputSpec('TEXT', 'BYTES', (100000,))]
    names = ('LANE_PROBABILITY', 'DETECTIONS', 'NUM_DETECTIONS', 'SMALL', 'TEXT', 'MISSING',
             'WIDE', 'DRIVABLE_MARGIN')
    assert MIN_SHARED_OUTPUT_BYTES > 100 * 100 * 4
    assert shared_output_layout(specs, names) == {
        'LANE_PROBABILITY': (0, 230400),
        'WIDE': (230400, 300006),
        'DRIVABLE_MARGIN': (530432, 230400),  # 230400 + 300006 rounded up to 64 bytes
    }


def test_lane_maps_come_back_through_shared_memory_unchanged(
        triton_server: Any, bus_frames: dict[int, np.ndarray],
        own_regions: tuple[Model, Model]) -> None:
    """The maps read from the region equal those of the response; detections use none."""
    by_response = Model(triton_server.grpc_url, 'lane_detection', LANE_OUTPUTS, bus_frames, None,
                        transport='grpc')
    by_response.worker.start()
    try:
        by_response.wait_ready()
        for number in bus_frames:
            by_response.worker.submit(Frame(number, by_response.accounting.received()))
            by_response.wait_for(number)
    finally:
        by_response.worker.stop()
    detection, lanes = own_regions
    for number in bus_frames:
        for name in LANE_OUTPUTS:
            np.testing.assert_array_equal(lanes.results[number][name],
                                          by_response.results[number][name], err_msg=name)
    prefix = f'triton_perception_lane_detection_outputs_{os.getpid()}_'
    assert lanes.output_regions and all(name.startswith(prefix)
                                        for name in lanes.output_regions), lanes.output_regions
    assert by_response.output_regions == set()
    assert detection.output_regions <= lanes.output_regions, 'detections: in the response'
    seen = detection.output_regions | lanes.output_regions
    assert not [name for name in seen if name.startswith('triton_perception_yolov5_')], seen
    assert output_regions() == [], 'a stopped worker leaves no region'


def test_output_region_is_registered_again_after_the_server_lost_it(
        triton_server: Any, bus_frames: dict[int, np.ndarray]) -> None:
    """A request that finds its output region gone says so; the next registers it again."""
    client = grpcclient.InferenceServerClient(triton_server.grpc_url)
    memory = OutputMemory('lane_detection', LANE_OUTPUTS, True, RecordingLog())
    image = grpcclient.InferInput('IMAGE', list(bus_frames[0].shape), 'UINT8')
    image.set_data_from_numpy(bus_frames[0])
    try:
        first = memory.arrays(client.infer('lane_detection', [image],
                                           outputs=memory.requested(client, 1)))
        assert unregister_region(client, memory.region_name)  # as a restart does
        with pytest.raises(InferenceServerException) as lost:
            client.infer('lane_detection', [image], outputs=memory.requested(client, 1))
        assert lost_shared_memory(lost.value), lost.value.message()
        memory.forget_registration()  # what the worker does when the request says so
        again = memory.arrays(client.infer('lane_detection', [image],
                                           outputs=memory.requested(client, 1)))
        for name in LANE_OUTPUTS:
            np.testing.assert_array_equal(again[name], first[name], err_msg=name)
    finally:
        memory.close(client)
        client.close()
    assert output_regions() == []
