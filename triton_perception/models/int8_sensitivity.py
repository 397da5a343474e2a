"""
Which blocks of a network lose its output in INT8, and which to keep float: `--keep-float auto`.

Quantizing TwinLiteNet whole lost lanes that the float graph finds (the guard's lanes agreement
fell below its threshold on drives the calibration never saw) while the ego lane held: the error
is not spread evenly, a few blocks carry most of it. The sensitivity pass measures that, block
by block, as onnxruntime will run the result: each block quantized alone (every other node
float, the calibration's own ranges from its cache) and run on calibration frames against the
float graph, scored by how much of the output's mask (e.g. the lane pixels) still agrees. The
most sensitive blocks are then kept float, worst first, until the graph with every other block
quantized agrees to a target; the guard judges the result on drives, as before.

A block is a module of the exporter's node names, two levels deep (`/encoder/level2.0/d4/conv/
Conv` is in `/encoder/level2.0`), so that a block is a unit of the network's own design (a
residual stage, an attention, an upsampling) rather than a single node: one node of a residual
stage kept float still sits between Quantize/Dequantize pairs of its neighbours.
Pure Python and onnxruntime: no ROS, no server.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Mapping, Sequence

import numpy as np
from numpy.typing import NDArray

from triton_perception.models.int8_quantizer import CPU_FLAVOUR, QuantizeJob
from triton_perception.models.shipped_models import ModelInstallError

BLOCK_DEPTH = 2
# What `--keep-float auto` judges per step: the output and the mask threshold (lane_graph.py:
# lane_probability >= 128 exactly where the float head says lane). Steps not named keep none.
SENSITIVE_OUTPUTS = {'lane_model': ('lane_probability', 128)}
# The lane-mask agreement (mean IoU over frames) the graph must reach with the kept blocks.
DEFAULT_TARGET = 0.95
SENSITIVITY_FRAMES = 16
# --calibration-method's names and onnxruntime's CalibrationMethod members.
CALIBRATION_METHODS = {'minmax': 'MinMax', 'entropy': 'Entropy', 'percentile': 'Percentile'}
KEEP_FLOAT_WORDS = ('auto', 'none')
Array = NDArray[np.uint8 | np.float32 | np.int32]
Feed = Mapping[str, Array]


@dataclass(frozen=True)
class BlockLoss:
    """One block quantized alone: its nodes and the output's agreement with the float graph."""

    block: str
    nodes: tuple[str, ...]
    agreement: float


@dataclass(frozen=True)
class KeptFloat:
    """The nodes kept float, why (the ranking) and the agreement with every other block INT8."""

    nodes: tuple[str, ...] = ()
    blocks: tuple[str, ...] = ()
    agreement: float | None = None
    whole_agreement: float | None = None  # every block quantized
    ranking: tuple[BlockLoss, ...] = field(default=())

    def record(self) -> dict[str, object]:
        """Return the record's `kept_float` entry (model_int8.onnx.json)."""
        return {'blocks': list(self.blocks), 'nodes': list(self.nodes),
                'lane_mask_agreement': self.agreement,
                'lane_mask_agreement_all_int8': self.whole_agreement,
                'sensitivity': [{'block': loss.block, 'nodes': len(loss.nodes),
                                 'agreement': round(loss.agreement, 4)}
                                for loss in self.ranking]}


class KeepFloatError(ModelInstallError):
    """A `--keep-float` or `--calibration-method` value the command does not know (one line)."""


@dataclass(frozen=True)
class Int8Options:
    """How `models quantize` quantizes: the calibration method and what stays float."""

    method: str = 'minmax'
    keep_float: str | tuple[str, ...] = 'auto'  # 'auto', 'none' or node and block names
    target: float = DEFAULT_TARGET


def parse_keep_float(text: str) -> str | tuple[str, ...]:
    """Return `--keep-float`'s value: 'auto', 'none' or the names; KeepFloatError if empty."""
    if text in KEEP_FLOAT_WORDS:
        return text
    names = tuple(name.strip() for name in text.split(',') if name.strip())
    if not names:
        raise KeepFloatError(f'--keep-float {text!r}: give auto, none or NODE[,NODE...]')
    return names


def check_names(names: Sequence[str], graphs: Sequence[Sequence[str]]) -> None:
    """Raise KeepFloatError, one line, for a name that no graph's `named_nodes` knows."""
    for name in names:
        if not any(designates(name, node) for nodes in graphs for node in nodes):
            named_nodes([name], [node for nodes in graphs for node in nodes])


def calibration_method(name: str) -> object:
    """Return onnxruntime's CalibrationMethod for `name`; KeepFloatError (one line) if unknown."""
    from onnxruntime.quantization import CalibrationMethod  # noqa: PLC0415

    if name not in CALIBRATION_METHODS:
        raise KeepFloatError(f'unknown calibration method {name!r}: choose one of '
                             f"{', '.join(CALIBRATION_METHODS)}")
    return getattr(CalibrationMethod, CALIBRATION_METHODS[name])


def block_of(node: str) -> str:
    """Return the block (module path, BLOCK_DEPTH levels) of an exporter's node name."""
    modules = node.split('/')[1:-1] if node.startswith('/') else []
    return '/' + '/'.join(modules[:BLOCK_DEPTH]) if modules else node


def blocks_of(nodes: Sequence[str]) -> dict[str, list[str]]:
    """Return `nodes` grouped by block, blocks in the order of their first node."""
    blocks: dict[str, list[str]] = {}
    for node in nodes:
        blocks.setdefault(block_of(node), []).append(node)
    return blocks


def designates(name: str, node: str) -> bool:
    """Return whether `name` is the node `node` or a module (any depth) that holds it."""
    return node == name or node.startswith(name.rstrip('/') + '/')


def named_nodes(names: Sequence[str], nodes: Sequence[str]) -> list[str]:
    """
    Return the quantizable nodes that `names` (nodes, blocks, modules) designate, graph order.

    Raises KeepFloatError, one line, for a name that designates none of `nodes`.
    """
    import difflib  # noqa: PLC0415

    for name in names:
        if not any(designates(name, node) for node in nodes):
            near = difflib.get_close_matches(name, [*blocks_of(nodes), *nodes], 3)
            raise KeepFloatError(f'--keep-float: {name!r} is no quantized node or block of the '
                                 f"graph{' (nearest: ' + ', '.join(near) + ')' if near else ''}")
    return [node for node in nodes if any(designates(name, node) for name in names)]


def mask_agreement(reference: Sequence[Array],
                   candidate: Sequence[Array], threshold: float) -> float:
    """Return the mean over frames of the IoU of the masks `>= threshold` (1 when both empty)."""
    scores = []
    for before, after in zip(reference, candidate, strict=True):
        old, new = before >= threshold, after >= threshold
        union = int(np.count_nonzero(old | new))
        scores.append(np.count_nonzero(old & new) / union if union else 1.0)
    return float(np.mean(scores)) if scores else 1.0


def outputs_of(graph: Path, feeds: Sequence[Feed], output: str) -> list[Array]:
    """Run `graph` with onnxruntime on the CPU, one thread, and return `output` per feed."""
    import onnxruntime  # noqa: PLC0415

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    session = onnxruntime.InferenceSession(str(graph), options,
                                           providers=['CPUExecutionProvider'])
    return [session.run([output], dict(feed))[0] for feed in feeds]


@dataclass(frozen=True)
class Probe:
    """What each trial is judged on: the frames' feeds, the output, its threshold, the float's."""

    feeds: tuple[Feed, ...]
    output: str
    threshold: float
    reference: tuple[Array, ...]

    def agreement(self, graph: Path) -> float:
        """Return the mask agreement of `graph`'s output with the float graph's."""
        return mask_agreement(self.reference, outputs_of(graph, self.feeds, self.output),
                              self.threshold)


def rank_blocks(job: QuantizeJob, nodes: Sequence[str], probe: Probe,
                scratch: Path) -> list[BlockLoss]:
    """Return every block quantized alone against the float graph, the most sensitive first."""
    losses = []
    for number, (block, members) in enumerate(blocks_of(nodes).items()):
        graph = job.write(scratch / f'block_{number}.onnx', CPU_FLAVOUR, members)
        losses.append(BlockLoss(block, tuple(members), probe.agreement(graph)))
        graph.unlink()
    return sorted(losses, key=lambda loss: loss.agreement)


def keep_sensitive_float(job: QuantizeJob, nodes: Sequence[str], probe: Probe, scratch: Path,
                         target: float = DEFAULT_TARGET,
                         log: Callable[[str], None] = print) -> KeptFloat:
    """
    Keep the most sensitive blocks float, worst first, until the rest agrees to `target`.

    The agreement is the output's mask over the probe's frames, every block not kept float
    quantized at once (the errors of several blocks add up: the single-block figures rank, the
    whole graph decides). Keeps at most all but one block.
    """
    whole = probe.agreement(job.write(scratch / 'whole.onnx', CPU_FLAVOUR, nodes))
    log(f'sensitivity: every block INT8: {probe.output} agreement {whole:.3f} '
        f'(target {target:g})')
    if whole >= target:
        return KeptFloat(agreement=whole, whole_agreement=whole)
    ranking = rank_blocks(job, nodes, probe, scratch)
    log('sensitivity: most sensitive blocks: ' + ', '.join(
        f'{loss.block} {loss.agreement:.3f}' for loss in ranking[:5]))
    agreement, kept, exclude = whole, ranking[:0], set()
    for count in range(1, len(ranking)):
        kept = ranking[:count]
        exclude = {node for loss in kept for node in loss.nodes}
        graph = job.write(scratch / 'kept.onnx', CPU_FLAVOUR, nodes, sorted(exclude))
        agreement = probe.agreement(graph)
        log(f'sensitivity: {count} block(s) float ({kept[-1].block} added): agreement '
            f'{agreement:.3f}')
        if agreement >= target:
            break
    return KeptFloat(tuple(node for node in nodes if node in exclude),
                     tuple(loss.block for loss in kept), agreement, whole, tuple(ranking))
