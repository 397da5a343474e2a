"""
Which part of a served graph is INT8: its network's data path, and nothing the builder added.

`models quantize` (models/quantization.py) quantizes a served graph statically in the QDQ form
(QuantizeLinear/DequantizeLinear pairs around the network's operators), which onnxruntime runs
on the CPU as integer kernels and TensorRT builds as explicit quantization. What the graph
builder added around the network stays FP32 or integer as it was: the letterbox or resize,
the box decode and NMS, the lane maps and runs (INT32) and the health statistics (FP32).

The network's nodes are the ones the builder did not name (`GraphBuilder` names every node
it adds PREFIX/OP_node_N); within them only the data path from the network input that leads
to a convolution is quantized:
- not the shape arithmetic (Shape -> Gather -> Mul -> Resize sizes): a size through a
  Quantize/Dequantize pair comes out 39 instead of 40 (measured on YOLOv5n's upsampling);
- not what follows the last convolutions: YOLOv5's head decode (sigmoid, grid and anchor
  arithmetic, boxes in pixels and scores in one tensor) would share one scale between 0-640
  coordinates and 0-1 scores;
- not Softmax and MatMul (TwinLiteNet's attention): onnxruntime's QLinearSoftmax and
  QLinearMatMul ran slower than their float kernels here.

Opset: a per-channel weight scale needs QuantizeLinear's `axis` (opset 13); the served graphs
are opset 12 with axes as attributes, so the graph is converted to opset 13 by onnx's version
converter first (IR 7, within what onnxruntime 1.12 reads, graphs/onnx_target.py).
"""
from __future__ import annotations

from collections import defaultdict
import re
from typing import Iterable

import onnx
from onnx import version_converter

QUANTIZED_OPSET = 13
CONVOLUTIONS = frozenset({'Conv', 'ConvTranspose', 'MatMul', 'Gemm'})
KEPT_FLOAT = frozenset({'Softmax', 'MatMul', 'Gemm', 'Shape'})
QDQ_OPS = frozenset({'QuantizeLinear', 'DequantizeLinear'})
# GraphBuilder's node names (graphs/graph_editing.py) and its renamed network input.
BUILDER_NODE = re.compile(r'^[a-z_]+/[A-Za-z]+_node_\d+$')
BUILDER_INPUT = re.compile(r'^[a-z_]+/.+_internal_\d+$')


def network_input(model: onnx.ModelProto) -> str:
    """Return the tensor the builder feeds the upstream network (its `*_internal_N` input)."""
    produced = {output for node in model.graph.node if BUILDER_NODE.match(node.name)
                for output in node.output}
    consumed = {name for node in model.graph.node if not BUILDER_NODE.match(node.name)
                for name in node.input}
    candidates = sorted(name for name in produced & consumed if BUILDER_INPUT.match(name))
    if len(candidates) != 1:
        raise ValueError(f'expected one network input made by the graph builder, found '
                         f'{candidates or "none"}: is this a served graph of the package?')
    return str(candidates[0])


def network_nodes(model: onnx.ModelProto) -> list[str]:
    """Return the names of the served graph's nodes to quantize, in graph order."""
    nodes = [node for node in model.graph.node if not BUILDER_NODE.match(node.name)]
    unnamed = [node.op_type for node in nodes if not node.name]
    if unnamed:
        raise ValueError(f'the network has {len(unnamed)} unnamed nodes ({unnamed[0]} first): '
                         'quantization names the nodes it quantizes')
    features = {network_input(model)}
    on_data_path = set()
    for node in _in_topological_order(nodes):
        if node.op_type != 'Shape' and any(name in features for name in node.input):
            on_data_path.add(node.name)
            features.update(node.output)
    consumers: dict[str, list[onnx.NodeProto]] = defaultdict(list)
    for node in nodes:
        for name in node.input:
            consumers[name].append(node)
    leads: dict[str, bool] = {}

    def leads_to_convolution(node: onnx.NodeProto) -> bool:
        if node.name not in leads:
            leads[node.name] = False  # no cycles in ONNX; guards the recursion all the same
            leads[node.name] = any(after.op_type in CONVOLUTIONS or leads_to_convolution(after)
                                   for output in node.output for after in consumers[output])
        return leads[node.name]

    return [node.name for node in nodes if node.name in on_data_path
            and node.op_type not in KEPT_FLOAT
            and (node.op_type in CONVOLUTIONS or leads_to_convolution(node))]


def _in_topological_order(nodes: Iterable[onnx.NodeProto]) -> list[onnx.NodeProto]:
    """Return `nodes` so that each comes after the nodes of the list it reads (stable)."""
    pending = list(nodes)
    produced_by = {output: node.name for node in pending for output in node.output}
    done: set[str] = set()
    ordered = []
    while pending:
        ready = [node for node in pending if all(
            produced_by.get(name) in (None, *done) or produced_by.get(name) == node.name
            for name in node.input)]
        if not ready:
            raise ValueError(f'the network has a cycle at {pending[0].name}')
        for node in ready:
            done.add(node.name)
        ordered.extend(ready)
        pending = [node for node in pending if node.name not in done]
    return ordered


def at_quantization_opset(model: onnx.ModelProto) -> onnx.ModelProto:
    """Return `model` converted to QUANTIZED_OPSET (per-channel scales need QuantizeLinear 13)."""
    converted: onnx.ModelProto = version_converter.convert_version(model, QUANTIZED_OPSET)
    return converted


def float_step_problems(quantized: onnx.ModelProto, float_model: onnx.ModelProto) -> list[str]:
    """
    Say where the quantized graph is not float outside its network (empty when it is).

    Checks that the builder's nodes are all there with their operator types, that no
    Quantize/Dequantize pair reads or writes a tensor only the builder's nodes use, and that
    the graph's inputs and outputs keep their element types.
    """
    problems = []
    builder = {node.name: node.op_type for node in float_model.graph.node
               if BUILDER_NODE.match(node.name)}
    kept = {node.name: node.op_type for node in quantized.graph.node if node.name in builder}
    if kept != builder:
        missing = sorted(set(builder) - set(kept))
        problems.append(f'{len(missing)} pre- or post-processing nodes changed or missing '
                        f'({missing[:3]})')
    builder_tensors = {name for node in float_model.graph.node if node.name in builder
                       for name in node.output}
    network_reads = {name for node in float_model.graph.node if node.name not in builder
                     for name in node.input}
    outside = builder_tensors - network_reads
    for node in quantized.graph.node:
        if node.op_type in QDQ_OPS and set(node.input) & outside:
            problems.append(f'{node.name} quantizes {sorted(set(node.input) & outside)[0]}, '
                            'a tensor outside the network')
    for kind in ('input', 'output'):
        before = {t.name: t.type.tensor_type.elem_type for t in getattr(float_model.graph, kind)}
        after = {t.name: t.type.tensor_type.elem_type for t in getattr(quantized.graph, kind)}
        if before != after:
            problems.append(f'the graph {kind}s changed: {before} -> {after}')
    return problems
