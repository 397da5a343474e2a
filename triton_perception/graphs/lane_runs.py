"""
The lane mask's runs and the frame-size drivable area, computed in the served lane graph.

So that lane_node does no per-pixel work: on the Orin the node's Python runs on slow
cores while the GPU waits, and a connected-components pass over a 360 x 640 mask plus a resize
of the drivable margin to the frame cost it about 2 ms a frame. The graph instead returns
tensors whose size does not grow with what the mask holds:

  lane_runs       INT32 [h, K, 3]  per mask row, its first K runs of lane-mask pixels, left to
                                   right: start column, end column (exclusive) and the sum of
                                   the run's lane_probability levels (0-255 each); unused slots
                                   are all zero
  lane_run_counts INT32 [h]        how many runs the row has; above K, the runs past the K-th
                                   are not in lane_runs (the decoder counts them as dropped)
  drivable_area   UINT8 [H, W]     0/255 at the frame's size: the quantised drivable margin
                                   resized bilinearly (half-pixel, cv2.INTER_LINEAR's rule) and
                                   thresholded at zero, as lane_geometry.drivable_area did

Every operator is in onnx-tensorrt's tables for TensorRT 8.6 and 10.x: runs are found by
comparing the mask with shifted copies, listed with TopK over a constant column ramp (K far
below TensorRT's 3,840), and their sums come from an integer prefix sum by doubling shifts
(Hillis-Steele, each shift a Slice and a Concat; the tables have no CumSum) read with Gather. The
sums are INT32 so that an FP16 engine keeps them exact (a row's sum reaches 640 x 255, beyond
FP16's range).
"""
from __future__ import annotations

import numpy as np
from onnx import TensorProto

from triton_perception.graphs.contracts import MAX_RUNS
from triton_perception.graphs.frame_input import resize_linear
from triton_perception.graphs.graph_editing import GraphBuilder

LANE_LEVEL_MIN = 127.5  # lane_probability levels above this are the lane mask (>= 128)
DRIVABLE_LEVEL_ZERO = 128.0  # drivable_margin level of a zero logit margin


def _shifted(graph: GraphBuilder, tensor: str, shift: int, width: int,
             zero: np.generic) -> str:
    """
    Return `tensor` [h, width] moved `shift` columns right (left if negative), 0-filled.

    The fill is a slice times `zero` (of the tensor's type): no [h, shift] initializer, and no
    INT32 Pad (the frame-input rules keep Pad on FP32).
    """
    size = abs(shift)
    kept = graph.slice(tensor, 0, width - size, axis=1) if shift > 0 else graph.slice(
        tensor, size, width, axis=1)
    fill = graph.node('Mul', [graph.slice(tensor, 0, size, axis=1),
                              graph.constant(zero, 'fill_zero')])
    moved: str = graph.node('Concat', [fill, kept] if shift > 0 else [kept, fill], axis=1)
    return moved


def _first_columns(graph: GraphBuilder, flags: str, width: int) -> tuple[str, str]:
    """Return the K leftmost columns where the 0/1 float `flags` [h, w] are 1, and which are."""
    ramp = graph.constant(np.arange(width, 0, -1, dtype=np.float32), 'column_ramp')
    values, indices = graph.node('TopK', [graph.node('Mul', [flags, ramp]), graph.constant(
        np.array([MAX_RUNS], np.int64), 'max_runs')], 2, axis=1, largest=1, sorted=1)
    valid = graph.node('Greater', [values, graph.constant(np.float32(0.0), 'no_run')])
    return graph.node('Cast', [indices], to=TensorProto.INT32), valid


def add_lane_runs(graph: GraphBuilder, lane_levels: str, height: int, width: int) -> list[str]:
    """
    Add lane_runs and lane_run_counts from the float lane_probability levels [h, w] (0-255).

    Returns the output names.
    """
    mask = graph.node('Cast', [graph.node('Greater', [lane_levels, graph.constant(
        np.float32(LANE_LEVEL_MIN), 'lane_level_min')])], to=TensorProto.FLOAT)

    def boundary(shift: int) -> str:
        """Mask pixels whose neighbour `shift` columns away is not on the mask."""
        neighbour = _shifted(graph, mask, shift, width, np.float32(0.0))
        edge: str = graph.node('Sub', [mask, graph.node('Mul', [mask, neighbour])])
        return edge

    starts = boundary(1)   # the left neighbour is off the mask
    ends = boundary(-1)    # the right neighbour is off the mask
    start, valid = _first_columns(graph, starts, width)
    last, _ = _first_columns(graph, ends, width)
    zero = graph.constant(np.int32(0), 'int_zero')
    start = graph.node('Where', [valid, start, zero])
    end = graph.node('Where', [valid, graph.node('Add', [last, graph.constant(
        np.int32(1), 'int_one')]), zero])

    # Exclusive prefix sum of the masked levels along each row, by doubling shifts.
    levels = graph.node('Cast', [graph.node('Mul', [lane_levels, mask])], to=TensorProto.INT32)
    prefix = graph.node('Concat', [graph.constant(np.zeros((height, 1), np.int32),
                                                  'prefix_zero'), levels], axis=1)
    shift = 1
    while shift < width + 1:
        prefix = graph.node('Add', [prefix, _shifted(graph, prefix, shift, width + 1,
                                                     np.int32(0))])
        shift *= 2
    flat = graph.node('Reshape', [prefix, graph.constant(np.array([-1], np.int64), 'flat')])
    row_base = graph.constant((np.arange(height, dtype=np.int32) * (width + 1))[:, None],
                              'row_base')

    def prefix_at(column: str) -> str:
        gathered: str = graph.node('Gather', [flat, graph.node('Add', [row_base, column])],
                                   axis=0)
        return gathered

    total = graph.node('Sub', [prefix_at(end), prefix_at(start)])
    graph.node('Concat', [graph.node('Unsqueeze', [value], axes=[2])
                          for value in (start, end, total)], ['lane_runs'], axis=2)
    counts = graph.node('ReduceSum', [starts], axes=[1], keepdims=0)
    graph.node('Cast', [counts], ['lane_run_counts'], to=TensorProto.INT32)
    return ['lane_runs', 'lane_run_counts']


def add_frame_drivable(graph: GraphBuilder, drivable_levels: str, frame_height: str,
                       frame_width: str, height: int, width: int) -> str:
    """
    Add drivable_area, UINT8 [H, W] 0/255 at the frame's size, from drivable_margin's levels.

    frame_height and frame_width are the frame's int64 scalars (frame_input.frame_size).
    """
    centred = graph.node('Sub', [drivable_levels, graph.constant(
        np.float32(DRIVABLE_LEVEL_ZERO), 'drivable_zero')])
    batched = graph.node('Reshape', [centred, graph.constant(
        np.array([1, 1, height, width], np.int64), 'margin_shape')])
    resized = resize_linear(graph, batched, frame_height, frame_width, 1)
    area = graph.node('Where', [graph.node('Greater', [resized, graph.constant(
        np.float32(0.0), 'margin_zero_level')]), graph.constant(np.float32(255.0), 'on'),
        graph.constant(np.float32(0.0), 'off')])
    graph.node('Cast', [graph.node('Squeeze', [area], axes=[0, 1])], ['drivable_area'],
               to=TensorProto.UINT8)
    return 'drivable_area'
