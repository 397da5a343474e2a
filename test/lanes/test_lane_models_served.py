"""
The design document's LaneATT contract through a real tritonserver and a real lane_node.

`[2784, 77]` proposals from an FP32 `[3, 360, 640]` input and its FP16-input variant, each installed
from its ONNX file and around an existing served model (`laneDetect_model`, `max_batch_size: 1`, as
the design document deploys it).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

import numpy as np
from onnx import TensorProto
import pytest
from sensor_msgs.msg import Image, PointCloud2
from std_msgs.msg import Header
import tritonclient.grpc as grpcclient

from support.checkout import copy_of_model_repository, node_with_repository
from support.lane_model_cases import (add_served_model, check_lanes, CURVES, FRAME, frame,
                                      layout_case, NO_LOG, ROW_ANCHOR_AND_SEGMENTATION, SIDES)
from support.lane_model_fixtures import constant_model, laneatt_rows
from support.published_messages import image_message
from support.ros_helpers import Probe, wait_until
from support.triton_requests import infer
from triton_perception.frames.frame_range import frame_range_of, FrameRange
from triton_perception.lanes.decode import decode_lanes
from triton_perception.lanes.lane_model import DecodeSettings
from triton_perception.lanes.lane_records import lane_model_for
from triton_perception.models.lane_model_install import (install_lane_model,
                                                         install_served_lane_model)
from triton_perception.outputs.result_messages import lanes_from_cloud
from triton_perception.serving.server.engines import engine_steps
from triton_perception.serving.server.server_config import ServerConfig
from triton_perception.serving.server.triton_server import TritonServer
from triton_perception.system.processes import free_ports, ros_arguments

SERVED = {'laneDetect_model': ('TYPE_FP32', TensorProto.FLOAT),
          'LaneDet_fp16': ('TYPE_FP16', TensorProto.FLOAT16)}
INSTALLED = ('laneatt_onnx32', 'laneatt_onnx16', 'laneatt_served32', 'laneatt_served16')


@pytest.fixture(scope='module')
def lane_server(tmp_path_factory: pytest.TempPathFactory, triton_server: Any
                ) -> Iterator[tuple[TritonServer, Path]]:
    """
    Serve a repository with every kind of installed lane model, for one module.

    Yields the server and the repository.
    """
    directory = tmp_path_factory.mktemp('served_lanes')
    repository = copy_of_model_repository(directory)
    for bits, onnx_type in (('32', TensorProto.FLOAT), ('16', TensorProto.FLOAT16)):
        path = constant_model(directory / f'laneatt{bits}.onnx',
                              {'predict_lanes': laneatt_rows(CURVES)}, [1, 3, 360, 640],
                              onnx_type)
        install_lane_model(repository, path, f'laneatt_onnx{bits}', 'proposals', **NO_LOG)
    for (name, (triton_type, onnx_type)), bits in zip(SERVED.items(), ('32', '16')):
        add_served_model(repository, name, triton_type, onnx_type, directory)
        install_served_lane_model(repository, name, f'laneatt_served{bits}', 'proposals',
                                  **NO_LOG)
    for name in ROW_ANCHOR_AND_SEGMENTATION:
        path, layout, config, _ = layout_case(name, directory)
        install_lane_model(repository, path, name, layout, config, **NO_LOG)
    http, grpc, metrics = free_ports(3)
    server = TritonServer(ServerConfig(model_repository=repository, profile='cpu',
                                       http_port=http, grpc_port=grpc, metrics_port=metrics,
                                       models=INSTALLED + ROW_ANCHOR_AND_SEGMENTATION,
                                       ready_timeout_s=300),
                          log=lambda _line: None, show_server_log=False)
    with server:
        yield server, repository


@pytest.mark.server
@pytest.mark.parametrize('name', INSTALLED)
def test_each_install_serves_the_lanes_through_triton(
        lane_server: tuple[TritonServer, Path], name: str) -> None:
    """
    Each LaneATT install serves its lanes through Triton.

    From an ONNX file or around an existing served model, with an FP32 or FP16 input.
    """
    server, repository = lane_server
    model = lane_model_for(repository, name)
    expected_type = 'float16' if name.endswith('16') else 'float32'
    assert model.input_type == expected_type
    client = grpcclient.InferenceServerClient(server.grpc_url)
    outputs = infer(client, name, frame(), model.outputs)
    result = decode_lanes(model, outputs, FRAME, DecodeSettings())
    check_lanes(result, CURVES, SIDES, (1.5, 1.5))


@pytest.mark.server
@pytest.mark.parametrize('name', ROW_ANCHOR_AND_SEGMENTATION)
def test_row_anchor_and_segmentation_lanes_through_triton(
        lane_server: tuple[TritonServer, Path], tmp_path: Path, name: str) -> None:
    """Row-anchor and segmentation models serve through Triton the lanes their outputs encode."""
    server, repository = lane_server
    model = lane_model_for(repository, name)
    outputs = infer(grpcclient.InferenceServerClient(server.grpc_url), name, frame(),
                    model.outputs)
    layout_case(name, tmp_path)[3](decode_lanes(model, outputs, FRAME, DecodeSettings()))


@pytest.mark.ros
@pytest.mark.server
def test_lane_node_serves_the_design_documents_model(
        probe: Probe, lane_server: tuple[TritonServer, Path], tmp_path: Path) -> None:
    """lane_node on the design document's FP16 LaneATT model publishes the lanes Triton decodes."""
    server, repository = lane_server
    node = node_with_repository('lane_node', ros_arguments(
        {'triton_url': server.grpc_url, 'model_name': 'laneatt_served16'}, namespace='/byo'),
        repository, tmp_path)
    try:
        clouds = probe.record(PointCloud2, '/byo/lanes')
        camera = probe.publisher(Image, '/byo/image')
        probe.wait_for_subscribers(camera)
        message = image_message(frame(), Header(frame_id='front'), 'rgb8')

        def answered() -> Any:
            camera.publish(message)
            return next(iter(clouds), None)
        cloud = wait_until(answered, 60.0, 'lanes from the installed LaneATT model')
        lanes, sides = lanes_from_cloud(cloud)
        assert cloud.header.frame_id == 'front'
        result = decode_lanes(lane_model_for(repository, 'laneatt_served16'), infer(
            grpcclient.InferenceServerClient(server.grpc_url), 'laneatt_served16', frame(),
            ('predict_lanes',)), FRAME, DecodeSettings())
        assert sides.tolist() == SIDES
        for ours, theirs in zip(lanes, result.lanes):
            np.testing.assert_allclose(ours, theirs, atol=1e-3)
    finally:
        assert node.stop() == 0, node.output()


def test_engines_build_covers_the_installed_lane_graphs(
        lane_server: tuple[TritonServer, Path]) -> None:
    """On the Orin `engines build` builds every installed graph; the user's own plan is theirs."""
    steps = engine_steps(lane_server[1])
    assert {'laneatt_onnx32_model', 'laneatt_onnx16_model', 'laneatt_served32_input',
            'laneatt_served16_input'} <= set(steps)
    assert 'laneDetect_model' not in steps
    for step in ('laneatt_onnx16_model', 'laneatt_served16_input'):  # the frame range, too
        for config in ('config.pbtxt', 'configs/cpu.pbtxt'):
            assert frame_range_of((lane_server[1] / step / config).read_text()) == FrameRange()
