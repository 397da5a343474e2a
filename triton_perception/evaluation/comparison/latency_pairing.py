"""
What a drive loses to the machine's speed: a run paired with the lockstep run, frame by frame.

In lockstep every frame is answered; at recorded timing, or at a publisher rate, the machine
answers what it keeps up with. Each such run is paired with the lockstep run by `compare_runs`
(the code of `bag compare`: the same agreements per frame), and a frame the lockstep run
answered and the run did not counts as agreement 0 for each figure it lacks, as a labelled
frame without an output counts as all misses: on a robot that frame had no result. A figure's
loss is 1 - its mean agreement over the lockstep run's frames; its 95 % interval is the
bootstrap's (frames resampled); it is flagged, as in `bag compare`, when the whole interval of
the agreement lies below 1 - the figure's threshold. Over drives, the drives' mean agreements
are resampled as drives (fleet).
"""
from __future__ import annotations

from typing import Mapping, Sequence, TypedDict

import numpy as np

from triton_perception.evaluation.comparison.fleet import fleet_comparison
from triton_perception.evaluation.comparison.run_comparison import change_figure, compare_runs, Run
from triton_perception.evaluation.comparison.run_pairing import FIGURES, Pairing
from triton_perception.evaluation.metrics import ChangeFigure, FleetComparison, RunComparison

# Which output each figure needs: a frame without it in the run counts 0 for the figure.
OUTPUT_OF = {'detection': 'detections', 'identity': 'tracks', 'lanes': 'lanes',
             'ego_lane': 'lanes', 'drivable_area': 'masks'}


class Loss(TypedDict):
    """A figure's loss (1 - mean agreement) and its 95 % interval, low to high."""

    loss: float
    interval: list[float]


def unanswered(pairing: Pairing, figure: str) -> list[int]:
    """Return the stamps the lockstep run answered and the other did not, for `figure`."""
    return pairing.unpaired.get(f'{OUTPUT_OF[figure]}_old_only', [])


def cost_of(lockstep: Run, run: Run, thresholds: Mapping[str, float],
            class_names: list[str]) -> RunComparison:
    """
    Pair `run` with the `lockstep` run; return the comparison with unanswered frames as 0.

    Its `figures` and `per_frame` count every frame the lockstep run answered; `unpaired` says
    how many the run left unanswered, per output.
    """
    comparison, pairing = compare_runs(lockstep, run, thresholds, class_names)
    for name in FIGURES:
        paired = pairing.per_frame.get(name)
        if not paired:
            continue
        values = dict(paired) | dict.fromkeys(unanswered(pairing, name), 0.0)
        comparison['figures'][name] = change_figure(np.array(list(values.values())),
                                                    thresholds[name])
        comparison['per_frame'][name] = {str(stamp): round(value, 4)
                                         for stamp, value in sorted(values.items())}
    comparison['flagged'] = [name for name, figure in comparison['figures'].items()
                             if figure['flagged']]
    return comparison


def loss_of(figure: ChangeFigure) -> Loss:
    """Return a figure's loss (1 - agreement) and its interval, low to high."""
    low, high = figure['interval']
    return {'loss': round(1.0 - figure['agreement'], 4),
            'interval': [round(1.0 - high, 4), round(1.0 - low, 4)]}


def over_drives(drives: Mapping[str, RunComparison],
                thresholds: Mapping[str, float]) -> FleetComparison:
    """Return one run's costs over drives: intervals over the drives' means and over frames."""
    return fleet_comparison(drives, thresholds)


def first_flagged(runs: Sequence[tuple[str, float | None, list[str]]]
                  ) -> tuple[str, float, list[str]] | None:
    """Return the lowest-rate run (label, rate, flagged figures) with a flagged loss, or None."""
    rated = sorted(((label, rate, flagged) for label, rate, flagged in runs
                    if rate is not None and flagged), key=lambda run: run[1] or 0.0)
    if not rated:
        return None
    label, rate, flagged = rated[0]
    return label, float(rate or 0.0), flagged
