"""
Two evaluations of one drive paired, with the plot and the export: what `--expected` adds.

`bag evaluate --expected PREVIOUS` pairs the evaluation it just made with PREVIOUS here, and
`bag compare` pairs two earlier ones the same way (evaluation/folder_comparison.py).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from triton_perception.evaluation.comparison.changed_frames import agreement_plot, export_changed
from triton_perception.evaluation.comparison.run_comparison import (compare_runs, load_run, Run,
                                                                    run_outputs, thresholds_of)
from triton_perception.evaluation.metrics import ReplayReport, RunComparison


@dataclass(frozen=True)
class CompareOptions:
    """The user's thresholds (figure -> threshold), the export of changed frames, class names."""

    thresholds: dict[str, float] = field(default_factory=dict)
    export_changed: tuple[int, Path] | None = None
    class_names: list[str] = field(default_factory=list)


def compare_pair(old: Run, new: Run, directory: Path | None, options: CompareOptions,
                 log: Callable[[str], None]) -> RunComparison:
    """Compare two runs; draw the plot into `directory` and export the changed frames if asked."""
    comparison, _pairing = compare_runs(old, new, thresholds_of(options.thresholds),
                                        options.class_names)
    if directory is not None:
        agreement_plot(comparison, directory)
    if options.export_changed is not None:
        count, target = options.export_changed
        summary = export_changed(comparison, old, new, count, target)
        log(f'exported the {summary.exported} most changed frames to {target} (frames.json)')
    return comparison


def compare_evaluation(expected: Path, report: ReplayReport, directory: Path,
                       options: CompareOptions, log: Callable[[str], None]) -> RunComparison:
    """Pair the evaluation just made (its report, in `directory`) with the earlier `expected`."""
    return compare_pair(load_run(expected, options.class_names),
                        run_outputs(report, directory, options.class_names), directory, options,
                        log)
