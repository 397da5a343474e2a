"""
`bag evaluate --latency-cost`: runs paired with the lockstep run, unanswered frames counting 0.

The runs are outputs bags written as the recorder writes them beside a report.json, over a real
camera bag (test/support/evaluation_runs.py, no Triton): the lockstep run paired with itself
costs nothing; a run at recorded timing that answered every other frame is flagged in every
figure, its losses near one half; the report names the first rate flagged and draws the plot.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from support.evaluation_runs import FRAMES, scene, write_run
from triton_perception.evaluation.comparison.latency_pairing import cost_of, first_flagged, loss_of
from triton_perception.evaluation.comparison.run_comparison import DEFAULT_THRESHOLDS, load_run
from triton_perception.evaluation.figures import detection_labels
from triton_perception.evaluation.latency_cost import cost_markdown, loss_plot

EVERY_OTHER = frozenset(range(1, FRAMES, 2))


def recorded(directory: Path) -> Path:
    """Mark an evaluation folder as replayed at recorded timing, where frames may go unanswered."""
    report = json.loads((directory / 'report.json').read_text())
    report['input']['timing'] = 'recorded'
    (directory / 'report.json').write_text(json.dumps(report))
    return directory


def cost(old: Path, new: Path) -> Any:
    """Pair two evaluation folders as --latency-cost does."""
    names = detection_labels(None)
    return cost_of(load_run(old, names), load_run(new, names), DEFAULT_THRESHOLDS, names)


def test_lockstep_against_itself_costs_nothing(camera: tuple[Path, list[int]],
                                               tmp_path: Path) -> None:
    """Two lockstep runs of the same outputs: every loss 0 with interval [0, 0], none flagged."""
    lockstep = write_run(tmp_path / 'lockstep', camera, scene)
    again = write_run(tmp_path / 'again', camera, scene)
    comparison = cost(lockstep, again)
    assert comparison['flagged'] == [] and set(comparison['figures']) == set(DEFAULT_THRESHOLDS)
    for name, figure in comparison['figures'].items():
        assert loss_of(figure) == {'loss': 0.0, 'interval': [0.0, 0.0]}, name
        assert figure['frames'] == FRAMES


def test_a_run_that_drops_every_other_frame_is_flagged_with_the_figures_that_fell(
        camera: tuple[Path, list[int]], tmp_path: Path) -> None:
    """
    Every other frame unanswered at recorded timing: each figure loses about half, flagged.

    The answered frames agree exactly, so the loss is the unanswered share: 0.5, its interval
    around it; the markdown names the run and the first rate flagged; the plot is drawn.
    """
    lockstep = write_run(tmp_path / 'lockstep', camera, scene)
    dropped = recorded(write_run(tmp_path / 'recorded', camera, scene, skip=EVERY_OTHER))
    comparison = cost(lockstep, dropped)
    assert set(comparison['flagged']) == set(DEFAULT_THRESHOLDS)
    for name, figure in comparison['figures'].items():
        loss = loss_of(figure)
        assert loss['loss'] == 0.5 and figure['frames'] == FRAMES, name
        low, high = loss['interval']
        assert 0.3 < low < 0.5 < high < 0.7, name
    assert comparison['unpaired']['detections_old_only'] == len(EVERY_OTHER)
    # Paired with itself the lockstep run costs nothing; at 5 frames/s nothing, at 10 the drops.
    runs = [('lockstep', None, []), ('rate_5hz', 5.0, []),
            ('recorded', 10.0, comparison['flagged'])]
    assert first_flagged(runs) == ('recorded', 10.0, comparison['flagged'])
    report = {'rates_hz': [5.0], 'drives': {'drive': [
        {'run': label, 'directory': '', 'rate_hz': rate, 'answered': {'detection_node': 1.0},
         'losses': {name: loss_of(figure) for name, figure in comparison['figures'].items()}
         if flagged else {name: {'loss': 0.0, 'interval': [0.0, 0.0]}
                          for name in comparison['figures']},
         'flagged': flagged, 'accuracy': {}, 'comparison': comparison}
        for label, rate, flagged in runs]},
        'first_flagged': {'run': 'drive: recorded', 'rate_hz': 10.0,
                          'figures': comparison['flagged']}}
    text = cost_markdown(report)  # type: ignore[arg-type]
    assert '| recorded | 10 | 100% | 0.500 [' in text and ' !' in text
    assert 'First rate with a flagged loss: 10 frames/s (drive: recorded: detection' in text
    loss_plot(report, tmp_path)  # type: ignore[arg-type]
    assert (tmp_path / 'latency_cost.png').is_file()
