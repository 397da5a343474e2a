"""`--expected` judges accuracy by bootstrap intervals over frames, not by one noisy figure."""
from __future__ import annotations

from typing import Any

import numpy as np

from triton_perception.evaluation.accuracy_report import accuracy_regressions, ACCURACY_TOLERANCE
from triton_perception.evaluation.comparison.expected_frames import (bootstrap_interval,
                                                                     comparison_markdown,
                                                                     frame_comparison)

STAMPS = [str(1_700_000_000_000_000_000 + index * 40_000_000) for index in range(30)]


def report_of(lane_f1: list[float], headline: float) -> dict[str, Any]:
    """Return a report with per-frame lane F1 over STAMPS and a headline lane F1."""
    return {'accuracy': {'lanes': {'F1': headline, 'precision': headline, 'recall': headline}},
            'per_frame': {'lane_F1': dict(zip(STAMPS, lane_f1))}}


def test_two_identical_runs_are_not_a_regression() -> None:
    """The same frames: a zero interval and nothing flagged."""
    values = list(np.linspace(0.5, 1.0, len(STAMPS)))
    comparison = frame_comparison(report_of(values, 0.8), report_of(values, 0.8),
                                  ACCURACY_TOLERANCE)
    assert comparison['lane_F1']['interval'] == [0.0, 0.0]
    assert not comparison['lane_F1']['regressed'] and comparison['lane_F1']['changed_most'] == []
    assert accuracy_regressions(report_of(values, 0.8), report_of(values, 0.8)) == []


def test_a_planted_regression_is_flagged_with_its_frames() -> None:
    """A third of the frames lose 0.6 of their F1: the interval lies below the tolerance."""
    before = [0.9] * len(STAMPS)
    after = [0.3 if index % 3 == 0 else 0.9 for index in range(len(STAMPS))]
    comparison = frame_comparison(report_of(after, 0.7), report_of(before, 0.9),
                                  ACCURACY_TOLERANCE)['lane_F1']
    assert comparison['regressed'] and comparison['interval'][1] < -ACCURACY_TOLERANCE
    assert comparison['mean_difference'] == -0.2
    assert {stamp for stamp, _old, _new in comparison['changed_most']} <= {
        int(STAMPS[index]) for index in range(0, len(STAMPS), 3)}
    problems = accuracy_regressions(report_of(after, 0.7), report_of(before, 0.9))
    assert len(problems) == 1 and problems[0].startswith('per-frame lane_F1: mean change -0.200')
    assert 'REGRESSED' in comparison_markdown({'lane_F1': comparison})[0]


def test_noise_whose_interval_reaches_above_the_tolerance_is_not_a_regression() -> None:
    """
    Frames that move both ways by chance: no verdict, although the headline fell by 0.06.

    The old rule (a headline fall beyond the tolerance) would have flagged it.
    """
    rng = np.random.default_rng(7)
    before = [0.8] * len(STAMPS)
    after = list(0.8 + rng.normal(-0.03, 0.15, len(STAMPS)))
    comparison = frame_comparison(report_of(after, 0.74), report_of(before, 0.8),
                                  ACCURACY_TOLERANCE)['lane_F1']
    assert comparison['interval'][0] < -ACCURACY_TOLERANCE < comparison['interval'][1]
    assert accuracy_regressions(report_of(after, 0.74), report_of(before, 0.8)) == []


def test_a_report_without_per_frame_figures_is_judged_by_its_headline() -> None:
    """Reports written before per-frame figures were kept: the tolerance on the headline."""
    older = {'accuracy': {'lanes': {'F1': 0.9, 'precision': 0.9, 'recall': 0.9}}}
    assert frame_comparison(report_of([0.5] * 30, 0.5), older, ACCURACY_TOLERANCE) == {}
    assert accuracy_regressions(report_of([0.5] * 30, 0.5), older)


def test_the_interval_is_the_same_in_every_run() -> None:
    """A fixed seed: the verdict of one pair of reports never changes."""
    differences = np.array([-0.1, 0.0, 0.2, -0.3, 0.05] * 6)
    assert bootstrap_interval(differences) == bootstrap_interval(differences)
