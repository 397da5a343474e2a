"""
What TensorRT's ONNX parser takes of a QDQ graph: the checks `engines build --int8` relies on.

TensorRT builds a graph with QuantizeLinear/DequantizeLinear as explicit quantization
(NVIDIA TensorRT Developer Guide, "Working with Quantized Types", "Explicit Quantization"):
- quantization is symmetric: every zero point is 0;
- a DequantizeLinear takes an INT8 tensor: an INT8 initializer (pre-quantized weights) or the
  output of a QuantizeLinear to INT8. The parser refuses one fed by anything else, e.g. an
  INT32 bias behind a DequantizeLinear as onnxruntime's `quantize_static` writes by default:
  "only activation types allowed as input to this layer" (onnx/onnx-tensorrt#850,
  microsoft/onnxruntime#14229). Biases stay float, as NVIDIA's own tools write them;
- activations are quantized per tensor; per-channel scales only on weights, along the output
  channel (axis 0 of a Conv's or Gemm's weights, axis 1 of a ConvTranspose's, whose weights are
  laid out input channels first).
The opset and IR version the Orin's TensorRT reads are checked by onnx_target.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from onnx import ModelProto, NodeProto

# The weight input's output-channel axis, by the op that consumes the dequantized weights.
OUTPUT_CHANNEL_AXIS = {'Conv': 0, 'Gemm': 0, 'ConvTranspose': 1}


def tensorrt_qdq_problems(model: ModelProto) -> list[str]:
    """Return why TensorRT's ONNX parser would refuse the QDQ nodes of `model` ([] if none)."""
    from onnx import numpy_helper, TensorProto  # noqa: PLC0415

    initializers = {tensor.name: tensor for tensor in model.graph.initializer}
    producers = {output: node for node in model.graph.node for output in node.output}
    consumers: dict[str, list[NodeProto]] = {}
    for node in model.graph.node:
        for name in node.input:
            consumers.setdefault(name, []).append(node)
    problems = []
    for node in model.graph.node:
        if node.op_type not in ('QuantizeLinear', 'DequantizeLinear'):
            continue
        scale = numpy_helper.to_array(initializers[node.input[1]]) \
            if node.input[1] in initializers else None
        zero_point = (numpy_helper.to_array(initializers[node.input[2]])
                      if len(node.input) > 2 and node.input[2] in initializers else None)
        if zero_point is not None and np.any(zero_point != 0):
            problems.append(f'{node.name}: zero point is not 0 (TensorRT quantizes '
                            'symmetrically)')
        if node.op_type == 'QuantizeLinear':
            if zero_point is not None and zero_point.dtype != np.int8:
                problems.append(f'{node.name}: quantizes to {zero_point.dtype}, not INT8')
            continue
        source = node.input[0]
        if source in initializers:
            if initializers[source].data_type != TensorProto.INT8:
                problems.append(f'{node.name}: dequantizes {source}, a '
                                f'{TensorProto.DataType.Name(initializers[source].data_type)} '
                                'initializer, not INT8 (a bias must stay float)')
        elif source not in producers or producers[source].op_type != 'QuantizeLinear':
            problems.append(f'{node.name}: dequantizes {source}, which no QuantizeLinear makes')
        if scale is not None and scale.size > 1:
            problems += _per_channel_problems(node, source in initializers,
                                              consumers.get(node.output[0], []))
    return problems


def _per_channel_problems(node: NodeProto, weights: bool,
                          consumers: list[NodeProto]) -> list[str]:
    """Per-channel scales: only on weights, along the consumer's output-channel axis."""
    if not weights:
        return [f'{node.name}: per-channel scales on an activation (TensorRT takes them per '
                'tensor)']
    axis = next((attribute.i for attribute in node.attribute if attribute.name == 'axis'), 1)
    expected = {OUTPUT_CHANNEL_AXIS.get(consumer.op_type) for consumer in consumers}
    if expected != {axis}:
        return [f'{node.name}: per-channel axis {axis}, not the output channel of '
                f'{", ".join(sorted(consumer.op_type for consumer in consumers))}']
    return []
