"""
The frame itself into a served graph: YOLOv5's letterbox or a plain resize as ONNX operators.

Every served graph takes the uint8 RGB frame [H, W, 3] of any size, so that each ensemble is one
model step and no Python step precedes the TensorRT step on the Orin (model_repository/README.md).
Written for what onnx-tensorrt 8.6 and 10.x accept: the frame is cast to float before anything
else reads it (TensorRT takes UINT8 only straight into a Cast), Resize and Pad work on FP32,
`sizes` and pads come from integer shape arithmetic only (float shape tensors fail inside
TensorRT), Resize is linear with half_pixel and no antialias, opset 11-12.

The Python reference these graphs are tested against is
triton_perception.frames.frame_preprocessing.
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np
from onnx import TensorProto

from triton_perception.graphs.graph_editing import GraphBuilder

PAD_VALUE = 114.0


def _scalar(graph: GraphBuilder, value: int, hint: str) -> str:
    return graph.constant(np.array(value, np.int64), hint)


def _rounded_ratio(graph: GraphBuilder, numerator: str, denominator: str) -> str:
    """Round numerator / denominator for positive int64 scalars, half to even as Python does."""
    two = _scalar(graph, 2, 'two')
    twice_n = graph.node('Mul', [numerator, two])
    twice_d = graph.node('Mul', [denominator, two])
    half_up = graph.node('Div', [graph.node('Add', [twice_n, denominator]), twice_d])
    remainder = graph.node('Sub', [twice_n, graph.node('Mul', [graph.node('Div', [
        twice_n, twice_d]), twice_d])])
    tie = graph.node('Equal', [remainder, denominator])
    odd = graph.node('Equal', [graph.node('Sub', [half_up, graph.node('Mul', [graph.node(
        'Div', [half_up, two]), two])]), _scalar(graph, 1, 'one')])
    return graph.node('Where', [graph.node('And', [tie, odd]), graph.node(
        'Sub', [half_up, _scalar(graph, 1, 'one_b')]), half_up])


def _clip(graph: GraphBuilder, value: str, low: int, high: int) -> str:
    return graph.node('Min', [graph.node('Max', [value, _scalar(graph, low, 'low')]),
                              _scalar(graph, high, 'high')])


def frame_size(graph: GraphBuilder, pixels: str) -> tuple[str, str]:
    """Return (height, width) int64 scalars of a float [1, 3, H, W] frame."""
    shape = graph.node('Shape', [pixels])
    return (graph.node('Gather', [shape, _scalar(graph, 2, 'h_index')], axis=0),
            graph.node('Gather', [shape, _scalar(graph, 3, 'w_index')], axis=0))


def frame_pixels(graph: GraphBuilder, image: str) -> str:
    """Cast uint8 [H, W, 3] to float [1, 3, H, W] (Resize and Pad take no UINT8 in TensorRT)."""
    return graph.node('Unsqueeze', [graph.node('Transpose', [graph.node(
        'Cast', [image], to=TensorProto.FLOAT)], perm=[2, 0, 1])], axes=[0])


def resize_linear(graph: GraphBuilder, tensor: str, height: str, width: str,
                  channels: int) -> str:
    """
    Resize a float [1, channels, h, w] tensor to [1, channels, height, width] (int64 scalars).

    Bilinear, half-pixel, no antialias: cv2.INTER_LINEAR's sampling, and what TensorRT builds.
    """
    sizes = graph.node('Concat', [graph.constant(np.array([1, channels], np.int64), 'nc'),
                                  graph.node('Unsqueeze', [height], axes=[0]),
                                  graph.node('Unsqueeze', [width], axes=[0])], axis=0)
    empty = graph.constant(np.zeros(0, np.float32), 'empty')
    return graph.node('Resize', [tensor, empty, empty, sizes], mode='linear',
                      coordinate_transformation_mode='half_pixel')


def _resize(graph: GraphBuilder, pixels: str, height: str, width: str) -> str:
    """Resize bilinearly, half-pixel (cv2.INTER_LINEAR), rounded to whole levels as cv2's uint8."""
    resized = resize_linear(graph, pixels, height, width, 3)
    # Halves round up, as cv2's fixed-point rounding does: exact 2:1 and 3:1 reductions (whose
    # averages end in .5) then equal cv2 bit for bit, where ONNX Round (half to even) would not.
    return graph.node('Floor', [graph.node('Add', [resized, graph.constant(
        np.float32(0.5), 'half_level')])])


def add_letterbox(graph: GraphBuilder, pixels: str, width: int,
                  height: int) -> tuple[str, str]:
    """
    Letterbox a float [1, 3, H, W] frame (frame_pixels) as YOLOv5 does.

    Returns the float [1, 3, height, width] canvas (levels 0-255) and the float [6] letterbox
    vector of frame_preprocessing.letterbox: resized size round(dim x ratio), half to even, and
    the pad split by the -0.1/+0.1 rule (left/top = floor of half the padding).
    """
    frame_h, frame_w = frame_size(graph, pixels)
    in_w, in_h = _scalar(graph, width, 'in_w'), _scalar(graph, height, 'in_h')
    # in_w / W <= in_h / H, compared without division (shape arithmetic stays integer).
    width_limited = graph.node('Not', [graph.node('Greater', [
        graph.node('Mul', [in_w, frame_h]), graph.node('Mul', [in_h, frame_w])])])
    resized_w = _clip(graph, graph.node('Where', [
        width_limited, in_w, _rounded_ratio(graph, graph.node('Mul', [frame_w, in_h]),
                                            frame_h)]), 1, width)
    resized_h = _clip(graph, graph.node('Where', [
        width_limited, _rounded_ratio(graph, graph.node('Mul', [frame_h, in_w]), frame_w),
        in_h]), 1, height)
    two = _scalar(graph, 2, 'two_pad')
    pad_left = graph.node('Div', [graph.node('Sub', [in_w, resized_w]), two])
    pad_top = graph.node('Div', [graph.node('Sub', [in_h, resized_h]), two])
    pad_right = graph.node('Sub', [graph.node('Sub', [in_w, resized_w]), pad_left])
    pad_bottom = graph.node('Sub', [graph.node('Sub', [in_h, resized_h]), pad_top])
    resized = _resize(graph, pixels, resized_h, resized_w)
    zero = graph.constant(np.array([0, 0], np.int64), 'zero_pads')
    pads = graph.node('Concat', [zero, *(graph.node('Unsqueeze', [value], axes=[0]) for value in (
        pad_top, pad_left)), zero, *(graph.node('Unsqueeze', [value], axes=[0]) for value in (
            pad_bottom, pad_right))], axis=0)
    canvas = graph.node('Pad', [resized, pads, graph.constant(np.float32(PAD_VALUE), 'pad114')],
                        mode='constant')
    canvas = graph.node('Reshape', [canvas, graph.constant(np.array([1, 3, height, width],
                                                                    np.int64), 'canvas_shape')])

    def as_float(value: str) -> str:
        return graph.node('Cast', [value], to=TensorProto.FLOAT)
    vector = graph.node('Concat', [graph.node('Unsqueeze', [value], axes=[0]) for value in (
        graph.node('Div', [as_float(resized_w), as_float(frame_w)]),
        graph.node('Div', [as_float(resized_h), as_float(frame_h)]),
        as_float(pad_left), as_float(pad_top), as_float(frame_w), as_float(frame_h))], axis=0)
    return canvas, vector


def crop_top(graph: GraphBuilder, pixels: str, top_crop: float) -> str:
    """
    Cut the top `top_crop` of a float [1, 3, H, W] frame's rows off.

    round(top_crop x H) rows, at most H - 1, as frame_preprocessing.cropped_top_rows.
    """
    if not top_crop:
        return pixels
    frame_h, _ = frame_size(graph, pixels)
    fraction = Fraction(top_crop).limit_denominator(10_000)
    numerator = _scalar(graph, fraction.numerator, 'crop_num')
    denominator = _scalar(graph, fraction.denominator, 'crop_den')
    top = graph.node('Min', [_rounded_ratio(graph, graph.node('Mul', [frame_h, numerator]),
                                            denominator),
                             graph.node('Sub', [frame_h, _scalar(graph, 1, 'one_row')])])
    return graph.node('Slice', [
        pixels, graph.node('Unsqueeze', [top], axes=[0]),
        graph.constant(np.array([2 ** 62], np.int64), 'crop_end'),
        graph.constant(np.array([2], np.int64), 'crop_axis')])


def add_stretch(graph: GraphBuilder, pixels: str, width: int, height: int) -> str:
    """Resize a float [1, 3, H, W] frame to float [1, 3, height, width] (levels 0-255)."""
    resized = _resize(graph, pixels, _scalar(graph, height, 'out_h'),
                      _scalar(graph, width, 'out_w'))
    shape = graph.constant(np.array([1, 3, height, width], np.int64), 'stretch_shape')
    return graph.node('Reshape', [resized, shape])


def add_frame_input(graph: GraphBuilder, image: str, width: int, height: int,
                    resize: str = 'stretch', top_crop: float = 0.0) -> tuple[str, str | None]:
    """
    Turn the uint8 [H, W, 3] frame into the network's float [1, 3, height, width] (levels 0-255).

    `resize` 'letterbox' (YOLOv5's) or 'stretch', after cutting the top `top_crop` off. Returns
    the canvas and, for a letterbox, the letterbox vector (None for a stretch).
    """
    pixels = crop_top(graph, frame_pixels(graph, image), top_crop)
    if resize == 'letterbox':
        return add_letterbox(graph, pixels, width, height)
    if resize != 'stretch':
        raise ValueError(f'resize {resize!r} is not letterbox or stretch')
    return add_stretch(graph, pixels, width, height), None
