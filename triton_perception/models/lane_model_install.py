"""
Bring your own lane model: `models install --lanes FILE.onnx` or `--lanes-served MODEL`.

From an ONNX file, writes into the model repository (as `--detector` does):
  NAME/             the ensemble (IMAGE in, the layout's outputs out) and lane_model.json
  NAME_model/       the served graph: the uint8 frame in, the model's own preprocessing (crop,
                    resize, channel order, normalisation), the network (TensorRT after
                    `engines build` on the Orin, onnxruntime in the CPU profile)
From a model already served in the repository (e.g. a TensorRT `laneDetect_model` with a float
input), NAME_model is replaced by NAME_input, a small preprocessing graph producing that
model's input (FP32 or FP16, as its config says), followed by the served model itself. No
Python step runs in either ensemble's request path on the Orin.
"""
from __future__ import annotations

from pathlib import Path
import shutil
from typing import Callable

from google.protobuf import text_format
import onnx
from tritonclient.grpc import model_config_pb2 as pb

from triton_perception.frames import DEFAULT_MAX, DEFAULT_MIN
from triton_perception.graphs import check_single_input, FRAME_INPUT
from triton_perception.lanes import (build_input_graph, build_lane_model_graph, input_type_of,
                                     LaneConfigError, LaneModel, output_shapes, preprocessing_from,
                                     read_lane_config, resolve_layout, SHIPPED_LANES,
                                     write_lane_record)
from triton_perception.models.detectors import NAME_PATTERN
from triton_perception.serving import link_step_code, read_config
from triton_perception.system import sha256_of

RUNNER_STEP = 'yolov5_model'  # the CPU profile's ONNX runner, linked, not copied
RESERVED = ('yolov5', SHIPPED_LANES)
TRITON_TYPES = {'float32': pb.TYPE_FP32, 'float16': pb.TYPE_FP16}
CPU_INSTANCE = pb.ModelInstanceGroup(count=1, kind=pb.ModelInstanceGroup.KIND_CPU)


def check_name(name: str) -> None:
    """Refuse a name Triton or the package cannot take (the detectors' rule, one definition)."""
    if not NAME_PATTERN.fullmatch(name) or name in RESERVED:
        raise LaneConfigError(f"lane model name {name!r}: use letters, digits, '_' and '-', "
                              f"starting with a letter, and not {' or '.join(RESERVED)}")


def install_lane_model(repository: Path, onnx_path: Path, name: str, layout: str,
                       lane_config: Path | None = None,
                       log: Callable[[str], None] = print) -> LaneModel:
    """Check the file against the layout, build the served graph, write the three steps."""
    check_name(name)
    if not onnx_path.is_file():
        raise LaneConfigError(f'lane model file {onnx_path} does not exist')
    config = read_lane_config(lane_config)
    model = onnx.load(str(onnx_path))
    try:
        input_name, (_, channels, height, width) = check_single_input(model)
        input_type = input_type_of(model, input_name)
    except ValueError as error:
        raise LaneConfigError(f'{onnx_path}: {error}') from None
    if channels != 3:
        raise LaneConfigError(f'{onnx_path}: input {input_name} has {channels} channels, not 3')
    outputs, decode, defaults = resolve_layout(layout, output_shapes(model), height,
                                               dict(config.get('decode', {})))
    lane_model = LaneModel(name, width, height, input_type, outputs, decode,
                           preprocessing_from(config, defaults), str(onnx_path),
                           sha256_of(onnx_path))
    log(f'{name}: building the {layout} lane graph from {onnx_path} ({width}x{height} '
        f'{input_type} input, outputs {", ".join(outputs)})')
    graph_path = repository / f'{name}_model' / '1' / 'model.onnx'
    build_lane_model_graph(onnx_path, graph_path, lane_model)
    served = onnx.load(str(graph_path))
    step_outputs = [(tensor.name, _dims(tensor)) for tensor in served.graph.output]
    _write(repository / f'{name}_model' / 'config.pbtxt', _model_step(
        f'{name}_model', step_outputs, tensorrt=True))
    _write(repository / f'{name}_model' / 'configs' / 'cpu.pbtxt', _model_step(
        f'{name}_model', step_outputs, tensorrt=False))
    link_step_code(repository, RUNNER_STEP, f'{name}_model')
    ensemble_outputs = [(ensemble, dims) for ensemble, (_, dims) in zip(outputs, step_outputs)]
    _write_ensemble(repository, lane_model, [(f'{name}_model', {FRAME_INPUT: 'IMAGE'}, dict(zip(
        [step for step, _ in step_outputs], outputs)))], ensemble_outputs)
    log(f'{name}: installed ({repository / name}); serve it with lane_node model_name:={name} '
        '(run `triton-perception engines build` on the Orin)')
    return lane_model


def install_served_lane_model(repository: Path, served: str, name: str, layout: str,
                              lane_config: Path | None = None,
                              log: Callable[[str], None] = print) -> LaneModel:
    """Return an ensemble around a model the repository already serves (no ONNX file needed)."""
    check_name(name)
    config_path = repository / served / 'config.pbtxt'
    if not config_path.is_file():
        raise LaneConfigError(f'no served model {served!r}: {config_path} does not exist (put '
                              'the model in the repository first, with its config.pbtxt)')
    served_config = read_config(config_path)
    if len(served_config.input) != 1:
        raise LaneConfigError(f'{served}: expected one image input, its config has '
                              f'{[tensor.name for tensor in served_config.input]}')
    tensor = served_config.input[0]
    types = {value: key for key, value in TRITON_TYPES.items()}
    batch = [1] if served_config.max_batch_size > 0 else []
    full_input = batch + list(tensor.dims)
    if tensor.data_type not in types or len(full_input) != 4 or full_input[:2] != [1, 3] or min(
            full_input) < 1:
        raise LaneConfigError(
            f'{served}: input {tensor.name} is {pb.DataType.Name(tensor.data_type)} '
            f'{list(tensor.dims)} (max_batch_size {served_config.max_batch_size}); expected '
            'TYPE_FP32 or TYPE_FP16 [1, 3, H, W] or [3, H, W] with a static size')
    height, width = full_input[2:]
    shapes = {output.name: batch + list(output.dims) for output in served_config.output}
    config = read_lane_config(lane_config)
    outputs, decode, defaults = resolve_layout(layout, shapes, height,
                                               dict(config.get('decode', {})))
    if not decode.wraps_served:
        raise LaneConfigError(f'a served {layout} model needs its ONNX file (--lanes): its '
                              'compact maps are built into the served graph')
    lane_model = LaneModel(name, width, height, types[tensor.data_type], outputs, decode,
                           preprocessing_from(config, defaults), f'triton:{served}')
    step = f'{name}_input'
    build_input_graph(repository / step / '1' / 'model.onnx', tensor.name, list(tensor.dims)
                      if not batch else full_input, lane_model.preprocessing,
                      lane_model.input_type)
    produced = [(tensor.name, full_input)]
    _write(repository / step / 'config.pbtxt', _model_step(step, produced, True,
                                                           TRITON_TYPES[lane_model.input_type]))
    _write(repository / step / 'configs' / 'cpu.pbtxt', _model_step(
        step, produced, False, TRITON_TYPES[lane_model.input_type]))
    link_step_code(repository, RUNNER_STEP, step)
    _write_ensemble(repository, lane_model, [
        (step, {FRAME_INPUT: 'IMAGE'}, {tensor.name: f'{name}_input_tensor'}),
        (served, {tensor.name: f'{name}_input_tensor'}, {output: output for output in outputs})],
        [(output, shapes[output]) for output in outputs])
    log(f'{name}: installed around the served model {served} ({width}x{height} '
        f'{lane_model.input_type} input); serve it with lane_node model_name:={name}')
    return lane_model


def _dims(tensor: onnx.ValueInfoProto) -> list[int]:
    return [dim.dim_value if dim.HasField('dim_value') else -1
            for dim in tensor.type.tensor_type.shape.dim]


def _tensor(name: str, data_type: int, dims: list[int]) -> pb.ModelInput:
    return pb.ModelInput(name=name, data_type=data_type, dims=dims)


def _model_step(name: str, outputs: list[tuple[str, list[int]]], tensorrt: bool,
                output_type: int = pb.TYPE_FP32) -> pb.ModelConfig:
    """
    Return a served graph's step: the uint8 frame in.

    A TensorRT plan on the GPU (Orin) or onnxruntime in the Python backend (configs/cpu.pbtxt), with
    the same tensors and frame range.
    """
    config = pb.ModelConfig(name=name, max_batch_size=0)
    config.input.append(_tensor(FRAME_INPUT, pb.TYPE_UINT8, [-1, -1, 3]))
    for key, value in (('min_frame', DEFAULT_MIN), ('max_frame', DEFAULT_MAX)):
        config.parameters[key].string_value = value
    for output, dims in outputs:
        data_type = pb.TYPE_UINT8 if output in ('lane_probability', 'drivable_margin') else \
            output_type
        config.output.append(pb.ModelOutput(name=output, data_type=data_type, dims=dims))
    if tensorrt:
        config.platform = 'tensorrt_plan'
        config.default_model_filename = 'model.plan'
        config.instance_group.append(pb.ModelInstanceGroup(
            count=1, kind=pb.ModelInstanceGroup.KIND_GPU))
        return config
    config.backend = 'python'
    for key, value in (('onnx_file', 'model.onnx'), ('intra_op_threads', '2'),
                       ('inter_op_threads', '1'), ('allow_spinning', 'false')):
        config.parameters[key].string_value = value
    config.instance_group.append(CPU_INSTANCE)
    return config


def _write_ensemble(repository: Path, lane_model: LaneModel,
                    steps: list[tuple[str, dict[str, str], dict[str, str]]],
                    outputs: list[tuple[str, list[int]]]) -> None:
    """NAME, the ensemble of `steps` (the first takes the frame), and its lane_model.json."""
    name = lane_model.name
    ensemble = pb.ModelConfig(name=name, platform='ensemble', max_batch_size=0)
    ensemble.input.append(_tensor('IMAGE', pb.TYPE_UINT8, [-1, -1, 3]))
    for output, dims in outputs:
        data_type = pb.TYPE_UINT8 if lane_model.uint8_outputs else pb.TYPE_FP32
        ensemble.output.append(pb.ModelOutput(name=output, data_type=data_type, dims=dims))
    scheduling = ensemble.ensemble_scheduling
    for step_name, input_map, output_map in steps:
        step = scheduling.step.add(model_name=step_name, model_version=-1)
        step.input_map.update(input_map)
        step.output_map.update(output_map)
    _write(repository / name / 'config.pbtxt', ensemble)
    (repository / name / '1').mkdir(parents=True, exist_ok=True)
    write_lane_record(repository, lane_model)


def _write(path: Path, config: pb.ModelConfig) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    header = ('# Written by `triton-perception models install` '
              '(triton_perception.models.lane_model_install).\n')
    path.write_text(header + text_format.MessageToString(config), encoding='utf-8')


def remove_steps(repository: Path, name: str) -> None:
    """Undo a partial install (an error after some steps were written)."""
    for step in (name, f'{name}_model', f'{name}_input'):
        shutil.rmtree(repository / step, ignore_errors=True)
