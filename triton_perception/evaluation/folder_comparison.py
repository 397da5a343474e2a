"""
`bag compare OLD NEW`, and the pairing `bag evaluate --expected` adds: runs judged without labels.

OLD and NEW are two `bag evaluate` output folders of one drive, or two folders of drives (each
drive's folder named alike in both). Nothing is replayed and no Triton is started: the outputs
bags are paired (run_comparison.py) and the verdict, plot and changed frames written. Over
drives each drive's pairing is one Ray task (evaluation/drive_tasks.py) with `workers` above 1 or a
Ray address, else they run one after another; the summary gives intervals over drives.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from triton_perception.bag import BagError
from triton_perception.evaluation.comparison import (compare_pair, CompareOptions,
                                                     fleet_comparison, fleet_markdown, load_run,
                                                     REPORT_FILE, runs_markdown, thresholds_of)
from triton_perception.evaluation.drive_tasks import run_each
from triton_perception.evaluation.metrics import (DrivesReport, RunComparison, write_report_files,
                                                  write_report_json)

COMPARISON_FILE = 'comparison.json'


@dataclass(frozen=True)
class CompareJob:
    """
    One drive's pairing, as a Ray task takes it: both runs, the options, where to write.

    `output` is the drive's folder of the comparison (Ray's attempts are counted there), None
    when nothing is written.
    """

    old: Path
    new: Path
    directory: Path | None
    options: CompareOptions

    @property
    def output(self) -> Path:
        """Return where the drive's results go (its new run's folder when none is written)."""
        return self.directory or self.new


def compare_drive(job: CompareJob) -> RunComparison:
    """Compare one drive's two runs into its output folder (the body of a Ray task)."""
    comparison = compare_pair(load_run(job.old, job.options.class_names),
                              load_run(job.new, job.options.class_names), job.directory,
                              job.options, lambda _line: None)
    if job.directory is not None:
        write_report_json({'drives': {job.new.name: {'comparison': comparison}}},
                          job.directory / COMPARISON_FILE)
    return comparison


def drive_names(old: Path, new: Path) -> list[str]:
    """
    Return the drives both folders hold (sub-folders with a report.json).

    Raises BagError when they hold none or not the same drives.
    """
    def drives(folder: Path) -> set[str]:
        return {path.parent.name for path in folder.glob(f'*/{REPORT_FILE}')}
    before, after = drives(old), drives(new)
    if not before or before != after:
        raise BagError(f'{old} holds the drives {sorted(before)} and {new} {sorted(after)}: '
                       'give two evaluations of one drive, or two folders of the same drives')
    return sorted(before)


def compare(old: Path, new: Path, output: Path | None, options: CompareOptions,
            workers: int, ray_address: str, log: Callable[[str], None]) -> tuple[bool, str]:
    """
    Compare two evaluations, or two folders of drives; return (flagged, report.md's text).

    Writes comparison.json, report.md and the plots into `output` when given.
    """
    if (old / REPORT_FILE).is_file() or (new / REPORT_FILE).is_file():
        comparison = compare_pair(load_run(old, options.class_names),
                                  load_run(new, options.class_names), output, options, log)
        document: DrivesReport = {'drives': {new.name: {'comparison': comparison}}}
        text = '\n'.join(runs_markdown(comparison)) + '\n'
        flagged = bool(comparison['flagged'])
    else:
        comparisons = compare_drives(old, new, output, options, workers, ray_address, log)
        fleet = fleet_comparison(comparisons, thresholds_of(options.thresholds))
        document = {'drives': {name: {'comparison': comparison}
                               for name, comparison in comparisons.items()},
                    'comparison': fleet}
        text = '\n'.join(fleet_markdown(fleet, comparisons)) + '\n'
        flagged = bool(fleet['flagged'])
    if output is not None:
        write_report_files(output, document, text, COMPARISON_FILE)
    return flagged, text


def compare_drives(old: Path, new: Path, output: Path | None, options: CompareOptions,
                   workers: int, ray_address: str,
                   log: Callable[[str], None]) -> dict[str, RunComparison]:
    """
    Compare each drive of two folders of drives; return each drive's comparison.

    Raises BagError naming the first drive that could not be compared.
    """
    export = options.export_changed
    jobs = {name: CompareJob(old / name, new / name, output / name if output else None,
                             CompareOptions(
                                 options.thresholds,
                                 (export[0], export[1] / name) if export else None,
                                 options.class_names)) for name in drive_names(old, new)}
    outcomes = run_each(compare_drive, compare_drive, jobs, workers,
                        ray_address, log)
    comparisons = {}
    for name in jobs:
        result = outcomes[name].report
        if result is None:
            raise BagError(f'drive {name}: {outcomes[name].error}')
        comparisons[name] = result
    return comparisons
