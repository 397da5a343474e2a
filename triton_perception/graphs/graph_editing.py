"""
Appending operators to an upstream ONNX graph, deterministically (same input file, same bytes).

The served graphs keep the upstream network as it is and add pre- and post-processing around
it with plain ONNX operators that onnx-tensorrt supports in TensorRT 8.6 and 10.x
(`graphs/tensorrt_support.py` lists them; a test checks every served graph against it).
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import overload, Sequence

import numpy as np
import onnx
from onnx import helper, numpy_helper

from triton_perception.graphs.onnx_target import default_opset, fit_to_target


class GraphBuilder:
    """Adds inputs, constants and nodes to `model`'s graph under unique names."""

    def __init__(self, model: onnx.ModelProto, prefix: str) -> None:
        """
        Edit `model` in place; every name this builder makes starts with `prefix`.

        Raises ValueError if the model uses opset 13 or later, where operators the builder writes
        take their axes as inputs instead of attributes.
        """
        self.model = model
        self._prefix = prefix
        self._count = 0
        self._opset = default_opset(model)
        if self._opset >= 13:
            raise ValueError(f'the ONNX file uses opset {self._opset}; the graph builder writes '
                             'opset 11-12 operators (axes as attributes): export with opset 12')

    def _name(self, hint: str) -> str:
        self._count += 1
        return f'{self._prefix}/{hint}_{self._count}'

    def input(self, name: str, elem_type: int,  # noqa: A003 (the graph's input, as ONNX says)
              shape: Sequence[int | str]) -> str:
        """
        Add a graph input of ONNX element type `elem_type` and `shape` (dims or symbolic names).

        Returns `name`, for use as a node input.
        """
        self.model.graph.input.append(helper.make_tensor_value_info(name, elem_type, list(shape)))
        return name

    def replace_input(self, old: str, new: str, elem_type: int,
                      shape: Sequence[int | str]) -> tuple[str, str]:
        """
        Replace graph input `old` by a new input `new`.

        Returns (new, internal), where `internal` is the tensor the upstream nodes now read and the
        caller must produce.
        """
        internal = self._name(f'{old}_internal')
        for node in self.model.graph.node:
            node.input[:] = [internal if name == old else name for name in node.input]
        kept = [tensor for tensor in self.model.graph.input if tensor.name != old]
        del self.model.graph.input[:]
        self.model.graph.input.extend(kept)
        return self.input(new, elem_type, shape), internal

    def constant(self, value: object, hint: str) -> str:
        """Add `value` as an initializer under a unique name made from `hint`; return that name."""
        name = self._name(hint)
        self.model.graph.initializer.append(numpy_helper.from_array(np.asarray(value), name))
        return name

    @overload
    def node(self, op_type: str, inputs: Sequence[str], outputs: int,
             **attributes: object) -> tuple[str, ...]: ...

    @overload
    def node(self, op_type: str, inputs: Sequence[str], outputs: Sequence[str] | None = None,
             **attributes: object) -> str: ...

    def node(self, op_type: str, inputs: Sequence[str], outputs: Sequence[str] | int | None = None,
             **attributes: object) -> str | tuple[str, ...]:
        """
        Append one node; returns its output name, or the tuple of names of `outputs` (a count).

        Named `outputs` give one name: every node built here that names its outputs has one.
        """
        if outputs is None or isinstance(outputs, int):
            names = [self._name(op_type.lower()) for _ in range(outputs or 1)]
        else:
            names = list(outputs)
        node = helper.make_node(op_type, list(inputs), names, name=self._name(f'{op_type}_node'))
        # As make_node(**attributes) adds them; apart, because its named arguments are not ONNX
        # attributes and an attribute's value can be of any ONNX type.
        node.attribute.extend(helper.make_attribute(key, value)
                              for key, value in sorted(attributes.items()) if value is not None)
        self.model.graph.node.append(node)
        return names[0] if outputs is None or len(names) == 1 and not isinstance(outputs, int) \
            else tuple(names)

    def slice(self, tensor: str, start: int, end: int,  # noqa: A003 (the ONNX Slice op)
              axis: int) -> str:
        """Append a Slice of `tensor` to [start, end) along `axis`; return the output's name."""
        name: str = self.node('Slice', [tensor,
                                        self.constant(np.array([start], np.int64), 'start'),
                                        self.constant(np.array([end], np.int64), 'end'),
                                        self.constant(np.array([axis], np.int64), 'axis')])
        return name

    def set_outputs(self, outputs: Sequence[tuple[str, int, Sequence[int | str]]]) -> None:
        """Replace the graph's outputs: (name, ONNX element type, shape: dims or names) each."""
        del self.model.graph.output[:]
        self.model.graph.output.extend(helper.make_tensor_value_info(name, elem_type, list(shape))
                                       for name, elem_type, shape in outputs)


def check_single_input(model: onnx.ModelProto) -> tuple[str, list[int]]:
    """Return the name and static NCHW shape of the model's one image input."""
    initializers = {tensor.name for tensor in model.graph.initializer}
    inputs = [tensor for tensor in model.graph.input if tensor.name not in initializers]
    if len(inputs) != 1:
        raise ValueError(f'expected one image input, found {[tensor.name for tensor in inputs]}')
    dims = [dim.dim_value for dim in inputs[0].type.tensor_type.shape.dim]
    if len(dims) != 4 or 0 in dims:
        raise ValueError(f'input {inputs[0].name} has shape {dims}; expected a static [1, 3, H, '
                         'W] (export with a fixed image size)')
    return inputs[0].name, dims


def sort_topologically(graph: onnx.GraphProto) -> None:
    """
    Order the nodes so each comes after what it reads.

    Added pre-processing feeds the upstream network. Stable, so the same graph always comes out the
    same.
    """
    available = {tensor.name for tensor in graph.input} | {
        tensor.name for tensor in graph.initializer} | {''}
    pending, ordered = list(graph.node), []
    while pending:
        ready = [node for node in pending if all(name in available for name in node.input)]
        if not ready:
            raise ValueError(f'the graph has a cycle or reads an undefined tensor at '
                             f'{pending[0].name}: {list(pending[0].input)}')
        for node in ready:
            available.update(node.output)
        ordered.extend(ready)
        pending = [node for node in pending if node not in ready]
    del graph.node[:]
    graph.node.extend(ordered)


def save_graph(model: onnx.ModelProto, destination: Path) -> None:
    """
    Check the graph, then write it atomically (a reader never sees half a file).

    Its IR version is lowered to what its opset needs (graphs/onnx_target.py), so that the
    oldest onnxruntime the package supports loads it.
    """
    sort_topologically(model.graph)
    fit_to_target(model)
    onnx.checker.check_model(model)
    destination = Path(destination)
    destination.parent.mkdir(parents=True, exist_ok=True)
    partial = destination.with_name(destination.name + '.partial')
    partial.write_bytes(model.SerializeToString(deterministic=True))
    os.replace(partial, destination)
