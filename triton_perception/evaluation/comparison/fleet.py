"""
Drives of two runs compared: intervals over drives, over all their frames, and the drives ranked.

A change confined to one drive of many moves the mean over frames little; the drives' own
agreements, resampled as drives (the bootstrap over drive means), say whether the fleet changed,
and each drive's own interval over its frames names the drive that did. A drive's change score
is 1 - its lowest mean agreement over the figures.
"""
from __future__ import annotations

from typing import Mapping

import numpy as np

from triton_perception.evaluation.comparison.run_comparison import change_figure
from triton_perception.evaluation.comparison.run_pairing import FIGURES
from triton_perception.evaluation.metrics import FleetComparison, RunComparison


def fleet_comparison(drives: Mapping[str, RunComparison],
                     thresholds: Mapping[str, float]) -> FleetComparison:
    """Return the intervals over drives and over frames, the drives ranked and what is flagged."""
    over_drives, over_frames = {}, {}
    for name in FIGURES:
        means = [drive['figures'][name]['agreement'] for drive in drives.values()
                 if name in drive['figures']]
        if not means:
            continue
        over_drives[name] = change_figure(np.array(means), thresholds[name])
        over_frames[name] = change_figure(np.array([
            value for drive in drives.values() for value in drive['per_frame'].get(name, {})
            .values()]), thresholds[name])
    scores = {drive: round(1.0 - min((figure['agreement'] for figure in comparison['figures']
                                      .values()), default=1.0), 4)
              for drive, comparison in drives.items()}
    flagged = [f'{name} over drives' for name, figure in over_drives.items() if figure['flagged']]
    flagged += [f'{name} over frames' for name, figure in over_frames.items() if figure['flagged']]
    flagged += [f'{drive}: {name}' for drive, comparison in drives.items()
                for name in comparison['flagged']]
    return {'drives': len(drives), 'over_drives': over_drives, 'over_frames': over_frames,
            'changed_drives': sorted(((drive, score) for drive, score in scores.items()
                                      if score > 0), key=lambda item: (-item[1], item[0])),
            'flagged': flagged}


def fleet_markdown(fleet: FleetComparison, drives: Mapping[str, RunComparison]) -> list[str]:
    """Return the report.md lines of drives compared: the verdict, the intervals, each drive."""
    lines = [f"Runs compared frame by frame over {fleet['drives']} drives (no labels): "
             + (f"CHANGED: {'; '.join(fleet['flagged'])}." if fleet['flagged']
                else 'no change beyond the thresholds.'), '']
    for name, figure in fleet['over_drives'].items():
        frames = fleet['over_frames'][name]
        lines.append(f"- {name} agreement over drives {figure['agreement']:.3f} "
                     f"[{figure['interval'][0]:.3f}, {figure['interval'][1]:.3f}], over frames "
                     f"{frames['agreement']:.3f} [{frames['interval'][0]:.3f}, "
                     f"{frames['interval'][1]:.3f}] (flagged below "
                     f"{1 - figure['threshold']:.2f})")
    if fleet['changed_drives']:
        lines.append('- changed most: ' + ', '.join(
            f'{drive} ({score:.3f})' for drive, score in fleet['changed_drives']))
    names = [name for name in FIGURES if name in fleet['over_drives']]
    lines += ['', '| drive | ' + ' | '.join(names) + ' | changed |',
              '| --- |' + ' --- |' * (len(names) + 1)]
    for drive, comparison in drives.items():
        cells = [f"{comparison['figures'][name]['agreement']:.3f}"
                 if name in comparison['figures'] else '-' for name in names]
        lines.append(f'| {drive} | ' + ' | '.join(cells) + ' | '
                     + (', '.join(comparison['flagged']) or 'no') + ' |')
    return lines + ['', "Each drive's agreement along the drive: <drive>/agreement.png.", '']
