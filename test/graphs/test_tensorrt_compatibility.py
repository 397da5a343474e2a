"""
Checks that stand in for the Orin we do not have.

1. Every operator of every served graph is in onnx-tensorrt's support table for TensorRT 8.6
   (JetPack 6.0) and 10.x (JetPack 6.1/6.2), with supported tensor types, and meets the
   table's restrictions: TopK's K a constant below 3840 (sorted), UINT8 only at network inputs
   and outputs, NonMaxSuppression on FP32/FP16, axes given as constants.
2. The frame input's rules (onnx-tensorrt operators.md, 8.6-GA and 10.1-GA): Resize linear,
   half_pixel, no antialias; no UINT8 into Resize or Pad; shape tensors computed with integers
   only (float shape arithmetic fails inside TensorRT, NVIDIA forum 197588); Pad and Slice axes
   as initializers.
3. The configs: no `optional: true` input in a TensorRT config (tensorrt_backend refuses it,
   server #6523); every graph input and output has the type its config says (onnx-tensorrt no
   longer casts INT64 to INT32 from 9.0 on).
4. No step of a default (Orin) ensemble uses the Python backend: on JetPack it runs on the CPU
   in a separate stub process, cannot take GPU tensors ("The Python backend does not support GPU
   Tensors and Async BLS", Triton docs/user_guide/jetson.md) and costs milliseconds per request.
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

from support.checkout import REPO, shared_path
from support.frame_input_graphs import frame_input_graph
from triton_perception.graphs import build_health_graph
from triton_perception.graphs.build import build_graph
from triton_perception.graphs.onnx_target import make_model
from triton_perception.health import GRAPH_OPTIONS
from triton_perception.models.shipped_models import manifest
from triton_perception.serving.server.model_config import read_config

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
HEALTH_GRAPH = 'health_statistics'  # the camera health graph (graphs/health_graph.py)


@pytest.fixture(scope='module')
def graph_directory(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Return a directory for the module's served graphs."""
    return tmp_path_factory.mktemp('served')


@pytest.fixture(scope='module')
def served_graphs(graph_directory: Path) -> dict[str, onnx.ModelProto]:
    """Each model step's graph as `models install` serves it, built from the shipped weights."""
    directory = graph_directory
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
    build_health_graph(directory / 'health.onnx', **GRAPH_OPTIONS)
    graphs[HEALTH_GRAPH] = onnx.shape_inference.infer_shapes(onnx.load(str(
        directory / 'health.onnx')))
    return graphs


def installed_lane_graphs(directory: Path) -> dict[str, Path]:
    """
    Build the graphs `models install --lanes/--lanes-served` serves.

    One per layout and input type, with every preprocessing option that adds operators (BGR,
    mean/std, FP16, no batch).
    """
    from support.lane_model_fixtures import (constant_model, CURVES_FOR_GRAPHS, laneatt_rows,
                                             segmentation_output, ufld_v1_output)
    from triton_perception.lanes.lane_model_graph import build_input_graph
    from triton_perception.models.lane_model_install import install_lane_model
    from triton_perception.lanes.lane_model import Preprocessing

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
    """
    Return the element type of every tensor of `model` whose type is known.

    Inputs, outputs, inferred values, initializers and Constant outputs.
    """
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
    """
    Return the tensor types the support table allows `op_type` in `version`.

    TensorRT 8.6 takes INT64 where it takes INT32, casting it down.
    """
    types = set(TABLE[version]['operators'][op_type]['types'])
    if version == 'tensorrt_8.6' and 'INT32' in types:
        types.add('INT64')  # 8.6 casts INT64 down to INT32 (its table's page header)
    return types


@pytest.mark.parametrize('version', VERSIONS)
def test_every_operator_is_supported_with_its_types(served_graphs: dict, version: str) -> None:
    """
    Every operator of every served graph is in the support table, with types it allows.

    UINT8 appears only at network inputs and outputs, cast at once.
    """
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
    """
    The table's restrictions hold in every served graph.

    TopK has a constant K below the limit and sorts, NMS takes FP32 or FP16, Slice axes are
    constant.
    """
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


# --- the frame input's rules ---------------------------------------------------------------

SHAPE_INPUTS = {'Resize': (3,), 'Reshape': (1,), 'Pad': (1,), 'Slice': (1, 2, 3, 4),
                'Expand': (1,), 'Tile': (1,), 'ConstantOfShape': (0,), 'Unsqueeze': (1,),
                'Squeeze': (1,)}
INTEGER = (TensorProto.INT64, TensorProto.INT32, TensorProto.BOOL)


def dynamic_tensors(model: onnx.ModelProto) -> set[str]:
    """Tensors whose shape shape inference left open: what depends on the frame's size."""
    return {info.name for info in [*model.graph.input, *model.graph.value_info]
            if any(not dim.HasField('dim_value') for dim in info.type.tensor_type.shape.dim)}


def float_shape_arithmetic(model: onnx.ModelProto) -> list[str]:
    """
    Non-integer tensors on the way from a frame-sized tensor's Shape to any shape input.

    Walks back from each shape input through its producers to the Shape nodes. Shape arithmetic
    on static shapes (the upstream network's own, e.g. YOLOv5's Upsample scales) folds to
    constants when TensorRT builds, so only walks that reach the Shape of a dynamic tensor count.
    """
    types = tensor_types(model)
    dynamic = dynamic_tensors(model)
    producers = {output: node for node in model.graph.node for output in node.output}
    problems: set[str] = set()
    for node in model.graph.node:
        for index in SHAPE_INPUTS.get(node.op_type, ()):
            if index >= len(node.input) or not node.input[index]:
                continue
            floats, reaches_frame, pending, seen = [], False, [node.input[index]], set()
            while pending:
                tensor = pending.pop()
                if not tensor or tensor in seen:
                    continue
                seen.add(tensor)
                if types.get(tensor) not in INTEGER:
                    floats.append(f'{tensor} ({TYPE_NAMES.get(types.get(tensor))})')
                producer = producers.get(tensor)
                if producer is None:
                    continue
                if producer.op_type == 'Shape':
                    reaches_frame |= producer.input[0] in dynamic
                else:
                    pending.extend(producer.input)
            if reaches_frame:
                problems.update(floats)
    return sorted(problems)


def test_the_frame_input_rules_are_met(served_graphs: dict) -> None:
    """
    The frame input follows TensorRT's rules in every served graph.

    Resize and Pad take FP32, the frame's Resize is linear half_pixel without antialias, axes
    are initializers, shape arithmetic stays in integers, and every graph resizes the frame
    itself.
    """
    problems = []
    for name, model in served_graphs.items():
        types = tensor_types(model)
        dynamic = dynamic_tensors(model)
        constants = {init.name for init in model.graph.initializer} | {
            node.output[0] for node in model.graph.node if node.op_type == 'Constant'}
        for node in model.graph.node:
            attributes = {attribute.name: onnx.helper.get_attribute_value(attribute)
                          for attribute in node.attribute}
            if node.op_type in ('Resize', 'Pad') and types.get(node.input[0]) != \
                    TensorProto.FLOAT:
                problems.append(f'{name}: {node.op_type} {node.name} takes '
                                f'{TYPE_NAMES.get(types.get(node.input[0]))}, not FP32')
            if node.op_type == 'Resize' and attributes.get('antialias', 0):
                problems.append(f'{name}: Resize {node.name} antialiases')
            if node.op_type == 'Resize' and node.input[0] in dynamic and (
                    attributes.get('mode') != b'linear' or attributes.get(
                        'coordinate_transformation_mode') != b'half_pixel'):
                problems.append(f'{name}: the frame Resize {node.name} is not linear '
                                f'half_pixel: {attributes}')
            axes_input = {'Pad': 3, 'Slice': 3}.get(node.op_type)
            if axes_input is not None and len(node.input) > axes_input and node.input[
                    axes_input] and node.input[axes_input] not in constants:
                problems.append(f'{name}: {node.op_type} {node.name} axes are no initializer')
        problems += [f'{name}: float shape arithmetic: {tensor}'
                     for tensor in float_shape_arithmetic(model)]
    assert problems == [], '\n'.join(problems)
    frame_resizes = {name for name, model in served_graphs.items() for node in model.graph.node
                     if node.op_type == 'Resize' and node.input[0] in dynamic_tensors(model)}
    # Every served graph takes the frame itself; the health graph reads it by a strided Slice.
    assert frame_resizes == set(served_graphs) - {HEALTH_GRAPH}


def test_the_shape_check_sees_float_shape_arithmetic() -> None:
    """Its positive control: a Resize whose sizes went through a float Div."""
    graph = onnx.helper.make_graph([
        onnx.helper.make_node('Shape', ['x'], ['shape']),
        onnx.helper.make_node('Cast', ['shape'], ['shape_f'], to=TensorProto.FLOAT),
        onnx.helper.make_node('Div', ['shape_f', 'two'], ['half_f']),
        onnx.helper.make_node('Cast', ['half_f'], ['half'], to=TensorProto.INT64),
        onnx.helper.make_node('Resize', ['x', '', '', 'half'], ['y'], mode='linear')],
        'float_shapes', [onnx.helper.make_tensor_value_info('x', TensorProto.FLOAT,
                                                            [1, 3, 'height', 'width'])],
        [onnx.helper.make_tensor_value_info('y', TensorProto.FLOAT, None)],
        [onnx.numpy_helper.from_array(np.array(2.0, np.float32), 'two')])
    model = onnx.shape_inference.infer_shapes(make_model(graph, 12))
    assert float_shape_arithmetic(model) == ['half_f (FP32)', 'shape_f (FP32)', 'two (FP32)']


# --- the configs ---------------------------------------------------------------------------

TRITON_TO_ONNX = {model_config_pb2.TYPE_FP32: TensorProto.FLOAT,
                  model_config_pb2.TYPE_FP16: TensorProto.FLOAT16,
                  model_config_pb2.TYPE_UINT8: TensorProto.UINT8,
                  model_config_pb2.TYPE_INT32: TensorProto.INT32,
                  model_config_pb2.TYPE_INT64: TensorProto.INT64}


def engine_configs(graph_directory: Path) -> list[tuple[Path, Path]]:
    """(config.pbtxt, served graph) of every TensorRT step, shipped and installed."""
    pairs = [(REPOSITORY / model.install_as.split('/')[0] / 'config.pbtxt',
              graph_directory / f'{model.name}.onnx') for model in manifest() if model.graph]
    installed = graph_directory / 'lanes'
    pairs += [(config, config.parent / '1' / 'model.onnx')
              for config in sorted(installed.glob('*/config.pbtxt'))
              if (config.parent / '1' / 'model.onnx').is_file()]
    return pairs


def test_engine_configs_match_their_graphs(served_graphs: dict, graph_directory: Path) -> None:
    """No optional input in a TensorRT config; each tensor's type and rank as the graph's."""
    problems, checked = [], 0
    for config_path, graph_path in engine_configs(graph_directory):
        config = read_config(config_path)
        assert config.platform == 'tensorrt_plan', config_path
        graph = onnx.load(str(graph_path)).graph
        tensors = {tensor.name: tensor.type.tensor_type for tensor in [*graph.input,
                                                                       *graph.output]}
        for tensor in [*config.input, *config.output]:
            if getattr(tensor, 'optional', False):
                problems.append(f'{config_path}: input {tensor.name} is optional')
            if tensor.name not in tensors:
                problems.append(f'{config_path}: {tensor.name} is not in {graph_path.name}')
                continue
            graph_type = tensors[tensor.name]
            if TRITON_TO_ONNX.get(tensor.data_type) != graph_type.elem_type:
                problems.append(f'{config_path}: {tensor.name} is '
                                f'{model_config_pb2.DataType.Name(tensor.data_type)} in the '
                                f'config, {TensorProto.DataType.Name(graph_type.elem_type)} in '
                                'the graph')
            if len(tensor.dims) != len(graph_type.shape.dim):
                problems.append(f'{config_path}: {tensor.name} has rank {len(tensor.dims)}, '
                                f'{len(graph_type.shape.dim)} in the graph')
        checked += 1
    assert problems == [], '\n'.join(problems)
    assert checked >= 5, checked  # both shipped steps and the installed lane models


# --- the ensembles' structure ---------------------------------------------------------------

def python_steps(ensemble: model_config_pb2.ModelConfig,
                 repository: Path = REPOSITORY) -> list[str]:
    """Return the steps of an ensemble whose default (Orin) config uses the Python backend."""
    return [step.model_name for step in ensemble.ensemble_scheduling.step
            if read_config(repository / step.model_name / 'config.pbtxt').backend == 'python']


@pytest.mark.parametrize('ensemble', ['yolov5', 'lane_detection'])
def test_no_default_ensemble_step_uses_the_python_backend(ensemble: str) -> None:
    """Each default ensemble has one model step, the frame in, and no Python-backend step."""
    config = read_config(REPOSITORY / ensemble / 'config.pbtxt')
    assert config.platform == 'ensemble'
    assert python_steps(config) == []
    assert len(config.ensemble_scheduling.step) == 1  # one model step, the frame in


def test_installed_models_have_no_python_step(served_graphs: dict, graph_directory: Path) -> None:
    """Installed lane models serve through TensorRT steps only, with no Python-backend step."""
    repository = graph_directory / 'lanes'  # served_graphs installed them
    for name in ('laneatt16', 'ufld', 'seg'):
        config = read_config(repository / name / 'config.pbtxt')
        assert python_steps(config, repository) == []
        assert read_config(repository / f'{name}_model' / 'config.pbtxt').platform == \
            'tensorrt_plan'


def test_the_structural_check_sees_a_python_step(tmp_path: Path) -> None:
    """Its positive control: an ensemble with a Python preprocessing step before the model."""
    (tmp_path / 'resize').mkdir()
    (tmp_path / 'resize' / 'config.pbtxt').write_text('name: "resize" backend: "python"')
    (tmp_path / 'yolov5_model').mkdir()
    (tmp_path / 'yolov5_model' / 'config.pbtxt').write_text(
        (REPOSITORY / 'yolov5_model' / 'config.pbtxt').read_text())
    broken = text_format.Parse("""
        name: "broken" platform: "ensemble"
        ensemble_scheduling { step [
          { model_name: "resize" model_version: -1 output_map { key: "x" value: "x" } },
          { model_name: "yolov5_model" model_version: -1 input_map { key: "image" value: "x" } }
        ] }""", model_config_pb2.ModelConfig())
    assert python_steps(broken, tmp_path) == ['resize']
