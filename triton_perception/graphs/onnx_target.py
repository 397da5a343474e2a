"""
What the oldest onnxruntime the package supports can read: the IR version and opset it writes.

The CPU profile runs the served graphs with the onnxruntime of the machine. On Jammy (JetPack 6)
`rosdep/constraints.txt` keeps apt's NumPy 1.21.5, and with it onnxruntime no newer than
1.12.1 (its later releases need NumPy >= 1.21.6); the constraints name that release as their
lower bound too. onnxruntime's compatibility table (onnxruntime.ai/docs/reference/compatibility,
"ONNX opset support") gives 1.12 ONNX 1.12: IR version 8, opset 17 at the most, and it refuses
a later IR version with "Unsupported model IR version". onnx's `helper.make_model` writes the IR
version of the onnx release that runs it (10 with onnx 1.17) whatever the opset, so every graph
the package writes takes its IR version from here, not from the onnx it was built with.
"""
from __future__ import annotations

from typing import Sequence

import onnx
from onnx import helper

from triton_perception.errors import TritonPerceptionError

ONNXRUNTIME_FLOOR = '1.12.1'  # the oldest release rosdep/constraints.txt allows
MAX_IR_VERSION = 8            # onnxruntime 1.12's table row: ONNX 1.12, IR 8
MAX_OPSET = 17                # ... and opset 17 of the default domain
# The IR version each default-domain opset came with (onnx's docs/Versioning.md), for a graph
# that needs no newer one.
IR_VERSION_OF_OPSET = {11: 6, 12: 7, 13: 7, 14: 7, 15: 8, 16: 8, 17: 8}


class GraphTargetError(TritonPerceptionError, ValueError):
    """A graph uses an opset the oldest supported onnxruntime cannot run."""


def default_opset(model: onnx.ModelProto) -> int:
    """Return the opset of the default ONNX domain that `model` imports."""
    return int(next(entry.version for entry in model.opset_import
                    if entry.domain in ('', 'ai.onnx')))


def make_model(graph: onnx.GraphProto, opset: int) -> onnx.ModelProto:
    """Make a model of `graph` at `opset` with the IR version that opset came with."""
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid('', opset)])
    fit_to_target(model)
    return model


def fit_to_target(model: onnx.ModelProto) -> None:
    """
    Set `model`'s IR version to what its opset needs, where onnx wrote a later one.

    An upstream export keeps an IR version at or below the limit. Raises GraphTargetError for
    an opset above onnxruntime 1.12's.
    """
    opset = default_opset(model)
    if opset > MAX_OPSET:
        raise GraphTargetError(
            f'the graph uses opset {opset}; onnxruntime {ONNXRUNTIME_FLOOR} (the oldest this '
            f'package supports, JetPack 6) reads opset {MAX_OPSET} at the most: export with '
            f'opset 12')
    if model.ir_version > MAX_IR_VERSION:
        model.ir_version = IR_VERSION_OF_OPSET.get(opset, MAX_IR_VERSION)


def target_problems(model: onnx.ModelProto) -> Sequence[str]:
    """Return why onnxruntime ONNXRUNTIME_FLOOR would refuse `model` (empty when it reads it)."""
    problems = []
    if model.ir_version > MAX_IR_VERSION:
        problems.append(f'IR version {model.ir_version} > {MAX_IR_VERSION}')
    if default_opset(model) > MAX_OPSET:
        problems.append(f'opset {default_opset(model)} > {MAX_OPSET}')
    return problems
