"""
Constant graphs in the served contracts, so that a bench measures the nodes and not the models.

The glue bench (`bench --glue`) asks what the nodes themselves cost per frame. With the real
graphs onnxruntime takes tens of ms per frame on this CPU and its variance swamps the nodes'
few ms, so here each model step's model.onnx is replaced by a graph with the same inputs and
outputs (names, types, shapes) that returns fixed results: a handful of car-sized detections
and a lane mask with two lanes and a drivable area between them. The nodes then decode and
publish real content (boxes, lane geometry, the drivable image) while Triton's share shrinks
to its transport and the Python backend's copies. The graphs read the frame's shape, so a
frame still has to arrive with the contract's type and rank, but no pixel is computed on.
"""
from __future__ import annotations

from pathlib import Path
import shutil

import cv2
import numpy as np
from numpy.typing import NDArray
import onnx
from onnx import helper, numpy_helper, TensorProto

from triton_perception.graphs import add_run_outputs, GraphBuilder, make_model
from triton_perception.models import HEALTH_GRAPH_FILE

DETECTION_STEP = 'yolov5_model'
LANE_STEP = 'lane_model'
MAP_SHAPE = (360, 640)  # the lane_detection contract's maps, rows x columns
DETECTION_ROWS = 300    # the yolov5 contract's DETECTIONS rows
# Car-sized boxes in the pixels of a 960x540 frame: x1, y1, x2, y2, score, COCO class (2 car,
# 7 truck, 0 person). A highway frame shows about this many.
FIXED_DETECTIONS = np.array([
    [520, 300, 600, 360, 0.91, 2], [610, 310, 700, 380, 0.88, 2], [300, 320, 380, 370, 0.84, 2],
    [700, 290, 760, 330, 0.71, 7], [450, 305, 490, 335, 0.66, 2], [820, 330, 900, 400, 0.58, 2],
    [150, 300, 175, 360, 0.52, 0], [560, 280, 590, 300, 0.47, 2]], np.float32)
LANE_ON = 230           # lane_probability on the lane mask (>= 128 there)
DRIVABLE_ON = 192       # drivable_margin inside the drivable area (> 128 there)
DRIVABLE_OFF = 64
OPSET = 12


def _model(nodes: list[onnx.NodeProto], inputs: list[onnx.ValueInfoProto],
           outputs: list[onnx.ValueInfoProto], initializers: list[onnx.TensorProto],
           name: str) -> onnx.ModelProto:
    """Return a checked opset-12 model (as the served graphs' builder writes them)."""
    model = make_model(helper.make_graph(nodes, name, inputs, outputs, initializers), OPSET)
    onnx.checker.check_model(model)
    return model


def _frame_input() -> onnx.ValueInfoProto:
    """Return the served graphs' frame input: uint8 [height, width, 3], sizes per request."""
    return helper.make_tensor_value_info('image', TensorProto.UINT8, ['height', 'width', 3])


def _zero_from_frame(nodes: list[onnx.NodeProto], initializers: list[onnx.TensorProto]) -> str:
    """
    Add nodes giving a float 0 computed from the frame's shape, and return its name.

    Outputs built as constant + this zero depend on the frame input, so no runtime can fold
    the graph into one without a frame; reading the shape costs nothing per pixel.
    """
    initializers.append(numpy_helper.from_array(np.array(0.0, np.float32), 'zero'))
    nodes += [helper.make_node('Shape', ['image'], ['frame_shape']),
              helper.make_node('Cast', ['frame_shape'], ['frame_shape_f'], to=TensorProto.FLOAT),
              helper.make_node('ReduceMin', ['frame_shape_f'], ['frame_min'], keepdims=0),
              helper.make_node('Mul', ['frame_min', 'zero'], ['frame_zero'])]
    return 'frame_zero'


def detection_graph() -> onnx.ModelProto:
    """
    Return yolov5_model's contract with fixed detections.

    DETECTIONS rows are FIXED_DETECTIONS, then zeros; NUM_DETECTIONS is their count, capped by
    the request's max_detections as the real graph caps it. The thresholds are inputs of the
    contract and are accepted; the scores are fixed, so they filter nothing.
    """
    rows = np.zeros((DETECTION_ROWS, 6), np.float32)
    rows[:len(FIXED_DETECTIONS)] = FIXED_DETECTIONS
    nodes: list[onnx.NodeProto] = []
    initializers = [numpy_helper.from_array(rows, 'fixed_rows'),
                    numpy_helper.from_array(np.array([len(FIXED_DETECTIONS)], np.int32),
                                            'fixed_count')]
    zero = _zero_from_frame(nodes, initializers)
    nodes += [helper.make_node('Add', ['fixed_rows', zero], ['detections']),
              helper.make_node('Min', ['fixed_count', 'max_detections'], ['capped_count']),
              helper.make_node('Max', ['capped_count', 'no_count'], ['num_detections'])]
    initializers.append(numpy_helper.from_array(np.array([0], np.int32), 'no_count'))
    inputs = [_frame_input(),
              helper.make_tensor_value_info('score_threshold', TensorProto.FLOAT, [1]),
              helper.make_tensor_value_info('iou_threshold', TensorProto.FLOAT, [1]),
              helper.make_tensor_value_info('max_detections', TensorProto.INT32, [1])]
    outputs = [helper.make_tensor_value_info('detections', TensorProto.FLOAT,
                                             [DETECTION_ROWS, 6]),
               helper.make_tensor_value_info('num_detections', TensorProto.INT32, [1])]
    return _model(nodes, inputs, outputs, initializers, 'constant_detections')


def lane_maps() -> tuple[NDArray[np.uint8], NDArray[np.uint8]]:
    """
    Return (lane_probability, drivable_margin), uint8 at the contract's map size.

    Two straight lane lines meeting towards a horizon, 4 map pixels wide, the left one dashed,
    and the road between them drivable: the lane geometry finds pieces, joins the dashes, fits
    and samples two lanes with sides, and scales a drivable area to the frame.
    """
    height, width = MAP_SHAPE
    lanes = np.zeros(MAP_SHAPE, np.uint8)
    horizon = int(0.58 * height)
    left = ((int(0.30 * width), height - 1), (int(0.46 * width), horizon))
    right = ((int(0.78 * width), height - 1), (int(0.55 * width), horizon))
    cv2.line(lanes, right[0], right[1], (LANE_ON,), thickness=4)
    for start in np.linspace(0.0, 0.9, 5):  # five dashes, gaps between
        ends = [(int(round(left[0][0] + (left[1][0] - left[0][0]) * t)),
                 int(round(left[0][1] + (left[1][1] - left[0][1]) * t)))
                for t in (start, start + 0.1)]
        cv2.line(lanes, ends[0], ends[1], (LANE_ON,), thickness=4)
    drivable = np.full(MAP_SHAPE, DRIVABLE_OFF, np.uint8)
    cv2.fillPoly(drivable, [np.array([left[0], left[1], right[1], right[0]], np.int32)],
                 (DRIVABLE_ON,))
    return lanes, drivable


def lane_graph() -> onnx.ModelProto:
    """Return lane_model's contract with the fixed maps of `lane_maps`, and their runs."""
    lane_probability, drivable_margin = lane_maps()
    nodes: list[onnx.NodeProto] = []
    initializers = [numpy_helper.from_array(lane_probability.astype(np.float32), 'fixed_lanes'),
                    numpy_helper.from_array(drivable_margin.astype(np.float32), 'fixed_drivable')]
    zero = _zero_from_frame(nodes, initializers)
    for fixed, output in (('fixed_lanes', 'lane_probability'),
                          ('fixed_drivable', 'drivable_margin')):
        nodes += [helper.make_node('Add', [fixed, zero], [f'{output}_f']),
                  helper.make_node('Cast', [f'{output}_f'], [output], to=TensorProto.UINT8)]
    outputs = [helper.make_tensor_value_info(name, TensorProto.UINT8, list(MAP_SHAPE))
               for name in ('lane_probability', 'drivable_margin')]
    model = _model(nodes, [_frame_input()], outputs, initializers, 'constant_lanes')
    graph = GraphBuilder(model, 'runs')
    shape = graph.node('Shape', ['image'])
    frame = tuple(graph.node('Gather', [shape, graph.constant(np.int64(axis), 'axis')], axis=0)
                  for axis in (0, 1))
    added = add_run_outputs(graph, 'lane_probability_f', 'drivable_margin_f', (frame[0], frame[1]),
                            *MAP_SHAPE)
    maps: list[tuple[str, int, list[int | str]]] = [
        (output.name, TensorProto.UINT8, list(MAP_SHAPE)) for output in outputs]
    graph.set_outputs(maps + added)
    return graph.model


def constant_repository(source: Path, target: Path) -> Path:
    """
    Copy the model repository `source` to `target` with constant graphs as its model steps.

    Configs, the CPU runner and every record are copied as they are (relative symlinks kept),
    so Triton serves the same ensembles with the same contracts and the nodes find the same
    records; only each model step's model.onnx is replaced, and engines are left out (the
    bench serves the CPU profile). The camera health step keeps its real graph: its per-pixel
    work moved there from the nodes, and the bench shows it on the server's side. Returns
    `target`.
    """
    shutil.copytree(source, target, symlinks=True,
                    ignore=shutil.ignore_patterns('__pycache__', '*.plan', '*.onnx', '*.onnx.json'))
    for step, graph in ((DETECTION_STEP, detection_graph()), (LANE_STEP, lane_graph())):
        onnx.save(graph, str(target / step / '1' / 'model.onnx'))
    health = source / HEALTH_GRAPH_FILE
    if health.is_file():
        shutil.copyfile(health, target / HEALTH_GRAPH_FILE)
    return target
