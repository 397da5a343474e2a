"""
The plot of two runs' agreement along a drive, and the changed frames sent for labelling.

- `agreement.png`: each figure's per-frame agreement along the drive;
- `--export-changed N DIR`: the N frames with the highest change score (1 - the frame's lowest
  agreement over the figures; frames where the runs agree are never exported) written as
  `bag export-frames` writes them (PNGs named by stamp and frames.json, for CVAT and Label
  Studio), with `changed_frames.png`: each frame's old outputs (left) beside its new ones
  (right).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from triton_perception.bag import export_frames, ExportSummary
from triton_perception.evaluation.comparison.comparison_report import PLOT_FILE
from triton_perception.evaluation.comparison.run_comparison import Run
from triton_perception.evaluation.comparison.run_pairing import (frame_scores, most_changed,
                                                                 RunOutputs)
from triton_perception.evaluation.metrics import (chart, Drawn, drawn_frames, RunComparison,
                                                  save_rgb, sheet)

SHEET_FILE = 'changed_frames.png'
OLD_COLOUR = (0, 160, 255)   # RGB: the old run's outputs
NEW_COLOUR = (230, 0, 200)   # RGB: the new run's outputs


def agreement_plot(comparison: RunComparison, directory: Path) -> str:
    """Draw each figure's per-frame agreement along the drive; return the file name."""
    series = []
    start = min((int(stamp) for values in comparison['per_frame'].values() for stamp in values),
                default=0)
    end = start
    for name, values in comparison['per_frame'].items():
        stamps = sorted(values, key=int)
        seconds = (np.array([int(stamp) for stamp in stamps]) - start) / 1e9
        end = max(end, start + int(seconds[-1] * 1e9))
        series.append((name, seconds, np.array([values[stamp] for stamp in stamps])))
    directory.mkdir(parents=True, exist_ok=True)
    save_rgb(directory / PLOT_FILE, chart(series, 'time in the drive (s)', 'agreement',
                                          (0.0, max((end - start) / 1e9, 1.0))))
    return PLOT_FILE


def drawings(outputs: RunOutputs, stamps: list[int]) -> dict[int, Drawn]:
    """Return what a run published on `stamps`, as the contact sheet draws it."""
    return {stamp: {'boxes': outputs.detections.get(stamp, np.zeros((0, 6))),
                    'lanes': list(outputs.lanes.get(stamp, []))} for stamp in stamps}


def export_changed(comparison: RunComparison, old: Run, new: Run, count: int,
                   directory: Path) -> ExportSummary:
    """
    Export the `count` most changed frames for labelling, with the side-by-side contact sheet.

    Frames whose score is 0 (the runs agree) are never exported, so identical runs export none.
    """
    stamps = most_changed(frame_scores({name: {int(stamp): value for stamp, value in values.items()}
                                        for name, values in comparison['per_frame'].items()}),
                          count)
    summary = export_frames(Path(new.report['input']['bag']), directory,
                            topic=new.report['input']['topic'], stamps=set(stamps))
    if stamps:
        tiles = drawn_frames(Path(new.report['input']['bag']), new.report['input']['topic'],
                             stamps, [[(OLD_COLOUR, drawings(old.outputs, stamps))],
                                      [(NEW_COLOUR, drawings(new.outputs, stamps))]])
        save_rgb(directory / SHEET_FILE,
                 sheet([tile for stamp in stamps for tile in tiles[stamp]], 2))
    return summary
