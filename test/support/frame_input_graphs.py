"""
A graph that takes the frame itself and gives every kind of frame input as its outputs.

The letterbox (canvas and letterbox vector), the plain resize, the plain resize below a top crop of
TOP_CROP and the cropped letterbox, each through triton_perception.graphs.frame_input.
"""
from __future__ import annotations

from pathlib import Path

from onnx import helper, TensorProto

from triton_perception.graphs.frame_input import add_frame_input
from triton_perception.graphs.graph_editing import GraphBuilder, save_graph
from triton_perception.graphs.onnx_target import make_model

TOP_CROP = 0.4


def frame_input_graph(destination: Path) -> Path:
    """Build a graph with the letterbox and both resizes of the frame as its outputs."""
    model = make_model(helper.make_graph([], 'frame_input', [], []), 12)
    graph = GraphBuilder(model, 'frame')
    image = graph.input('IMAGE', TensorProto.UINT8, ['H', 'W', 3])
    canvas, vector = add_frame_input(graph, image, 640, 640, 'letterbox')
    assert vector is not None
    outputs = {'canvas': canvas, 'letterbox': vector,
               'stretched': add_frame_input(graph, image, 640, 360)[0],
               'cropped': add_frame_input(graph, image, 640, 360, 'stretch', TOP_CROP)[0],
               'cropped_letterbox': add_frame_input(graph, image, 640, 360, 'letterbox',
                                                    TOP_CROP)[0]}
    for name, tensor in outputs.items():
        graph.node('Identity', [tensor], [name])
    graph.set_outputs([('canvas', TensorProto.FLOAT, [1, 3, 640, 640]),
                       ('letterbox', TensorProto.FLOAT, [6]),
                       ('stretched', TensorProto.FLOAT, [1, 3, 360, 640]),
                       ('cropped', TensorProto.FLOAT, [1, 3, 360, 640]),
                       ('cropped_letterbox', TensorProto.FLOAT, [1, 3, 360, 640])])
    save_graph(graph.model, destination)
    return destination
