"""
The overhead budget: where one frame's end-to-end time goes, stage by stage.

Pure arithmetic on what the bench gathers per frame while frames go one at a time:
- the end-to-end time the bench measured (Image published -> last result received);
- the node's own stage times (the deltas of its /diagnostics stage sums over that one frame);
- Triton's statistics over that one request (the ensemble's `success` time and each step's
  queue and compute timers);
- the result's transport, from the DDS source and reception timestamps of the result message.

The stages add up to the end-to-end time: what the others do not explain is the frame's way
from the bench's publish call to the node's callback (`frame_to_node`, the remainder).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np

from triton_perception.bench.bench_schema import BudgetSummary, CpuOutsideGraph
from triton_perception.bench.session import STEP_TIMERS
from triton_perception.frames import NodeStatus, STAGES

# Budget rows in the order a frame meets them; Triton's per-step rows go where TRITON_STEPS is.
FRAME_TO_NODE = 'frame_to_node'
TRITON_STEPS = 'triton_steps'
ROWS = (FRAME_TO_NODE, 'node_to_request', 'client_server', TRITON_STEPS, 'triton_ensemble',
        'node_to_publish', 'result_to_subscriber')
LABELS = {
    FRAME_TO_NODE: 'frame: publish -> node callback (remainder)',
    'node_to_request': 'node: callback -> request sent',
    'client_server': 'gRPC: client <-> server (round trip - Triton request time)',
    'triton_ensemble': 'Triton: ensemble scheduling (request time - steps)',
    'node_to_publish': 'node: response -> published',
    'result_to_subscriber': 'result: publish -> subscriber (DDS timestamps)',
}


def step_row(step: str, timer: str) -> str:
    """Return the budget row of one of Triton's timers in one ensemble step."""
    return f'triton {step} {timer}'


@dataclass(frozen=True)
class TritonRequest:
    """Triton's statistics over one ensemble request: its time and each step's timers, in ms."""

    request_ms: float
    steps: Mapping[str, Mapping[str, float]]  # step -> timer (STEP_TIMERS) -> ms


def triton_request(before: Mapping[str, Mapping[str, int]],
                   after: Mapping[str, Mapping[str, int]], ensemble: str,
                   steps: Sequence[str]) -> TritonRequest | None:
    """
    Return one request's figures from two statistics snapshots (triton_side's format).

    None unless the ensemble and every step succeeded exactly once in between (another request
    slipped in, or the statistics were not updated yet).
    """
    def delta(model: str, key: str) -> int:
        return after.get(model, {}).get(key, 0) - before.get(model, {}).get(key, 0)

    if any(delta(model, 'success_count') != 1 for model in (ensemble, *steps)):
        return None
    return TritonRequest(delta(ensemble, 'success') / 1e6, {
        step: {timer: delta(step, timer) / 1e6 for timer in STEP_TIMERS} for step in steps})


def counted_one_more(earlier: Mapping[str, Mapping[str, int]],
                     later: Mapping[str, Mapping[str, int]], models: Sequence[str]) -> bool:
    """Say whether every one of `models` counts at least one more successful request."""
    return all(later.get(model, {}).get('success_count', 0)
               >= earlier.get(model, {}).get('success_count', 0) + 1 for model in models)


def node_stages(before: Mapping[str, float], before_timed: int, after: Mapping[str, float],
                after_timed: int) -> dict[str, float] | None:
    """
    Return the node's stage ms for one frame from two of its /diagnostics stage sums.

    None unless exactly one timed frame lies between them.
    """
    if after_timed - before_timed != 1 or not set(STAGES) <= set(before) & set(after):
        return None
    return {stage: after[stage] - before[stage] for stage in STAGES}


def stage_means(before: NodeStatus | None, after: NodeStatus | None) -> dict[str, float] | None:
    """Return the node's mean ms per timed frame in each stage between two of its statuses."""
    if before is None or after is None or after.timed <= before.timed:
        return None
    frames = after.timed - before.timed
    sums = node_stages(before.stage_ms_sums, 0, after.stage_ms_sums, 1)
    return ({stage: round(value / frames, 2) for stage, value in sums.items()}
            if sums is not None else None)


def frame_budget(e2e_ms: float, node_ms: Mapping[str, float], triton: TritonRequest,
                 result_ms: float | None) -> dict[str, float]:
    """
    Split one frame's end-to-end ms into the budget rows (they sum to `e2e_ms`).

    `node_ms`: the node's stages (to_request, request, to_publish) for this frame; `result_ms`:
    the result's DDS transport, None where the RMW gives no timestamps (then it is part of the
    remainder).
    """
    rows: dict[str, float] = {}
    steps_ms = 0.0
    for step, timers in triton.steps.items():
        for timer in STEP_TIMERS:
            rows[step_row(step, timer)] = timers[timer]
            steps_ms += timers[timer]
    rows['node_to_request'] = node_ms['to_request']
    rows['client_server'] = node_ms['request'] - triton.request_ms
    rows['triton_ensemble'] = triton.request_ms - steps_ms
    rows['node_to_publish'] = node_ms['to_publish']
    if result_ms is not None:
        rows['result_to_subscriber'] = result_ms
    rows[FRAME_TO_NODE] = e2e_ms - sum(rows.values())
    return {row: rows[row] for row in ordered_rows(rows)}


def ordered_rows(rows: Sequence[str] | Mapping[str, object]) -> list[str]:
    """Return the budget's rows present in `rows`, in ROWS order with the step rows in place."""
    present = list(rows)
    ordered: list[str] = []
    for row in ROWS:
        if row == TRITON_STEPS:
            ordered += [name for name in present if name.startswith('triton ')
                        and name not in LABELS]
        elif row in present:
            ordered.append(row)
    return ordered


def percentiles(values: Sequence[float]) -> dict[str, float | None]:
    """Return the median and p90 of `values` (ms) rounded to 0.01, both None without values."""
    if not values:
        return {'median': None, 'p90': None}
    return {'median': round(float(np.median(values)), 2),
            'p90': round(float(np.percentile(values, 90)), 2)}


def summarise(frames: Sequence[Mapping[str, float]], e2e_ms: Sequence[float],
              reference_median_ms: float | None) -> BudgetSummary:
    """
    Return per row the median and p90 over frames, the e2e time's and the excess over the reference.

    `frames`: frame_budget results; `e2e_ms`: those frames' end-to-end times, in the same order.
    """
    rows = ordered_rows(dict.fromkeys(row for frame in frames for row in frame))
    e2e = percentiles(e2e_ms)
    stages = {row: percentiles([frame[row] for frame in frames if row in frame]) for row in rows}
    # The model steps' own compute, as Triton times it: a yardstick that, unlike the in-process
    # reference, runs in the same stub process under the same conditions as the measured path.
    compute = [figures['median'] for row, figures in stages.items()
               if row.startswith('triton ') and row.endswith(' compute_infer')]
    known = [value for value in compute if value is not None]
    return {
        'frames': len(frames),
        'stages_ms': stages,
        'e2e_ms': e2e,
        'reference_ms': reference_median_ms,
        'beyond_reference_ms': (round(e2e['median'] - reference_median_ms, 2)
                                if e2e['median'] is not None and reference_median_ms else None),
        'beyond_triton_compute_ms': (round(e2e['median'] - sum(known), 2)
                                     if e2e['median'] is not None and known and
                                     len(known) == len(compute) else None),
    }


def row_label(row: str) -> str:
    """Return a budget row's label in the tables: LABELS' wording, or 'Triton: <step timer>'."""
    return LABELS.get(row, f'Triton: {row[len("triton "):]}' if row.startswith('triton ')
                      else row)


@dataclass(frozen=True)
class CpuSplit:
    """CPU seconds over a phase: the node(s), and tritonserver's processes by what they serve."""

    node_s: float
    server_main_s: float  # tritonserver itself: gRPC front end, ensemble scheduler, backends in it
    stub_s: Mapping[str, float]  # Python backend stub processes by the model they serve


def cpu_outside_graph(split: CpuSplit, steps: Sequence[str], graph_step: str,
                      frames: float) -> CpuOutsideGraph:
    """
    Return CPU ms per frame outside the model graph, from a phase's per-process CPU seconds.

    Outside the graph: the node(s), tritonserver itself and the stubs of the ensemble's other
    `steps`. The graph is `graph_step`'s stub process as a whole (its IPC included, so
    `outside_graph_ms` is a lower bound); without a stub of its own (it runs inside
    tritonserver) the graph cannot be told apart by process and `outside_graph_ms` is None.
    Stubs of models outside `steps` (idle here) are reported apart and not counted.
    """
    if frames <= 0:
        return {}

    def per_frame(seconds: float) -> float:
        return round(seconds * 1e3 / frames, 2)

    separable = graph_step in split.stub_s
    other_steps = sum(seconds for step, seconds in split.stub_s.items()
                      if step in steps and step != graph_step)
    return {
        'node_ms': per_frame(split.node_s),
        'server_main_ms': per_frame(split.server_main_s),
        'server_steps_ms': {step: per_frame(seconds) for step, seconds in
                            sorted(split.stub_s.items()) if step in steps},
        'server_other_models_ms': per_frame(sum(
            seconds for step, seconds in split.stub_s.items() if step not in steps)),
        'graph_step': graph_step,
        'graph_ms': per_frame(split.stub_s[graph_step]) if separable else None,
        'outside_graph_ms': (per_frame(split.node_s + split.server_main_s + other_steps)
                             if separable else None),
    }
