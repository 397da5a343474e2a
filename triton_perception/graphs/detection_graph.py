"""
The detection graph Triton serves: an upstream YOLO network with its decoding and NMS.

An upstream YOLO ONNX file plus decode, class-aware NMS and the letterbox undo, so that the model
step returns final detections.

Why in the graph: on JetPack's Triton the Python backend cannot take GPU tensors, so no Python
step may follow the TensorRT step (model_repository/README.md, "Jetson"). The same graph serves
the CPU profile (onnxruntime in the Python backend) and is what `engines build` gives trtexec.

Graph inputs (names as in the model config), all required (TensorRT has no optional inputs):
  image           UINT8 [H, W, 3]     the RGB frame, any size; YOLOv5's letterbox to the
                                      network's size happens here (graphs/frame_input.py)
  score_threshold FP32 [1]            minimum objectness x class score (>=), clamped to [0, 1]
  iou_threshold   FP32 [1]            class-aware NMS IoU (a box is suppressed above it),
                                      clamped to [0, 1]
  max_detections  INT32 [1]           rows kept: below 0 none, above MAX_OUTPUT (build-time)
                                      MAX_OUTPUT
Graph outputs:
  detections      FP32 [MAX_OUTPUT, 6] x1, y1, x2, y2, score, class_id in original-image
                  pixels, clipped, best first; rows past num_detections are zero
  num_detections  INT32 [1]

Fixed-size padded rows plus a count, rather than a data-dependent output shape: TensorRT 8.6
and 10.x both build data-dependent shapes inside the network (NonMaxSuppression), but Triton's
TensorRT backend then needs output-allocator support for the binding, and a static binding is
what every Triton/TensorRT pairing of JetPack 6 handles. The NMS candidate tensor is small
(PRE_NMS_TOP_K boxes after a TopK with a constant K below TensorRT's 3840 limit).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto

from triton_perception.errors import TritonPerceptionError
from triton_perception.graphs.contracts import FRAME_DIMS, FRAME_INPUT, HEAD_LAYOUTS
from triton_perception.graphs.frame_input import add_letterbox, frame_pixels
from triton_perception.graphs.graph_editing import check_single_input, GraphBuilder, save_graph

# Candidates kept (by score) before NMS; TopK's K must be a constant below 3840 for TensorRT.
PRE_NMS_TOP_K = 1000
# Detections the graph returns at most: the upper bound of `max_detections`.
MAX_OUTPUT = 300
LAYOUTS = HEAD_LAYOUTS


@dataclass(frozen=True)
class DetectorHead:
    """What the upstream ONNX file says about itself."""

    layout: str          # 'yolov5': [1, N, 5 + nc] with objectness; 'yolov8': [1, 4 + nc, N]
    classes: int
    boxes: int
    input_height: int
    input_width: int
    input_name: str
    output_name: str


class HeadLayoutError(TritonPerceptionError, ValueError):
    """The ONNX file's head is none of the supported layouts; the message names its shape."""


def inspect_head(model: onnx.ModelProto, layout: str = 'auto') -> DetectorHead:
    """Input size, class count and head layout of an upstream detector."""
    input_name, (_, channels, height, width) = check_single_input(model)
    if channels != 3:
        raise HeadLayoutError(f'the detector input has {channels} channels; expected 3 (RGB)')
    if len(model.graph.output) != 1:
        raise HeadLayoutError(f'the detector has {len(model.graph.output)} outputs; expected one '
                              'head tensor')
    output = model.graph.output[0]
    shape = [dim.dim_value for dim in output.type.tensor_type.shape.dim]
    found = f'{output.name} {shape}'
    supported = ('yolov5 [1, N, 5 + classes] (with objectness) or yolov8/yolo11 '
                 '[1, 4 + classes, N] (no objectness)')
    if len(shape) != 3 or shape[0] != 1 or 0 in shape:
        raise HeadLayoutError(f'head {found} has no supported layout; supported: {supported}')
    candidates = []
    if shape[2] > 5 and shape[1] > shape[2]:
        candidates.append(('yolov5', shape[2] - 5, shape[1]))
    if shape[1] > 4 and shape[2] > shape[1]:
        candidates.append(('yolov8', shape[1] - 4, shape[2]))
    if layout != 'auto':
        if layout not in LAYOUTS:
            raise HeadLayoutError(f'layout {layout!r} is not one of auto, {", ".join(LAYOUTS)}')
        candidates = [item for item in candidates if item[0] == layout]
        if not candidates:
            raise HeadLayoutError(f'head {found} is not a {layout} head; supported: {supported}')
    if not candidates:
        raise HeadLayoutError(f'head {found} has no supported layout; supported: {supported}')
    name, classes, boxes = candidates[0]
    return DetectorHead(name, classes, boxes, height, width, input_name, output.name)


def _clamped(graph: GraphBuilder, threshold: str) -> str:
    """
    Clamp a per-request threshold to [0, 1].

    The graph cannot refuse a request, so out-of-range values are clamped the same way in both
    profiles; clients that want an error check first (detection_node's parameter ranges do).
    """
    clamped: str = graph.node('Min', [graph.node('Max', [threshold, graph.constant(
        np.float32(0.0), 'threshold_low')]), graph.constant(np.float32(1.0), 'threshold_high')])
    return clamped


def build_detection_graph(source: Path, destination: Path, layout: str = 'auto') -> DetectorHead:
    """Write the served graph for the detector at `source`; returns what its head is."""
    model = onnx.load(str(source))
    head = inspect_head(model, layout)
    graph = GraphBuilder(model, 'det')
    letterbox = _network_input(graph, head)
    score_threshold = _clamped(graph, graph.input('score_threshold', TensorProto.FLOAT, [1]))
    iou_threshold = _clamped(graph, graph.input('iou_threshold', TensorProto.FLOAT, [1]))
    max_detections = graph.input('max_detections', TensorProto.INT32, [1])
    top_k = min(PRE_NMS_TOP_K, head.boxes)
    boxes, classes, scores = _candidates(graph, head, score_threshold, top_k)
    kept_scores = _class_aware_nms(graph, head.classes, top_k, boxes, classes, scores,
                                   iou_threshold)
    out_k = min(MAX_OUTPUT, top_k)
    _detection_rows(graph, out_k, letterbox, boxes, classes, kept_scores, max_detections)
    graph.set_outputs([('detections', TensorProto.FLOAT, [out_k, 6]),
                       ('num_detections', TensorProto.INT32, [1])])
    save_graph(graph.model, destination)
    return head


def _network_input(graph: GraphBuilder, head: DetectorHead) -> str:
    """
    Replace the network's input by the frame, letterboxed and scaled to [0, 1].

    Returns the letterbox tensor (scale, pad, original size) that maps boxes back to the frame.
    """
    image, network_input = graph.replace_input(head.input_name, FRAME_INPUT, TensorProto.UINT8,
                                               FRAME_DIMS)
    canvas, letterbox = add_letterbox(graph, frame_pixels(graph, image), head.input_width,
                                      head.input_height)
    graph.node('Mul', [canvas, graph.constant(np.float32(1.0 / 255.0), 'inv255')],
               [network_input])
    return letterbox


def _candidates(graph: GraphBuilder, head: DetectorHead, score_threshold: str,
                top_k: int) -> tuple[str, str, str]:
    """
    Decode the head and keep the `top_k` best boxes, scored 0 below the threshold.

    Returns the candidates' corner boxes [1, K, 4], classes [1, K] and scores [1, K]: a
    constant K before NMS, which TensorRT's TopK needs.
    """
    rows = head.output_name
    if head.layout == 'yolov8':  # [1, 4 + nc, N] -> [1, N, 4 + nc]
        rows = graph.node('Transpose', [rows], perm=[0, 2, 1])
    centre_size = graph.slice(rows, 0, 4, axis=2)                  # [1, N, 4] cx, cy, w, h
    class_scores = graph.slice(rows, 5 if head.layout == 'yolov5' else 4, 5 + head.classes
                               if head.layout == 'yolov5' else 4 + head.classes, axis=2)
    if head.layout == 'yolov5':  # score = objectness x class score
        class_scores = graph.node('Mul', [class_scores, graph.slice(rows, 4, 5, axis=2)])
    best_score = graph.node('ReduceMax', [class_scores], axes=[2], keepdims=0)   # [1, N]
    best_class = graph.node('ArgMax', [class_scores], axis=2, keepdims=0)        # [1, N]

    # Candidates: the PRE_NMS_TOP_K best boxes, scored 0 below the threshold.
    top_scores, top_indices = graph.node('TopK', [best_score, graph.constant(
        np.array([top_k], np.int64), 'pre_nms_k')], outputs=2, axis=1, largest=1, sorted=1)
    above = graph.node('Cast', [graph.node('Not', [graph.node('Less', [
        top_scores, score_threshold])])], to=TensorProto.FLOAT)
    scores = graph.node('Mul', [top_scores, above])                              # [1, K]
    flat_indices = graph.node('Squeeze', [top_indices], axes=[0])               # [K]
    boxes_cs = graph.node('Gather', [centre_size, flat_indices], axis=1)       # [1, K, 4]
    classes = graph.node('Gather', [best_class, flat_indices], axis=1)         # [1, K]
    half = graph.node('Mul', [graph.slice(boxes_cs, 2, 4, axis=2), graph.constant(
        np.float32(0.5), 'half')])
    corners = graph.slice(boxes_cs, 0, 2, axis=2)
    boxes = graph.node('Concat', [graph.node('Sub', [corners, half]),
                                  graph.node('Add', [corners, half])], axis=2)  # [1, K, 4] xyxy
    return boxes, classes, scores


def _class_aware_nms(graph: GraphBuilder, class_count: int, top_k: int, boxes: str,
                     classes: str, scores: str, iou_threshold: str) -> str:
    """
    Return the candidates' scores [K], 0 for those NMS suppressed.

    Class-aware: each box scores under its own class only ([1, nc, K]), so that boxes of
    different classes never suppress each other.
    """
    class_range = graph.constant(np.arange(class_count, dtype=np.int64).reshape(class_count, 1),
                                 'class_range')
    own_class = graph.node('Cast', [graph.node('Equal', [class_range, classes])],
                           to=TensorProto.FLOAT)                                # [nc, K]
    per_class = graph.node('Unsqueeze', [graph.node('Mul', [own_class, scores])], axes=[0])
    selected = graph.node('NonMaxSuppression', [
        boxes, per_class, graph.constant(np.array([top_k], np.int64), 'nms_max_per_class'),
        iou_threshold, graph.constant(np.array([0.0], np.float32), 'nms_score_floor')])
    selected_box = graph.slice(selected, 2, 3, axis=1)                          # [M, 1]
    box_range = graph.constant(np.arange(top_k, dtype=np.int64).reshape(1, top_k), 'box_range')
    kept = graph.node('ReduceSum', [graph.node('Cast', [graph.node('Equal', [
        selected_box, box_range])], to=TensorProto.FLOAT)], axes=[0], keepdims=0)   # [K]
    kept_scores: str = graph.node('Mul', [graph.node('Squeeze', [scores], axes=[0]),
                                          graph.node('Min', [kept, graph.constant(
                                              np.float32(1.0), 'one')])])       # [K]
    return kept_scores


def _detection_rows(graph: GraphBuilder, out_k: int, letterbox: str, boxes: str, classes: str,
                    kept_scores: str, max_detections: str) -> None:
    """
    Add the outputs: the best `out_k` kept boxes in frame pixels, and their count.

    At most `max_detections` rows are valid; the fixed-size rows (TensorRT's static binding)
    hold the valid ones first, best score first, and zeros after them.
    """
    # The best MAX_OUTPUT kept boxes, at most max_detections of them.
    ranked_scores, ranked = graph.node('TopK', [kept_scores, graph.constant(
        np.array([out_k], np.int64), 'out_k')], outputs=2, axis=0, largest=1, sorted=1)
    rank = graph.constant(np.arange(out_k, dtype=np.int32), 'rank')
    within_max = graph.node('Less', [rank, max_detections])
    ranked_boxes = graph.node('Gather', [graph.node('Squeeze', [boxes], axes=[0]), ranked],
                              axis=0)                                           # [O, 4]
    ranked_classes = graph.node('Cast', [graph.node('Gather', [
        graph.node('Squeeze', [classes], axes=[0]), ranked], axis=0)], to=TensorProto.FLOAT)

    # Back to original-image pixels, clipped; boxes left with no area lay in the padding.
    scale = graph.node('Concat', [graph.slice(letterbox, 0, 2, axis=0)] * 2, axis=0)
    pad = graph.node('Concat', [graph.slice(letterbox, 2, 4, axis=0)] * 2, axis=0)
    size = graph.node('Concat', [graph.slice(letterbox, 4, 6, axis=0)] * 2, axis=0)
    image_boxes = graph.node('Min', [graph.node('Max', [graph.node('Div', [
        graph.node('Sub', [ranked_boxes, pad]), scale]), graph.constant(
            np.float32(0.0), 'zero')]), size])                                  # [O, 4]
    width = graph.node('Sub', [graph.slice(image_boxes, 2, 3, axis=1),
                               graph.slice(image_boxes, 0, 1, axis=1)])
    height = graph.node('Sub', [graph.slice(image_boxes, 3, 4, axis=1),
                                graph.slice(image_boxes, 1, 2, axis=1)])
    zero = graph.constant(np.float32(0.0), 'zero_f')
    valid = graph.node('And', [
        graph.node('And', [graph.node('Greater', [graph.node('Unsqueeze', [
            ranked_scores], axes=[1]), zero]), graph.node('Unsqueeze', [within_max], axes=[1])]),
        graph.node('And', [graph.node('Greater', [width, zero]),
                           graph.node('Greater', [height, zero])])])             # [O, 1]
    valid_float = graph.node('Cast', [valid], to=TensorProto.FLOAT)
    rows_out = graph.node('Mul', [graph.node('Concat', [
        image_boxes, graph.node('Unsqueeze', [ranked_scores], axes=[1]),
        graph.node('Unsqueeze', [ranked_classes], axes=[1])], axis=1), valid_float])
    # Valid rows first, best score first: sort once more by score with invalid rows last.
    order_key = graph.node('Sub', [graph.node('Squeeze', [graph.node('Mul', [
        graph.node('Add', [graph.slice(rows_out, 4, 5, axis=1), graph.constant(
            np.float32(1.0), 'one_b')]), valid_float])], axes=[1]), graph.constant(
        np.float32(1.0), 'one_c')])
    _, final_order = graph.node('TopK', [order_key, graph.constant(
        np.array([out_k], np.int64), 'final_k')], outputs=2, axis=0, largest=1, sorted=1)
    graph.node('Gather', [rows_out, final_order], ['detections'], axis=0)
    graph.node('Cast', [graph.node('ReduceSum', [valid_float], axes=[0, 1], keepdims=1)],
               ['num_detections_2d'], to=TensorProto.INT32)
    graph.node('Reshape', ['num_detections_2d', graph.constant(np.array([1], np.int64),
                                                               'count_shape')], ['num_detections'])
