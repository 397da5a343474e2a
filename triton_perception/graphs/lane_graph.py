"""
The lane graph Triton serves: TwinLiteNet taking the uint8 frame, giving compact maps.

TwinLiteNet with a uint8 input and compact outputs, so that the model step is the last step of
`lane_detection` and the lane geometry runs in lane_node (triton_perception.lanes.lane_geometry)
on a few numbers per mask row, never on pixels (the runs and the frame-size drivable area below).

Graph input:  image  UINT8 [H, W, 3], the RGB frame of any size; the resize to the network's
              size, the cast and /255 happen here (graphs/frame_input.py).
Graph outputs, at model resolution:
  lane_probability UINT8 [H, W]  the lane-line probability x 255, rounded, and >= 128 exactly
                                 where the lane head's logit margin is positive (the mask the
                                 geometry uses); lane scores average it / 255
  drivable_margin  UINT8 [H, W]  128 + 16 x (drivable logit margin), clipped to [0, 255], and
                                 > 128 exactly where the margin is positive; the geometry
                                 resizes it to the frame and thresholds it, as it did the float
                                 margin (smooth edges)
  lane_runs, lane_run_counts, drivable_area: see graphs/lane_runs.py; lane_node asks for these
                                 three only (the maps stay for clients that want them)
"""
from __future__ import annotations

from pathlib import Path
from typing import Mapping, Sequence

import numpy as np
import onnx
from onnx import TensorProto

from triton_perception.graphs.contracts import FRAME_DIMS, FRAME_INPUT, MAX_RUNS
from triton_perception.graphs.frame_input import add_stretch, frame_pixels, frame_size
from triton_perception.graphs.graph_editing import check_single_input, GraphBuilder, save_graph
from triton_perception.graphs.lane_runs import add_frame_drivable, add_lane_runs

MARGIN_SCALE = 16.0   # drivable margin steps per logit unit (+-7.9 logits fit in uint8)
MARGIN_ZERO = 128


def add_compact_maps(graph: GraphBuilder, lane_margin: str, drivable_margin: str | None,
                     height: int, width: int,
                     frame: tuple[str, str] | None = None) -> list[str]:
    """
    Return the uint8 outputs from [H, W] logit margins (positive = lane / drivable).

    Without a drivable head only lane_probability. Given the frame's (height, width) int64
    scalars, also the lane mask's runs and the drivable area at the frame's size
    (graphs/lane_runs.py), which lane_node decodes without per-pixel work. Returns the output
    names.
    """
    zero = graph.constant(np.float32(0.0), 'zero')

    def to_uint8(value: str, positive: str, low: float, high: float, name: str) -> str:
        """Round, keep the sign of `positive` exact around the threshold, cast at the output."""
        rounded = graph.node('Round', [value])
        at_least = graph.node('Max', [rounded, graph.constant(np.float32(high), 'above')])
        at_most = graph.node('Min', [rounded, graph.constant(np.float32(low), 'below')])
        exact = graph.node('Where', [positive, at_least, at_most])
        clipped: str = graph.node('Clip', [exact, graph.constant(np.float32(0.0), 'low'),
                                           graph.constant(np.float32(255.0), 'high')])
        graph.node('Cast', [clipped], [name], to=TensorProto.UINT8)
        return clipped

    probability = graph.node('Mul', [graph.node('Sigmoid', [lane_margin]),
                                     graph.constant(np.float32(255.0), 'scale255')])
    lane_levels = to_uint8(probability, graph.node('Greater', [lane_margin, zero]), 127.0,
                           128.0, 'lane_probability')
    outputs: list[tuple[str, int, list[int | str]]] = [
        ('lane_probability', TensorProto.UINT8, [height, width])]
    if drivable_margin is not None:
        scaled = graph.node('Add', [graph.node('Mul', [drivable_margin, graph.constant(
            np.float32(MARGIN_SCALE), 'margin_scale')]), graph.constant(
            np.float32(MARGIN_ZERO), 'margin_zero')])
        drivable_levels = to_uint8(scaled, graph.node('Greater', [drivable_margin, zero]),
                                   float(MARGIN_ZERO), float(MARGIN_ZERO + 1), 'drivable_margin')
        outputs.append(('drivable_margin', TensorProto.UINT8, [height, width]))
    if frame is not None:
        outputs += add_run_outputs(graph, lane_levels, drivable_levels if drivable_margin
                                   is not None else None, frame, height, width)
    graph.set_outputs(outputs)
    return [name for name, _, _ in outputs]


def add_float_outputs(graph: GraphBuilder, outputs: Sequence[str],
                      shapes: Mapping[str, list[int]]) -> None:
    """Make the network's `outputs` the graph's, cast to FP32 (onnx-tensorrt casts none itself)."""
    produced = []
    for name in outputs:
        internal = f'{name}/network'
        for node in list(graph.model.graph.node):  # the network now writes and reads `internal`
            node.output[:] = [internal if out == name else out for out in node.output]
            node.input[:] = [internal if used == name else used for used in node.input]
        graph.node('Cast', [internal], [name], to=TensorProto.FLOAT)
        produced.append((name, TensorProto.FLOAT, shapes[name]))
    graph.set_outputs(produced)


def add_run_outputs(graph: GraphBuilder, lane_levels: str, drivable_levels: str | None,
                    frame: tuple[str, str], height: int,
                    width: int) -> list[tuple[str, int, list[int | str]]]:
    """
    Add lane_runs, lane_run_counts and drivable_area (graphs/lane_runs.py) from float levels.

    lane_levels and drivable_levels are the uint8 maps' values as float [height, width]; frame
    the frame's (height, width) int64 scalars. Returns the outputs as set_outputs takes them.
    """
    runs, counts = add_lane_runs(graph, lane_levels, height, width)
    outputs: list[tuple[str, int, list[int | str]]] = [
        (runs, TensorProto.INT32, [height, MAX_RUNS, 3]), (counts, TensorProto.INT32, [height])]
    if drivable_levels is not None:
        outputs.append((add_frame_drivable(graph, drivable_levels, *frame, height, width),
                        TensorProto.UINT8, ['frame_height', 'frame_width']))
    return outputs


def build_lane_graph(source: Path, destination: Path) -> None:
    """Write the served lane graph for TwinLiteNet at `source` (a plain resize, as trained)."""
    model = onnx.load(str(source))
    input_name, (_, channels, height, width) = check_single_input(model)
    outputs = [output.name for output in model.graph.output]
    if channels != 3 or outputs != ['da', 'll']:
        raise ValueError(f'expected TwinLiteNet (3-channel input, outputs da and ll), found '
                         f'{channels} channels and outputs {outputs}')
    graph = GraphBuilder(model, 'lanes')
    image, network_input = graph.replace_input(input_name, FRAME_INPUT, TensorProto.UINT8,
                                               FRAME_DIMS)
    pixels = frame_pixels(graph, image)
    canvas = add_stretch(graph, pixels, width, height)
    graph.node('Mul', [canvas, graph.constant(np.float32(1.0 / 255.0), 'inv255')],
               [network_input])

    def margin(head: str) -> str:
        """[1, 2, H, W] logits -> [H, W] foreground minus background."""
        difference = graph.node('Sub', [graph.slice(head, 1, 2, axis=1),
                                        graph.slice(head, 0, 1, axis=1)])
        squeezed: str = graph.node('Squeeze', [difference], axes=[0, 1])
        return squeezed

    add_compact_maps(graph, margin('ll'), margin('da'), height, width,
                     frame_size(graph, pixels))
    save_graph(graph.model, destination)
