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
# The agreement (the probe's first score, mean over its frames) the graph must reach with the
# kept blocks: for lanes the guard's lanes figure, whose threshold is 0.95 (models/lane_probe.py).
DEFAULT_TARGET = 0.95
SENSITIVITY_FRAMES = 16
# --calibration-method's names and onnxruntime's CalibrationMethod members.
CALIBRATION_METHODS = {'minmax': 'MinMax', 'entropy': 'Entropy', 'percentile': 'Percentile'}
KEEP_FLOAT_WORDS = ('auto', 'none')
Array = NDArray[np.uint8 | np.float32 | np.int32 | np.int64]
Feed = Mapping[str, Array]
Outputs = Mapping[str, Array]
# One frame's agreement of a candidate's outputs with the float graph's (1 = the same).
FrameScore = Callable[[Outputs, Outputs, Feed], float]


@dataclass(frozen=True)
class BlockLoss:
    """One block quantized alone: its nodes and the output's agreement with the float graph."""

    block: str
    nodes: tuple[str, ...]
    agreement: tuple[float, ...]  # the probe's scores


@dataclass(frozen=True)
class KeptFloat:
    """The nodes kept float, why (the ranking) and the agreement with every other block INT8."""

    nodes: tuple[str, ...] = ()
    blocks: tuple[str, ...] = ()
    agreement: tuple[float, ...] = ()
    whole_agreement: tuple[float, ...] = ()  # every block quantized
    ranking: tuple[BlockLoss, ...] = field(default=())

    def record(self) -> dict[str, object]:
        """Return the record's `kept_float` entry (model_int8.onnx.json)."""
        return {'blocks': list(self.blocks), 'nodes': list(self.nodes),
                'agreement': _rounded(self.agreement),
                'agreement_all_int8': _rounded(self.whole_agreement),
                'sensitivity': [{'block': loss.block, 'nodes': len(loss.nodes),
                                 'agreement': _rounded(loss.agreement)}
                                for loss in self.ranking]}


def _rounded(figures: Sequence[float]) -> list[float]:
    return [round(figure, 4) for figure in figures]


class KeepFloatError(ModelInstallError):
    """A `--keep-float` or `--calibration-method` value the command does not know (one line)."""


@dataclass(frozen=True)
class Int8Options:
    """How `models quantize` quantizes: the calibration method and what stays float."""

    method: str = 'minmax'
    keep_float: str | tuple[str, ...] = 'none'  # 'none', 'auto' or node and block names
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


def block_of(node: str, deepest: int | None = None) -> str:
    """
    Return the block of an exporter's node name: its module path, BLOCK_DEPTH levels deep.

    One level when its top module nests no deeper than BLOCK_DEPTH (`deepest`, default the
    node's own depth): `/up_1_1/deconv/ConvTranspose` is in `/up_1_1`, with its BatchNorm and
    PReLU, because a float node alone between Quantize/Dequantize pairs has its weights
    quantized per tensor by onnxruntime's optimizer (WeightBiasQuantization) when it loads.
    """
    modules = node.split('/')[1:-1] if node.startswith('/') else []
    if not modules:
        return node
    depth = BLOCK_DEPTH if (deepest or len(modules)) > BLOCK_DEPTH else 1
    return '/' + '/'.join(modules[:depth])


def blocks_of(nodes: Sequence[str]) -> dict[str, list[str]]:
    """Return `nodes` grouped by block, blocks in the order of their first node."""
    deepest: dict[str, int] = {}
    for node in nodes:
        modules = node.split('/')[1:-1] if node.startswith('/') else []
        if modules:
            deepest[modules[0]] = max(deepest.get(modules[0], 0), len(modules))
    blocks: dict[str, list[str]] = {}
    for node in nodes:
        top = node.split('/')[1] if node.startswith('/') else ''
        blocks.setdefault(block_of(node, deepest.get(top)), []).append(node)
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


def mask_score(output: str, threshold: float) -> FrameScore:
    """Return the per-frame IoU of `output >= threshold` of two runs (1 when both are empty)."""
    def score(before: Outputs, after: Outputs, feed: Feed) -> float:
        old, new = before[output] >= threshold, after[output] >= threshold
        union = int(np.count_nonzero(old | new))
        return np.count_nonzero(old & new) / union if union else 1.0
    return score


def outputs_of(graph: Path, feeds: Sequence[Feed]) -> list[Outputs]:
    """Run `graph` with onnxruntime on the CPU, one thread, and return its outputs per feed."""
    import onnxruntime  # noqa: PLC0415

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    session = onnxruntime.InferenceSession(str(graph), options,
                                           providers=['CPUExecutionProvider'])
    names = [output.name for output in session.get_outputs()]
    return [dict(zip(names, session.run(names, dict(feed)))) for feed in feeds]


@dataclass(frozen=True)
class Probe:
    """What each trial is judged on: frames, the float graph's outputs, per-frame scores."""

    feeds: tuple[Feed, ...]
    reference: tuple[Outputs, ...]
    scores: tuple[FrameScore, ...]  # the first decides; the others rank blocks it ties

    def agreement(self, graph: Path) -> tuple[float, ...]:
        """Return each score of `graph`'s outputs against the float graph's, mean over frames."""
        outputs = outputs_of(graph, self.feeds)
        return tuple(float(np.mean([score(before, after, feed) for before, after, feed in zip(
            self.reference, outputs, self.feeds, strict=True)])) for score in self.scores)


def rank_blocks(job: QuantizeJob, nodes: Sequence[str], probe: Probe, scratch: Path,
                log: Callable[[str], None] = print) -> list[BlockLoss]:
    """Return every block quantized alone against the float graph, the most sensitive first."""
    losses = []
    for number, (block, members) in enumerate(blocks_of(nodes).items()):
        graph = job.write(scratch / f'block_{number}.onnx', CPU_FLAVOUR, members)
        losses.append(BlockLoss(block, tuple(members), probe.agreement(graph)))
        graph.unlink()
        log(f'sensitivity: {block} alone INT8 ({len(members)} nodes): agreement '
            f'{_shown(losses[-1].agreement)}')
    return sorted(losses, key=lambda loss: loss.agreement)


def keep_sensitive_float(job: QuantizeJob, nodes: Sequence[str], probe: Probe, scratch: Path,
                         target: float = DEFAULT_TARGET,
                         log: Callable[[str], None] = print) -> KeptFloat:
    """
    Keep the most sensitive blocks float, worst first, until the rest agrees to `target`.

    The agreement is the probe's first score over its frames, every block not kept float
    quantized at once (the errors of several blocks add up: the single-block figures rank, the
    whole graph decides). Keeps at most all but one block.
    """
    whole = probe.agreement(job.write(scratch / 'whole.onnx', CPU_FLAVOUR, nodes))
    log(f'sensitivity: every block INT8: agreement {_shown(whole)} (target {target:g})')
    if whole[0] >= target:
        return KeptFloat(agreement=whole, whole_agreement=whole)
    ranking = rank_blocks(job, nodes, probe, scratch, log)
    log('sensitivity: most sensitive blocks: ' + ', '.join(
        f'{loss.block} {_shown(loss.agreement)}' for loss in ranking[:5]))
    agreement, kept, exclude = whole, ranking[:0], set()
    for count in range(1, len(ranking)):
        kept = ranking[:count]
        exclude = {node for loss in kept for node in loss.nodes}
        graph = job.write(scratch / 'kept.onnx', CPU_FLAVOUR, nodes, sorted(exclude))
        agreement = probe.agreement(graph)
        log(f'sensitivity: {count} block(s) float ({kept[-1].block} added): agreement '
            f'{_shown(agreement)}')
        if agreement[0] >= target:
            break
    return KeptFloat(tuple(node for node in nodes if node in exclude),
                     tuple(loss.block for loss in kept), agreement, whole, tuple(ranking))


def _shown(figures: Sequence[float]) -> str:
    return ' / '.join(f'{figure:.3f}' for figure in figures)
