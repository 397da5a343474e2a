"""
Lane models built at test time whose output is a known constant encoding known lanes.

No weights of LaneATT, UFLD or other lane models are reachable here, so each model's output is
`C + 0 x ReduceSum(input)`: it still depends on the input (nothing is folded away, the input's
type and shape are real), and C encodes analytic lanes x = a + b*y + c*y^2 (model-input pixels)
the tests choose. Values are FP16-exact (integers up to 2048, logits of +-10 or +-20), so the
same checks would hold for an FP16 engine.
"""
from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

import cv2
import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto

from triton_perception.graphs import make_model

LANEATT_OFFSETS = 72


class Curve(NamedTuple):
    """x = a + b*y + c*y^2 in model-input pixels, over rows [top, bottom]."""

    a: float
    b: float
    c: float
    top: float
    bottom: float

    def x(self, y: np.ndarray | float) -> np.ndarray:
        """Return the curve's x at row (or rows) `y`."""
        y = np.asarray(y, dtype=np.float64)
        return self.a + self.b * y + self.c * y * y


def through(x_top: float, x_bottom: float, top: float, bottom: float,
            bend: float = 0.0) -> Curve:
    """Return the curve from (x_top, top) to (x_bottom, bottom), bent by `bend` px at mid-height."""
    c = -4.0 * bend / (bottom - top) ** 2
    b = (x_bottom - x_top) / (bottom - top) - c * (bottom + top)
    return Curve(x_top - b * top - c * top * top, b, c, top, bottom)


def constant_model(path: Path, outputs: dict[str, np.ndarray], input_shape: list[int],
                   input_type: int = TensorProto.FLOAT, input_name: str = 'input') -> Path:
    """Return an opset-12 model: input -> outputs[name] + 0 * sum(input), for each output."""
    nodes, initializers = [], []
    source = input_name
    if input_type != TensorProto.FLOAT:
        nodes.append(helper.make_node('Cast', [input_name], ['as_float'], to=TensorProto.FLOAT))
        source = 'as_float'
    nodes.append(helper.make_node('ReduceSum', [source], ['total'], keepdims=0))
    initializers.append(numpy_helper.from_array(np.float32(0.0), 'zero'))
    nodes.append(helper.make_node('Mul', ['total', 'zero'], ['nothing']))
    graph_outputs = []
    for name, value in outputs.items():
        initializers.append(numpy_helper.from_array(value.astype(np.float32), f'{name}_value'))
        nodes.append(helper.make_node('Add', [f'{name}_value', 'nothing'], [name]))
        graph_outputs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT,
                                                           list(value.shape)))
    graph = helper.make_graph(nodes, 'constant_lanes', [helper.make_tensor_value_info(
        input_name, input_type, input_shape)], graph_outputs, initializers)
    model = make_model(graph, 12)
    onnx.checker.check_model(model)
    onnx.save(model, str(path))
    return path


def laneatt_rows(curves: list[Curve], width: int = 640, height: int = 360,
                 anchors: int = 2784, logit: float = 10.0) -> np.ndarray:
    """
    [anchors, 77] LaneATT rows.

    Each curve, a near-duplicate 5 px to its right with a lower score (NMS must remove it), and
    distractors below the confidence threshold.
    """
    rows = np.zeros((anchors, 5 + LANEATT_OFFSETS), np.float32)
    rows[:, 0], rows[:, 1] = logit, -logit     # background: probability ~ 0
    ys = (1.0 - np.arange(LANEATT_OFFSETS) / (LANEATT_OFFSETS - 1)) * height
    strips = LANEATT_OFFSETS - 1
    index = 0
    for curve in curves:
        start = int(np.ceil((height - curve.bottom) / height * strips - 1e-9))
        end = int(np.floor((height - curve.top) / height * strips + 1e-9))
        for shift, lane_logit in ((0.0, 2 * logit), (5.0, logit)):
            row = rows[index]
            row[0], row[1] = 0.0, lane_logit
            row[2] = start / strips
            row[3] = np.round(curve.x(ys[start]) + shift)
            row[4] = end - start + 1
            row[5:] = np.round(curve.x(ys) + shift)
            row[5:5 + start] = -1e3 if start else row[5:5 + start]  # nothing below its start
            index += 1
    for distractor in range(3):  # a confident-looking line with a low lane probability
        row = rows[index]
        row[0], row[1] = logit, 0.0
        row[2], row[3], row[4] = 0.0, 100 + 50 * distractor, LANEATT_OFFSETS
        row[5:] = 100 + 50 * distractor
        index += 1
    rows[:, 5:] = np.clip(rows[:, 5:], -1e3, 2048)
    return rows


def ufld_v1_output(curves: list[Curve], row_anchors: list[float], griding: int, lanes: int,
                   width: int, logit: float = 20.0) -> np.ndarray:
    """
    [1, griding + 1, rows, lanes].

    Per row, a +logit at the bin nearest each curve's x, -logit elsewhere; the 'no point' bin where
    the row is outside the curve.
    """
    output = np.full((1, griding + 1, len(row_anchors), lanes), -logit, np.float32)
    step = (width - 1) / (griding - 1)
    for lane in range(lanes):
        for row, anchor in enumerate(row_anchors):
            y = anchor - 1
            curve = curves[lane] if lane < len(curves) else None
            if curve is None or not curve.top <= y <= curve.bottom:
                output[0, griding, row, lane] = logit
                continue
            loc = (curve.x(y) + 1) / step          # x = loc * step - 1, loc counted from 1
            output[0, int(np.clip(round(loc), 1, griding)) - 1, row, lane] = logit
    return output


def segmentation_output(curves: list[Curve], width: int, height: int,
                        logit: float = 10.0) -> np.ndarray:
    """[1, 2, h, w] logits: channel 1 is +logit on 3-px lines drawn along the curves."""
    mask = np.zeros((height, width), np.uint8)
    for curve in curves:
        ys = np.arange(curve.top, curve.bottom + 1)
        points = np.stack([curve.x(ys), ys], axis=1).round().astype(np.int32)
        cv2.polylines(mask, [points], False, 1, 3)
    output = np.zeros((1, 2, height, width), np.float32)
    output[0, 1] = np.where(mask > 0, logit, -logit)
    return output


def ufld_v2_outputs(curves: list[Curve], row_anchors: np.ndarray, frame_width: int,
                    frame_height: int, grid: int, columns: int,
                    logit: float = 20.0) -> dict[str, np.ndarray]:
    """
    Build UFLD v2's four outputs encoding the curves (frame pixels) as row lanes 1 and 2.

    The bins are one-hot; there are no column lanes.
    """
    rows = len(row_anchors)
    loc_row = np.full((1, grid, rows, 4), -logit, np.float32)
    exist_row = np.zeros((1, 2, rows, 4), np.float32)
    exist_row[0, 0] = logit
    for lane, curve in zip((1, 2), curves):
        for k, anchor in enumerate(row_anchors):
            y = anchor * frame_height
            if not curve.top <= y <= curve.bottom:
                continue
            bin_index = int(round(curve.x(y) / frame_width * (grid - 1) - 0.5))
            loc_row[0, bin_index, k, lane] = logit
            exist_row[0, :, k, lane] = (-logit, logit)
    exist_col = np.zeros((1, 2, columns, 4), np.float32)
    exist_col[0, 0] = logit
    return {'loc_row': loc_row, 'loc_col': np.zeros((1, grid, columns, 4), np.float32),
            'exist_row': exist_row, 'exist_col': exist_col}


# Lanes for graphs whose operators, not whose lanes, are under test.
CURVES_FOR_GRAPHS = [through(300, 200, 150, 359), through(340, 470, 150, 359)]
