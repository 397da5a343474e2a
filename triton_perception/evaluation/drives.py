"""
`bag evaluate` over a directory of bags against one Triton, scored per drive and overall.

Each bag under the directory is replayed and scored as `bag evaluate` does one (its report in
`OUTPUT/<drive>/`); its labels are the entry named like the drive in each `--labels`
directory. The overall accuracy is what one evaluation of all the frames would give: lane
and tracking counts summed (CULane's F1, MOTA and IDF1 are ratios of counts), COCO AP computed
once over every drive's frames.
"""
from __future__ import annotations

from dataclasses import replace
import os
from pathlib import Path
import shutil
from typing import Callable, TYPE_CHECKING

from triton_perception.bag import BagError
from triton_perception.evaluation.accuracy import check_criteria, read_criteria
from triton_perception.evaluation.comparison import fleet_comparison, fleet_markdown, thresholds_of
from triton_perception.evaluation.drive_tasks import (ATTEMPTS_FILE, attempts_of, run_each,
                                                      WORKER_PID_FILE)
from triton_perception.evaluation.evaluation import evaluate, EvaluationSettings
from triton_perception.evaluation.figures import detection_labels
from triton_perception.evaluation.metrics import (AccuracySection, DriveEntry, DrivesReport,
                                                  figure, registered, ReplayReport, ScoredDrive,
                                                  write_report_files)
from triton_perception.scoring import LabelError
from triton_perception.serving import ServerConfig, TritonServer
from triton_perception.system import default_model_repository, free_ports

if TYPE_CHECKING:
    from typing_extensions import Unpack  # typing's from 3.11

    from triton_perception.evaluation.evaluation import ReplayOptions

METADATA = 'metadata.yaml'


def drive_bags(directory: Path) -> list[Path] | None:
    """
    Return the bags under `directory`, or None when `directory` is itself a bag.

    Raises BagError for a directory that is neither a bag nor holds any.
    """
    if (directory / METADATA).is_file():
        return None
    bags = sorted(path for path in directory.iterdir() if (path / METADATA).is_file()) \
        if directory.is_dir() else []
    if not bags:
        raise BagError(f'{directory} is not a bag and holds no bag (no {METADATA} in it or in '
                       'a directory below it)')
    return bags


def replay_drive(settings: EvaluationSettings) -> ReplayReport:
    """
    Replay one drive (the body of a Ray task), in a ROS domain of its own as every replay.

    An earlier attempt's outputs are cleared first; the attempt is counted beside them.
    """
    output = settings.output
    attempts = attempts_of(output) + 1
    if output.exists():
        shutil.rmtree(output)
    output.mkdir(parents=True)
    (output / ATTEMPTS_FILE).write_text(str(attempts), encoding='utf-8')
    (output / WORKER_PID_FILE).write_text(str(os.getpid()), encoding='utf-8')
    return evaluate(settings, log=lambda _line: None)


def drive_settings(settings: EvaluationSettings, bag: Path,
                   labels: tuple[Path, ...]) -> EvaluationSettings:
    """
    Return one drive's settings: its bag, OUT/<drive>/, its labels.

    Its --expected is the drive's folder in the earlier evaluation of the drives (PREVIOUS/<drive>/)
    and its changed frames go to DIR/<drive>/, so each drive's pairing runs in its own task.
    """
    export = settings.export_changed
    return replace(settings, bag=bag, output=settings.output / bag.name, labels=labels,
                   expected=settings.expected / bag.name if settings.expected else None,
                   export_changed=(export[0], export[1] / bag.name) if export else None)


def drive_labels(label_paths: tuple[Path, ...], drive: str) -> tuple[Path, ...]:
    """
    Return the labels of one drive: the entry named `drive` in each label directory.

    Raises LabelError when a label path has no entry for the drive.
    """
    found = []
    for path in label_paths:
        entries = sorted(path.glob(f'{drive}*')) if path.is_dir() else []
        if not entries:
            raise LabelError(f'{path}: no labels for the drive {drive}; with several drives each '
                             f'--labels is a directory with one entry per drive, named like its '
                             f'bag (e.g. {path}/{drive}.json, {path}/{drive}/)')
        found.append(entries[0])
    return tuple(found)


def evaluate_drives(settings: EvaluationSettings, bags: list[Path], log: Callable[[str], None],
                    workers: int = 1, ray_address: str = '') -> DrivesReport:
    """
    Evaluate every bag against one Triton; return the report with per-drive and overall.

    With `workers` above 1 or a `ray_address` the drives replay as Ray tasks (drive_tasks); a
    local Ray shares this machine's Triton, a cluster's tasks start their own unless a
    `--triton-url` is given.
    """
    if settings.triton_url or ray_address:
        return _evaluate_all(settings, bags, log, workers, ray_address)
    http_port, grpc_port, metrics_port = free_ports(3)
    config = ServerConfig(model_repository=default_model_repository(), profile=settings.profile,
                          http_port=http_port, grpc_port=grpc_port, metrics_port=metrics_port)
    with TritonServer(config, log=log, show_server_log=False) as server:
        return _evaluate_all(replace(settings, triton_url=server.grpc_url), bags, log, workers,
                             ray_address)


def _evaluate_all(settings: EvaluationSettings, bags: list[Path], log: Callable[[str], None],
                  workers: int, ray_address: str) -> DrivesReport:
    drives = {bag.name: drive_settings(settings, bag, drive_labels(settings.labels, bag.name)
                                       if settings.labels else ()) for bag in bags}
    outcomes = run_each(replay_drive, lambda drive: evaluate(drive, log), drives, workers,
                        ray_address, log)
    reports = {name: outcome.report for name, outcome in outcomes.items()
               if outcome.report is not None}
    report: DrivesReport = {'drives': {}}
    for name in drives:  # in the directory's order, whatever order they finished in
        outcome = outcomes[name]
        entry: DriveEntry = {'failed': outcome.error}
        if outcome.report is not None:
            entry = {'nodes': outcome.report['nodes']}
            if 'accuracy' in outcome.report:
                entry['accuracy'] = outcome.report['accuracy']
            if 'criteria' in outcome.report:
                entry['criteria'] = outcome.report['criteria']
            if 'runs' in outcome.report.get('comparison', {}):
                entry['comparison'] = outcome.report['comparison']['runs']
        if outcome.attempts > 1:
            entry['attempts'] = outcome.attempts  # Ray ran it again after its worker died
        report['drives'][name] = entry
    if settings.labels:
        report['accuracy'] = overall_accuracy(reports, detection_labels(settings.params_file))
    if settings.criteria:  # floors hold for all drives together; frames are each drive's
        floors = read_criteria(settings.criteria)['floors']
        report['criteria'] = check_criteria(report['accuracy'], {},
                                            {'floors': floors, 'frames': {}})
    compared = {name: entry['comparison'] for name, entry in report['drives'].items()
                if 'comparison' in entry}
    if compared:
        report['comparison'] = fleet_comparison(compared, thresholds_of(
            dict(settings.change_thresholds)))
    write_report_files(settings.output, report, drives_markdown(report))
    return report


def overall_accuracy(reports: dict[str, ReplayReport],
                     class_names: list[str]) -> dict[str, AccuracySection]:
    """Return the accuracy over every drive's frames: each metric's sections combined."""
    overall: dict[str, AccuracySection] = {}
    for metric in registered():
        scored = [ScoredDrive(report['accuracy'][metric.kind], Path(report['outputs_bag']),
                              class_names)
                  for report in reports.values() if metric.kind in report.get('accuracy', {})]
        if scored:
            overall[metric.kind] = metric.combine(scored)
    return overall


def drives_markdown(report: DrivesReport) -> str:
    """Return the several-drive report as Markdown: overall accuracy, then each drive's."""
    summary_figures = {metric.kind: metric.summary for metric in registered()}
    lines = ['# Evaluation of several drives', '']
    criteria = report.get('criteria')
    if criteria is not None:
        lines += [f"**Criteria over all drives: {'PASSED' if criteria['passed'] else 'FAILED'}**",
                  *(f'- {failure}' for failure in criteria['failing']), '']
    lines += [f"- {name}: FAILED ({drive['failed']})" for name, drive in report['drives'].items()
              if 'failed' in drive]
    lines += [f"- {name}: replayed {drive['attempts']} times (Ray restarted its worker)"
              for name, drive in report['drives'].items() if drive.get('attempts', 1) > 1]
    for title, accuracy in (('all drives', report.get('accuracy', {})),
                            *((name, drive.get('accuracy', {}))
                              for name, drive in report['drives'].items()
                              if 'failed' not in drive)):
        figures = ', '.join(f'{kind} {name} {figure(values, name):.3f}'
                            for kind, values in accuracy.items()
                            for name in summary_figures.get(kind, ()) if name in values)
        lines.append(f'- {title}: {figures or "no labels"}')
    if 'comparison' in report:
        lines += ['', *fleet_markdown(report['comparison'], {
            name: drive['comparison'] for name, drive in report['drives'].items()
            if 'comparison' in drive})]
    return '\n'.join(lines) + '\n'


def replay_test(bag: Path, labels: list[Path], output: Path, criteria: Path | None = None,
                triton_url: str = '', workers: int = 1, ray_address: str = '',
                **options: Unpack[ReplayOptions]) -> ReplayReport | DrivesReport:
    """
    Replay `bag`, score it against `labels` and check `criteria`: a replay test in one call.

    `bag` is one bag or a directory of drives (each label path then a directory with one entry
    per drive); `workers` and `ray_address` replay the drives as Ray tasks (drive_tasks). Returns
    the report; `report['criteria']['passed']` is the verdict, and `report['criteria']['failing']`
    says why not. `options` are further EvaluationSettings (params_file, timing, rate,
    process_layout, lanes_scored, ...). The replay is in lockstep, as always with labels. For
    pytest or launch_testing.
    """
    settings = EvaluationSettings(bag=Path(bag), output=Path(output), triton_url=triton_url,
                                  labels=tuple(Path(path) for path in labels),
                                  criteria=Path(criteria) if criteria else None, **options)
    bags = drive_bags(Path(bag))
    if bags is None:
        return evaluate(settings, log=lambda _line: None)
    return evaluate_drives(settings, bags, lambda _line: None, workers, ray_address)
