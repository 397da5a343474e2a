"""
The camera health check's per-pixel work as a graph, so that no node reads a frame's pixels.

Graph input:  image  UINT8 [H, W, 3], the frame as every served graph takes it (FRAME_INPUT).
Graph output: health_statistics  FP32 [N], a few numbers whose order the caller names
              (`order`); health/frame_statistics.py lists it and makes the frame's FrameFigures
              from them. The pieces, on health/image_figures.py's small grey copy (every
              `step`th pixel of channel `channel`, step = ceil(W / `width`)):

  contrast        [rows x columns]  each region's standard deviation of its `cell` x `cell`
                                    area-averaged pixels, rounded to whole levels as
                                    cv2.resize(INTER_AREA) rounds a uint8 image
  region_mean     [rows x columns]  each region's mean of the unrounded area averages: every
                                    pixel of the copy weighs in, so that they serve as the
                                    digest of frozen frames (CRC-32 has no operators)
  edge_spread     [1]  standard deviation of the copy's Laplacian (ksize 1, reflect-101 border)
  grey_spread     [1]  standard deviation of the copy
  dark_fraction   [1]  share of the copy's pixels at or below `dark_level`
  glare_fraction  [1]  share at or above `glare_level`

Where the graph cannot equal OpenCV: INTER_AREA is written as two area-weight matrices (its
definition for a shrink; a copy narrower than columns x cell or lower than rows x cell, which
OpenCV enlarges bilinearly, differs), and float sums run in another order, so an area average
within float error of a half level may round the other way. Spreads are centred (mean of
squared deviations), which equals OpenCV's E[x^2] - E[x]^2 up to float rounding. Every
operator is in onnx-tensorrt's tables for TensorRT 8.6 and 10.x, and the graph is FP32: on an
FP16 engine the sums of squares would overflow.
"""
from __future__ import annotations

from pathlib import Path
from typing import Sequence

import numpy as np
from onnx import helper, TensorProto

from triton_perception.graphs.contracts import FRAME_DIMS, FRAME_INPUT, HEALTH_STATISTICS
from triton_perception.graphs.frame_input import frame_size
from triton_perception.graphs.graph_editing import GraphBuilder, save_graph
from triton_perception.graphs.onnx_target import make_model

OPSET = 12
END = 2 ** 62  # a Slice end past any frame


def _name(value: object) -> str:
    """Type GraphBuilder.node's result: the name of the one tensor a node outputs."""
    return str(value)


def _integer(graph: GraphBuilder, values: Sequence[int] | int, hint: str) -> str:
    return graph.constant(np.array(values, np.int64), hint)


def _real(graph: GraphBuilder, value: float, hint: str) -> str:
    return graph.constant(np.float32(value), hint)


def _vector(graph: GraphBuilder, scalar: str) -> str:
    return _name(graph.node('Unsqueeze', [scalar], axes=[0]))


def small_grey(graph: GraphBuilder, frame: str, width: int, channel: int) -> str:
    """
    Return every Nth pixel of `channel` of a float [H, W, 3] frame: float [1, 1, h, w].

    Sliced before any transpose, so that only the small copy is moved.
    """
    frame_w = graph.node('Gather', [graph.node('Shape', [frame]), _integer(graph, 1, 'w_index')],
                         axis=0)
    step = _vector(graph, graph.node('Div', [graph.node('Add', [
        frame_w, _integer(graph, width - 1, 'round')]), _integer(graph, width, 'width')]))
    steps = graph.node('Concat', [step, step, _integer(graph, [1], 'one')], axis=0)
    grey = graph.node('Slice', [frame, _integer(graph, [0, 0, channel], 'starts'),
                                _integer(graph, [END, END, channel + 1], 'ends'),
                                _integer(graph, [0, 1, 2], 'axes'), steps])
    return _name(graph.node('Unsqueeze', [graph.node('Transpose', [grey], perm=[2, 0, 1])],
                            axes=[0]))


def area_weights(graph: GraphBuilder, size: str, cells: int) -> str:
    """
    Return float [cells, size]: row i averages the pixels [i s, (i + 1) s), s = size / cells.

    Each pixel weighs its overlap with the cell over s: INTER_AREA's weights for a shrink.
    """
    index = graph.node('Cast', [graph.node('Range', [_integer(graph, 0, 'zero'), size,
                                                     _integer(graph, 1, 'one')])],
                       to=TensorProto.FLOAT)
    scale = graph.node('Div', [graph.node('Cast', [size], to=TensorProto.FLOAT),
                               _real(graph, cells, 'cells')])
    starts = graph.node('Mul', [graph.constant(np.arange(cells, dtype=np.float32).reshape(
        cells, 1), 'cell_index'), scale])
    ends = graph.node('Add', [starts, scale])
    low = graph.node('Max', [index, starts])
    high = graph.node('Min', [graph.node('Add', [index, _real(graph, 1.0, 'pixel')]), ends])
    return _name(graph.node('Div', [graph.node('Relu', [graph.node('Sub', [high, low])]),
                                    scale]))


def reflected(graph: GraphBuilder, tensor: str, size: str, axis: int) -> str:
    """Pad `tensor` by one row or column (`axis`) on each side, reflect-101 (OpenCV's default)."""
    one = _integer(graph, 1, 'one')
    first = graph.node('Min', [one, graph.node('Sub', [size, one])])
    last = graph.node('Max', [graph.node('Sub', [size, _integer(graph, 2, 'two')]),
                              _integer(graph, 0, 'zero')])
    axes = _integer(graph, [axis], 'axis')
    edges = [graph.node('Slice', [tensor, _vector(graph, start), _vector(graph, graph.node(
        'Add', [start, one])), axes]) for start in (first, last)]
    return _name(graph.node('Concat', [edges[0], tensor, edges[1]], axis=axis))


def spread(graph: GraphBuilder, tensor: str, count: str) -> str:
    """Return the standard deviation [1] of all of `tensor`'s `count` (float scalar) values."""
    mean = graph.node('Div', [graph.node('ReduceSum', [tensor], keepdims=1), count])
    deviation = graph.node('Sub', [tensor, mean])
    variance = graph.node('Div', [graph.node('ReduceSum', [graph.node(
        'Mul', [deviation, deviation])], keepdims=0), count])
    return _vector(graph, graph.node('Sqrt', [variance]))


def add_health_statistics(graph: GraphBuilder, frame: str, *, width: int, channel: int,
                          grid: tuple[int, int], cell: int, dark_level: int, glare_level: int,
                          order: Sequence[str]) -> str:
    """
    Add the statistics of the frame cast to float [H, W, 3]; return the FP32 [N] output's name.

    `order` names the pieces (module docstring) in the output's order. Raises ValueError for
    a name that is no piece.
    """
    rows, columns = grid
    grey = small_grey(graph, frame, width, channel)
    height, breadth = frame_size(graph, grey)
    across = graph.node('Transpose', [area_weights(graph, breadth, columns * cell)],
                        perm=[1, 0])
    averaged = graph.node('MatMul', [area_weights(graph, height, rows * cell),
                                     graph.node('MatMul', [grey, across])])
    blocks = _integer(graph, [rows, cell, columns, cell], 'blocks')
    per_cell = _real(graph, 1.0 / (cell * cell), 'per_cell')

    def block_mean(tensor: str, keep: int) -> str:
        return _name(graph.node('Mul', [graph.node('ReduceSum', [tensor], axes=[1, 3],
                                                   keepdims=keep), per_cell]))
    coarse = graph.node('Reshape', [graph.node('Round', [averaged]), blocks])
    deviation = graph.node('Sub', [coarse, block_mean(coarse, 1)])
    regions = _integer(graph, [rows * columns], 'regions')
    contrast = graph.node('Reshape', [graph.node('Sqrt', [block_mean(graph.node(
        'Mul', [deviation, deviation]), 0)]), regions])
    region_mean = graph.node('Reshape', [block_mean(graph.node(
        'Reshape', [averaged, blocks]), 0), regions])
    count = graph.node('Cast', [graph.node('Mul', [height, breadth])], to=TensorProto.FLOAT)
    kernel = graph.constant(np.array([[0, 1, 0], [1, -4, 1], [0, 1, 0]], np.float32).reshape(
        1, 1, 3, 3), 'laplacian')
    laplacian = graph.node('Conv', [reflected(graph, reflected(graph, grey, height, 2),
                                              breadth, 3), kernel])

    def share(comparison: str, level: float) -> str:
        hits = graph.node('Cast', [graph.node(comparison, [grey, _real(graph, level, 'level')])],
                          to=TensorProto.FLOAT)
        return _vector(graph, graph.node('Div', [graph.node('ReduceSum', [hits], keepdims=0),
                                                 count]))
    pieces = {'contrast': contrast, 'region_mean': region_mean,
              'edge_spread': spread(graph, laplacian, count),
              'grey_spread': spread(graph, grey, count),
              'dark_fraction': share('Less', dark_level + 0.5),
              'glare_fraction': share('Greater', glare_level - 0.5)}
    unknown = [name for name in order if name not in pieces]
    if unknown:
        raise ValueError(f'no health statistic called {", ".join(unknown)}; known: '
                         f'{", ".join(pieces)}')
    graph.node('Concat', [pieces[name] for name in order], [HEALTH_STATISTICS], axis=0)
    return HEALTH_STATISTICS


def build_health_graph(destination: Path, *, width: int, channel: int, grid: tuple[int, int],
                       cell: int, dark_level: int, glare_level: int,
                       order: Sequence[tuple[str, int]]) -> None:
    """
    Write the health statistics graph to `destination` (the arguments: add_health_statistics).

    `order` is (name, size) per piece, as health/frame_statistics.py lists them.
    """
    model = make_model(helper.make_graph([], 'health_statistics', [], []), OPSET)
    graph = GraphBuilder(model, 'health')
    image = graph.input(FRAME_INPUT, TensorProto.UINT8, FRAME_DIMS)
    frame = graph.node('Cast', [image], to=TensorProto.FLOAT)
    output = add_health_statistics(
        graph, frame, width=width, channel=channel, grid=grid, cell=cell, dark_level=dark_level,
        glare_level=glare_level, order=[name for name, _ in order])
    graph.set_outputs([(output, TensorProto.FLOAT, [sum(size for _, size in order)])])
    save_graph(model, destination)
