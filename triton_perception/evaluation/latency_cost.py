"""
`bag evaluate DRIVE --latency-cost`: the accuracy a drive loses to the machine's speed.

Each drive (a bag, or each bag of a folder) is replayed in lockstep (every frame answered: what
the models give), at its recorded timing (times --rate) and at each publisher rate asked for
(the bag's frames played at that many per second), all against one Triton. Every run is paired
with the lockstep run frame by frame (comparison/latency_pairing.py: the pairing of `bag
compare`, unanswered frames counting 0), and each figure's loss is reported with its 95 %
interval over frames, over drives for a folder, the first rate at which a loss is flagged, and
a plot of the losses against the rate. With labels, every run is also scored against them.
Writes OUT/latency_cost.json and OUT/report.md beside each run's own folder.
"""
from __future__ import annotations

from dataclasses import replace
import json
from pathlib import Path
from typing import Callable, TypedDict

import numpy as np

from triton_perception.bag import BagError
from triton_perception.evaluation.comparison import (cost_of, FIGURES, first_flagged, load_run,
                                                     Loss, loss_of, over_drives, thresholds_of)
from triton_perception.evaluation.drives import drive_bags, drive_labels
from triton_perception.evaluation.evaluation import (bag_duration_s, camera_topic, evaluate,
                                                     EvaluationSettings)
from triton_perception.evaluation.figures import detection_labels
from triton_perception.evaluation.metrics import (chart, FleetComparison, registered, ReplayReport,
                                                  RunComparison, save_rgb)
from triton_perception.serving import ServerConfig, TritonServer
from triton_perception.system import default_model_repository, free_ports

PLOT_FILE = 'latency_cost.png'
REPORT_FILE = 'latency_cost.json'
LOCKSTEP = 'lockstep'
RECORDED = 'recorded'


class CostRun(TypedDict):
    """One run of a drive against its lockstep run: its rate, what it answered, its losses."""

    run: str
    directory: str
    rate_hz: float | None
    answered: dict[str, float]
    losses: dict[str, Loss]
    flagged: list[str]
    accuracy: dict[str, dict[str, float]]
    comparison: RunComparison


class LatencyCost(TypedDict, total=False):
    """latency_cost.json: per drive its runs; over drives each run's intervals; the first flag."""

    drives: dict[str, list[CostRun]]
    over_drives: dict[str, FleetComparison]
    first_flagged: dict[str, object] | None
    rates_hz: list[float]


def run_label(rate_hz: float) -> str:
    """Return a publisher-rate run's name: 'rate_10hz'."""
    return f'rate_{rate_hz:g}hz'


def headline_accuracy(report: ReplayReport) -> dict[str, dict[str, float]]:
    """Return the run's headline accuracy figures by metric ({} without labels)."""
    accuracy = report.get('accuracy', {})
    return {metric.kind: {name: float(value) for name in metric.headlines
                          if isinstance(value := accuracy.get(metric.kind, {}).get(name),
                                        (int, float))}
            for metric in registered() if metric.kind in accuracy}


def drive_runs(settings: EvaluationSettings, rates: tuple[float, ...],
               log: Callable[[str], None]) -> list[CostRun]:
    """Replay a drive in lockstep, at recorded timing and at each rate; pair each with lockstep."""
    topic, frames = camera_topic(settings.bag, settings.topic)
    recorded_hz = (frames - 1) / duration if (duration := bag_duration_s(settings.bag)) > 0 \
        else None
    plan: list[tuple[str, EvaluationSettings, float | None]] = [
        (LOCKSTEP, replace(settings, timing=LOCKSTEP), None),
        (RECORDED, replace(settings, timing=RECORDED),
         recorded_hz * settings.rate if recorded_hz else None)]
    if rates and not recorded_hz:
        raise BagError(f'{settings.bag}: one frame or no recorded duration; --rates needs the '
                       "bag's frame rate")
    plan += [(run_label(rate), replace(settings, timing=RECORDED, rate=rate / (recorded_hz or 1)),
              rate) for rate in rates]
    class_names = detection_labels(settings.params_file)
    thresholds = thresholds_of(dict(settings.change_thresholds))
    reports = {}
    for name, run_settings, rate in plan:
        log(f'{settings.bag.name}: {name} ' + (f'({rate:.3g} frames/s)' if rate else ''))
        reports[name] = evaluate(replace(run_settings, output=settings.output / name,
                                         expected=None), log)
    lockstep = load_run(settings.output / LOCKSTEP, class_names)
    runs: list[CostRun] = []
    for name, _run_settings, rate in plan:
        comparison = cost_of(lockstep, load_run(settings.output / name, class_names),
                             thresholds, class_names)
        nodes = reports[name]['nodes']
        runs.append({
            'run': name, 'directory': str(settings.output / name),
            'rate_hz': round(rate, 3) if rate else None,
            'answered': {node: round(figures['published'] / max(frames, 1), 4)
                         for node, figures in nodes.items()},
            'losses': {figure: loss_of(value) for figure, value in
                       comparison['figures'].items()},
            'flagged': comparison['flagged'],
            'accuracy': headline_accuracy(reports[name]), 'comparison': comparison})
    return runs


def evaluate_latency_cost(settings: EvaluationSettings, rates: tuple[float, ...],
                          log: Callable[[str], None]) -> LatencyCost:
    """Replay every drive as `drive_runs` does against one Triton; write the report; return it."""
    if any(rate <= 0 for rate in rates):
        raise BagError(f'--rates: every rate must be above 0, got {rates}')
    if settings.triton_url:
        return _all_drives(settings, tuple(sorted(set(rates))), log)
    http_port, grpc_port, metrics_port = free_ports(3)
    config = ServerConfig(model_repository=settings.model_repository
                          or default_model_repository(), profile=settings.profile,
                          precision=settings.precision, http_port=http_port,
                          grpc_port=grpc_port, metrics_port=metrics_port)
    with TritonServer(config, log=log, show_server_log=False) as server:
        return _all_drives(replace(settings, triton_url=server.grpc_url),
                           tuple(sorted(set(rates))), log)


def _all_drives(settings: EvaluationSettings, rates: tuple[float, ...],
                log: Callable[[str], None]) -> LatencyCost:
    bags = drive_bags(settings.bag)
    drives = {settings.bag.name: settings} if bags is None else {
        bag.name: replace(settings, bag=bag, output=settings.output / bag.name,
                          labels=drive_labels(settings.labels, bag.name) if settings.labels
                          else ()) for bag in bags}
    report: LatencyCost = {'rates_hz': list(rates), 'drives': {}}
    for name, drive in drives.items():
        report['drives'][name] = drive_runs(drive, rates, log)
    if len(drives) > 1:
        thresholds = thresholds_of(dict(settings.change_thresholds))
        report['over_drives'] = {
            run['run']: over_drives({drive: next(entry['comparison'] for entry in runs
                                                 if entry['run'] == run['run'])
                                     for drive, runs in report['drives'].items()}, thresholds)
            for run in next(iter(report['drives'].values()))}
    flagged = first_flagged([(f"{drive}: {run['run']}", run['rate_hz'], run['flagged'])
                             for drive, runs in report['drives'].items() for run in runs])
    report['first_flagged'] = None if flagged is None else {
        'run': flagged[0], 'rate_hz': flagged[1], 'figures': flagged[2]}
    settings.output.mkdir(parents=True, exist_ok=True)
    (settings.output / REPORT_FILE).write_text(json.dumps(report, indent=2) + '\n',
                                               encoding='utf-8')
    loss_plot(report, settings.output)
    (settings.output / 'report.md').write_text(cost_markdown(report) + '\n', encoding='utf-8')
    return report


def loss_plot(report: LatencyCost, directory: Path) -> None:
    """Draw each figure's loss against the publisher rate (the first drive's runs, or the mean)."""
    runs = [run for runs in report['drives'].values() for run in runs if run['rate_hz']]
    rates = sorted({float(run['rate_hz'] or 0.0) for run in runs})
    if not rates:
        return
    series = []
    for figure in FIGURES:
        points = [(rate, float(np.mean([run['losses'][figure]['loss']
                                        for run in runs if run['rate_hz'] == rate])))
                  for rate in rates if any(figure in run['losses'] and run['rate_hz'] == rate
                                           for run in runs)]
        if points:
            series.append((f'{figure} loss', np.array([x for x, _ in points]),
                           np.array([y for _, y in points])))
    save_rgb(directory / PLOT_FILE, chart(series, 'publisher rate (frames/s)', 'loss',
                                          (0.0, max(rates) * 1.1)))


def cost_markdown(report: LatencyCost) -> str:
    """Return report.md: per drive a table of each run's losses, the first flag, the plot."""
    lines = ['# What latency costs', '',
             'Each run paired frame by frame with the lockstep replay (every frame answered); a '
             'frame a run did not answer counts 0. Loss = 1 - mean agreement, with its 95 % '
             'bootstrap interval over frames; flagged (!) when the whole interval of the '
             'agreement lies below 1 - the threshold (as `bag compare`).', '']
    for drive, runs in report['drives'].items():
        figures = [name for name in FIGURES if any(name in run['losses'] for run in runs)]
        lines += [f'## {drive}', '',
                  '| run | frames/s | answered | ' + ' | '.join(f'{name} loss' for name in figures)
                  + ' |', '| --- ' * (3 + len(figures)) + '|']
        for run in runs:
            cells = []
            for name in figures:
                loss = run['losses'].get(name)
                cells.append('–' if loss is None else
                             f"{loss['loss']:.3f} [{loss['interval'][0]:.3f}, "
                             f"{loss['interval'][1]:.3f}]"
                             + (' !' if name in run['flagged'] else ''))
            answered = ', '.join(f'{share:.0%}' for share in run['answered'].values())
            rate = '–' if run['rate_hz'] is None else f"{run['rate_hz']:.3g}"
            lines.append(f"| {run['run']} | {rate} | {answered} | " + ' | '.join(cells) + ' |')
        scored = [run for run in runs if run['accuracy']]
        if scored:
            lines += ['', 'Against the labels:', '']
            lines += [f"- {run['run']}: " + '; '.join(
                f'{kind} ' + ', '.join(f'{name} {value:.3f}' for name, value in values.items())
                for kind, values in run['accuracy'].items()) for run in scored]
        lines.append('')
    for name_of_run, fleet in report.get('over_drives', {}).items():
        lines.append(f"- {name_of_run} over {fleet['drives']} drives: " + ', '.join(
            f"{name} loss {1 - figure['agreement']:.3f} [{1 - figure['interval'][1]:.3f}, "
            f"{1 - figure['interval'][0]:.3f}]" for name, figure in fleet['over_drives'].items()))
    flagged = report.get('first_flagged')
    lines += ['', f"First rate with a flagged loss: {flagged['rate_hz']:.3g} frames/s "
              f"({flagged['run']}: {', '.join(flagged['figures'])})."  # type: ignore[arg-type]
              if flagged else 'No run has a flagged loss.', '',
              f'![loss against the publisher rate]({PLOT_FILE})']
    return '\n'.join(lines)
