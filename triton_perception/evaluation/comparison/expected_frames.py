"""
Two replays' accuracy compared frame by frame, with bootstrap intervals that know their noise.

A headline figure of one replay against another moves by chance as well as by a change of
model: a few hard frames decide a lane F1 over ten labelled frames. So `--expected` compares the
per-frame figures (lane F1, detection recall) of the frames both reports scored, pairs them by
stamp, and resamples the frames (2,000 times, a fixed seed) for a 95 % interval of the mean
difference. A figure counts as regressed only when the whole interval lies below the tolerance:
`-tolerance` is still within noise if the interval reaches above it. The frames that changed most
are listed with their stamps, so that a user can look at them.
"""
from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from triton_perception.evaluation.metrics import frame_figures, FrameInterval, ReplayReport

RESAMPLES = 2000
SEED = 0
CHANGED_FRAMES = 5


def bootstrap_interval(differences: NDArray[np.float64]) -> tuple[float, float]:
    """Return the 95 % bootstrap interval of the mean of `differences` (frames resampled)."""
    rng = np.random.default_rng(SEED)
    picks = rng.integers(0, len(differences), size=(RESAMPLES, len(differences)))
    means = differences[picks].mean(axis=1)
    low, high = np.percentile(means, [2.5, 97.5])
    return float(low), float(high)


def frame_comparison(report: ReplayReport, expected: ReplayReport,
                     tolerance: float) -> dict[str, FrameInterval]:
    """
    Return, per per-frame figure both reports have, the paired comparison of their frames.

    Each: `frames` compared, `mean_difference` (new - old), its 95 % `interval`, `regressed`
    (the interval's top below -`tolerance`) and `changed_most`, the frames with the largest
    change as [stamp, old, new]. Reports without per-frame figures (written before they were
    kept) give {}.
    """
    comparison: dict[str, FrameInterval] = {}
    for name in frame_figures():
        new = report.get('per_frame', {}).get(name)
        old = expected.get('per_frame', {}).get(name)
        common = sorted(set(new or {}) & set(old or {}), key=int)
        if not new or not old or not common:
            continue
        before = np.array([float(old[stamp]) for stamp in common])
        after = np.array([float(new[stamp]) for stamp in common])
        differences = after - before
        low, high = bootstrap_interval(differences)
        order = np.argsort(-np.abs(differences), kind='stable')[:CHANGED_FRAMES]
        comparison[name] = {
            'frames': len(common), 'mean_difference': round(float(differences.mean()), 4),
            'interval': [round(low, 4), round(high, 4)], 'regressed': high < -tolerance,
            'changed_most': [[int(common[index]), round(float(before[index]), 4),
                              round(float(after[index]), 4)]
                             for index in order if differences[index] != 0]}
    return comparison


def comparison_markdown(intervals: dict[str, FrameInterval]) -> list[str]:
    """Return the report.md lines of a frame-by-frame comparison ([] without one)."""
    lines = []
    for name, figures in intervals.items():
        low, high = figures['interval']
        lines.append(f"- per-frame {name}: mean change {figures['mean_difference']:+.3f} over "
                     f"{figures['frames']} frames, 95 % interval [{low:+.3f}, {high:+.3f}]"
                     + (' (REGRESSED)' if figures['regressed'] else ''))
        lines += [f'  - frame {int(stamp)}: {old:.3f} -> {new:.3f}'
                  for stamp, old, new in figures['changed_most']]
    return lines
