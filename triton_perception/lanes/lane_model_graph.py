"""
Served graphs of installed lane models: the uint8 frame in, all preprocessing in the graph.

The graph takes the RGB frame [H, W, 3] of any size and does what each model was trained with
(top crop, stretch or letterbox, channel order, /255, ImageNet mean/std, FP16), so that on the
Orin it all runs on the GPU inside the TensorRT engine, with no Python step before it. Outputs
leave as FP32 (onnx-tensorrt casts nothing itself), or, for segmentation, as the two compact
uint8 maps of the shipped lane graph.

For a model the user already serves in Triton (a TensorRT plan with a float input), the same
preprocessing is a small graph of its own placed in front of it (`build_input_graph`).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from onnx import helper, TensorProto

from triton_perception.graphs import (add_frame_input, check_single_input,
                                      FRAME_DIMS, FRAME_INPUT, GraphBuilder, make_model,
                                      save_graph)
from triton_perception.lanes.lane_model import LaneModel, Preprocessing

IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)
INPUT_GRAPH_OPSET = 12
ELEMENT_TYPES = {'float32': TensorProto.FLOAT, 'float16': TensorProto.FLOAT16}


def input_type_of(model: onnx.ModelProto, name: str) -> str:
    """
    Return 'float32' or 'float16', the element type of the model's input `name`.

    Raises ValueError if the input has another element type; lane models take FLOAT or FLOAT16.
    """
    tensor = next(tensor for tensor in model.graph.input if tensor.name == name)
    names = {value: key for key, value in ELEMENT_TYPES.items()}
    element = tensor.type.tensor_type.elem_type
    if element not in names:
        raise ValueError(f'input {name} is {TensorProto.DataType.Name(element)}; lane models '
                         'take FLOAT or FLOAT16')
    return names[element]


def output_shapes(model: onnx.ModelProto) -> dict[str, list[int]]:
    """Return each graph output's shape by name, -1 for a dimension without a fixed size."""
    return {tensor.name: [dim.dim_value if dim.HasField('dim_value') else -1
                          for dim in tensor.type.tensor_type.shape.dim]
            for tensor in model.graph.output}


def add_preprocessing(graph: GraphBuilder, image: str, width: int, height: int, output: str,
                      preprocessing: Preprocessing, input_type: str) -> None:
    """uint8 [H, W, 3] RGB frame `image` -> the network's [1, 3, height, width] input `output`."""
    value, _ = add_frame_input(graph, image, width, height, preprocessing.resize,
                               preprocessing.top_crop)
    if preprocessing.channel_order == 'bgr':
        value = graph.node('Gather', [value, graph.constant(np.array([2, 1, 0], np.int64),
                                                            'bgr')], axis=1)
    if preprocessing.normalize in ('unit', 'imagenet'):
        value = graph.node('Mul', [value, graph.constant(np.float32(1.0 / 255.0), 'inv255')])
    if preprocessing.normalize == 'imagenet':
        mean = np.array(IMAGENET_MEAN, np.float32).reshape(1, 3, 1, 1)
        std = np.array(IMAGENET_STD, np.float32).reshape(1, 3, 1, 1)
        if preprocessing.channel_order == 'bgr':  # the statistics follow the channels
            mean, std = mean[:, ::-1].copy(), std[:, ::-1].copy()
        value = graph.node('Div', [graph.node('Sub', [value, graph.constant(mean, 'mean')]),
                                   graph.constant(std, 'std')])
    graph.node('Cast', [value], [output], to=ELEMENT_TYPES[input_type])


def build_lane_model_graph(source: Path, destination: Path, lane_model: LaneModel) -> None:
    """Build the user's ONNX file with a uint8 input and the outputs lane_model.outputs names."""
    model = onnx.load(str(source))
    input_name, (_, _, height, width) = check_single_input(model)
    shapes = output_shapes(model)
    graph = GraphBuilder(model, 'lane_model')
    image, network_input = graph.replace_input(input_name, FRAME_INPUT, TensorProto.UINT8,
                                               FRAME_DIMS)
    add_preprocessing(graph, image, width, height, network_input, lane_model.preprocessing,
                      lane_model.input_type)
    lane_model.decode.add_outputs(graph, shapes, lane_model.outputs)
    save_graph(graph.model, destination)


def build_input_graph(destination: Path, output_name: str, output_dims: list[int],
                      preprocessing: Preprocessing, input_type: str) -> None:
    """
    Build a standalone preprocessing graph for a model already served in Triton.

    It maps the uint8 [H, W, 3] frame `image` -> `output_name` with the model's full input shape
    (with or without the batch dimension).
    """
    height, width = output_dims[-2:]
    model = make_model(helper.make_graph([], 'lane_input', [], []), INPUT_GRAPH_OPSET)
    graph = GraphBuilder(model, 'lane_input')
    image = graph.input(FRAME_INPUT, TensorProto.UINT8, FRAME_DIMS)
    batched = output_name if len(output_dims) == 4 else f'{output_name}/batched'
    add_preprocessing(graph, image, width, height, batched, preprocessing, input_type)
    if len(output_dims) == 3:
        graph.node('Squeeze', [batched], [output_name], axes=[0])
    graph.set_outputs([(output_name, ELEMENT_TYPES[input_type], output_dims)])
    save_graph(graph.model, destination)
