"""
Checks that stand in for the Orin we do not have.

1. Every operator of every served graph is in onnx-tensorrt's support table for TensorRT 8.6
   (JetPack 6.0) and 10.x (JetPack 6.1/6.2), with supported tensor types, and meets the
   table's restrictions: TopK's K a constant below 3840 (sorted), UINT8 only at network inputs
   and outputs, NonMaxSuppression on FP32/FP16, axes given as constants.
2. In the default (Orin) configs no Python-backend step consumes a tensor a GPU step produced:
   JetPack's Python backend cannot take GPU tensors ("The Python backend does not support GPU
   Tensors and Async BLS", Triton docs/user_guide/jetson.md; server issues #2876, #4772,
   #7667, #8183), so such an ensemble would load, report READY and fail every frame.
"""
from __future__ import annotations

from pathlib import Path

from google.protobuf import text_format
import numpy as np
import onnx
from onnx import TensorProto
import pytest
from tritonclient.grpc import model_config_pb2
import yaml

from conftest import REPO, shared_path
from test_frame_input import frame_input_graph
from triton_perception.graphs.build import build_graph
from triton_perception.models import manifest
from triton_perception.triton.model_config import read_config

TABLE = yaml.safe_load((REPO / 'test' / 'data' / 'tensorrt_onnx_operators.yaml').read_text())
VERSIONS = ('tensorrt_8.6', 'tensorrt_10')
TYPE_NAMES = {TensorProto.FLOAT: 'FP32', TensorProto.FLOAT16: 'FP16', TensorProto.INT32: 'INT32',
              TensorProto.INT64: 'INT64', TensorProto.BOOL: 'BOOL', TensorProto.UINT8: 'UINT8',
              TensorProto.INT8: 'INT8', TensorProto.BFLOAT16: 'BF16'}
TOPK_LIMIT = 3840
# Operators all of whose inputs are data; of every other operator only the first input is (the
# rest are indices, shapes, sizes or thresholds, which the table's types do not describe).
ELEMENTWISE = {'Add', 'Sub', 'Mul', 'Div', 'Pow', 'Min', 'Max', 'Equal', 'Less', 'Greater',
               'And', 'Concat', 'MatMul', 'PRelu', 'Where'}
REPOSITORY = REPO / 'model_repository'


@pytest.fixture(scope='module')
def served_graphs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, onnx.ModelProto]:
    """Each model step's graph as `models install` serves it, built from the shipped weights."""
    directory = tmp_path_factory.mktemp('served')
    graphs = {}
    for model in manifest():
        source = shared_path('models', model.file)
        if model.graph:
            target = directory / f'{model.name}.onnx'
            build_graph(model.graph, source, target)
            source = target
        graphs[model.name] = onnx.shape_inference.infer_shapes(onnx.load(str(source)))
    for name, path in installed_lane_graphs(directory).items():
        graphs[name] = onnx.shape_inference.infer_shapes(onnx.load(str(path)))
    graphs['frame_input'] = onnx.shape_inference.infer_shapes(onnx.load(str(
        frame_input_graph(directory / 'frame_input.onnx'))))
    return graphs


def installed_lane_graphs(directory: Path) -> dict[str, Path]:
    """
    Build the graphs `models install --lanes/--lanes-served` serves.

    One per layout and input type, with every preprocessing option that adds operators (BGR,
    mean/std, FP16, no batch).
    """
    from lane_model_fixtures import (constant_model, CURVES_FOR_GRAPHS, laneatt_rows,
                                     segmentation_output, ufld_v1_output)
    from triton_perception.lane_models.graph import build_input_graph
    from triton_perception.lane_models.install import install_lane_model
    from triton_perception.lane_models.spec import Preprocessing

    repository = directory / 'lanes'
    models = {
        'laneatt16': (constant_model(directory / 'laneatt16.onnx', {'predict_lanes': laneatt_rows(
            CURVES_FOR_GRAPHS)}, [1, 3, 360, 640], TensorProto.FLOAT16), 'proposals'),
        'ufld': (constant_model(directory / 'ufld.onnx', {'loc': ufld_v1_output(
            CURVES_FOR_GRAPHS, list(range(64, 288, 4)), 100, 4, 800)}, [1, 3, 288, 800]),
            'row-anchor'),
        'seg': (constant_model(directory / 'seg.onnx', {'heads': np.concatenate([
            segmentation_output(CURVES_FOR_GRAPHS, 640, 360)] * 2, axis=1)}, [1, 3, 360, 640]),
            'segmentation'),
    }
    graphs = {}
    for name, (path, layout) in models.items():
        install_lane_model(repository, path, name, layout, log=lambda _line: None)
        graphs[f'{name}_model'] = repository / f'{name}_model' / '1' / 'model.onnx'
    for input_type, dims in (('float16', [3, 360, 640]), ('float32', [1, 3, 360, 640])):
        graphs[f'input_{input_type}'] = directory / f'input_{input_type}.onnx'
        build_input_graph(graphs[f'input_{input_type}'], 'input', dims,
                          Preprocessing('bgr', 'imagenet'), input_type)
    return graphs


def tensor_types(model: onnx.ModelProto) -> dict[str, int]:
    types = {}
    for info in [*model.graph.input, *model.graph.output, *model.graph.value_info]:
        types[info.name] = info.type.tensor_type.elem_type
    for initializer in model.graph.initializer:
        types[initializer.name] = initializer.data_type
    for node in model.graph.node:
        if node.op_type == 'Constant':
            types[node.output[0]] = node.attribute[0].t.data_type
    return types


def allowed_types(version: str, op_type: str) -> set[str]:
    types = set(TABLE[version]['operators'][op_type]['types'])
    if version == 'tensorrt_8.6' and 'INT32' in types:
        types.add('INT64')  # 8.6 casts INT64 down to INT32 (its table's page header)
    return types


@pytest.mark.parametrize('version', VERSIONS)
def test_every_operator_is_supported_with_its_types(served_graphs: dict, version: str) -> None:
    problems = []
    for name, model in served_graphs.items():
        types = tensor_types(model)
        network_io = {tensor.name for tensor in [*model.graph.input, *model.graph.output]}
        for node in model.graph.node:
            entry = TABLE[version]['operators'].get(node.op_type)
            if entry is None or not entry['supported']:
                problems.append(f'{name}: {node.op_type} is not supported ({node.name})')
                continue
            data_inputs = list(node.input) if node.op_type in ELEMENTWISE else list(node.input[:1])
            if node.op_type == 'NonMaxSuppression':
                data_inputs = list(node.input[:2])  # boxes, scores
            for tensor in [*data_inputs, *node.output]:
                if not tensor or tensor not in types:
                    continue
                if tensor in node.output and TYPE_NAMES.get(types[tensor]) != 'UINT8':
                    continue  # outputs: only where UINT8 appears matters
                kind = TYPE_NAMES.get(types[tensor], str(types[tensor]))
                if kind == 'UINT8':
                    if tensor not in network_io or node.op_type != 'Cast':
                        problems.append(f'{name}: UINT8 tensor {tensor} inside the network '
                                        f'({node.op_type}); TensorRT takes UINT8 only at '
                                        'network inputs and outputs (cast at once)')
                elif node.op_type in ('Shape', 'Constant') or tensor in {
                        init.name for init in model.graph.initializer}:
                    continue  # shape computations and constants are folded at build time
                elif kind not in allowed_types(version, node.op_type):
                    problems.append(f'{name}: {node.op_type} on {kind} ({tensor})')
    assert problems == [], '\n'.join(sorted(set(problems)))


def test_restrictions_of_the_table_are_met(served_graphs: dict) -> None:
    problems = []
    for name, model in served_graphs.items():
        constants = {init.name: onnx.numpy_helper.to_array(init)
                     for init in model.graph.initializer}
        constants.update({node.output[0]: onnx.numpy_helper.to_array(node.attribute[0].t)
                          for node in model.graph.node if node.op_type == 'Constant'})
        types = tensor_types(model)
        for node in model.graph.node:
            attributes = {attribute.name: onnx.helper.get_attribute_value(attribute)
                          for attribute in node.attribute}
            if node.op_type == 'TopK':
                k = constants.get(node.input[1])
                if k is None:
                    problems.append(f'{name}: TopK {node.name} has a K computed at run time')
                elif not int(k.reshape(-1)[0]) < TOPK_LIMIT:
                    problems.append(f'{name}: TopK {node.name} K={int(k.reshape(-1)[0])}')
                if attributes.get('sorted', 1) != 1:
                    problems.append(f'{name}: TopK {node.name} is not sorted')
            if node.op_type == 'NonMaxSuppression':
                for tensor in node.input[:2]:
                    if TYPE_NAMES.get(types.get(tensor)) not in ('FP32', 'FP16'):
                        problems.append(f'{name}: NMS input {tensor} is not FP32/FP16')
            if node.op_type in ('Slice',) and len(node.input) > 3 and node.input[3] not in \
                    constants:
                problems.append(f'{name}: {node.op_type} {node.name} axes are not constant')
    assert problems == [], '\n'.join(problems)


def test_the_served_detection_graph_keeps_nms_small(served_graphs: dict) -> None:
    """The NMS candidates come from a TopK, never the whole 25,200-row head."""
    model = served_graphs['yolov5n']
    assert any(node.op_type == 'NonMaxSuppression' for node in model.graph.node)
    assert any(node.op_type == 'TopK' for node in model.graph.node)


# --- the ensembles' structure ---------------------------------------------------------------

def runs_on_gpu(config: model_config_pb2.ModelConfig) -> bool:
    return config.platform == 'tensorrt_plan' or any(
        group.kind == model_config_pb2.ModelInstanceGroup.KIND_GPU
        for group in config.instance_group)


def is_python(config: model_config_pb2.ModelConfig) -> bool:
    return config.backend == 'python'


def gpu_outputs_read_by_python(ensemble: model_config_pb2.ModelConfig,
                               repository: Path = REPOSITORY) -> list[str]:
    produced_on_gpu: dict[str, str] = {}
    problems = []
    for step in ensemble.ensemble_scheduling.step:
        config = read_config(repository / step.model_name / 'config.pbtxt')
        if is_python(config):
            problems += [f'{step.model_name} reads {tensor} from {produced_on_gpu[tensor]}'
                         for tensor in step.input_map.values() if tensor in produced_on_gpu]
        if runs_on_gpu(config):
            produced_on_gpu.update({tensor: step.model_name
                                    for tensor in step.output_map.values()})
    return problems


@pytest.mark.parametrize('ensemble', ['yolov5', 'lane_detection'])
def test_no_python_step_consumes_a_gpu_output(ensemble: str) -> None:
    config = read_config(REPOSITORY / ensemble / 'config.pbtxt')
    assert config.platform == 'ensemble'
    assert gpu_outputs_read_by_python(config) == []


def test_installed_lane_models_end_on_the_gpu(tmp_path: Path) -> None:
    installed_lane_graphs(tmp_path)
    for name in ('laneatt16', 'ufld', 'seg'):
        config = read_config(tmp_path / 'lanes' / name / 'config.pbtxt')
        assert gpu_outputs_read_by_python(config, tmp_path / 'lanes') == []
        assert runs_on_gpu(read_config(tmp_path / 'lanes' / f'{name}_model' / 'config.pbtxt'))


def test_the_structural_check_sees_the_jetson_failure() -> None:
    """Its positive control: today's-style ensemble (Python NMS after the TensorRT model)."""
    broken = text_format.Parse("""
        name: "broken" platform: "ensemble"
        ensemble_scheduling { step [
          { model_name: "yolov5_model" model_version: -1
            output_map { key: "detections" value: "rows" } },
          { model_name: "yolov5_preprocess" model_version: -1
            input_map { key: "IMAGE" value: "rows" } } ] }""", model_config_pb2.ModelConfig())
    assert gpu_outputs_read_by_python(broken) == ['yolov5_preprocess reads rows from yolov5_model']
