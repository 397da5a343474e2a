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
import json
from pathlib import Path
from typing import Any, Callable

from triton_perception.bag.accuracy import check_criteria, read_criteria, read_outputs
from triton_perception.bag.bag_format import BagError
from triton_perception.bag.drive_tasks import drive_settings, DriveOutcome, run_on_ray
from triton_perception.bag.evaluation import evaluate, EvaluationSettings
from triton_perception.bag.figures import detection_labels
from triton_perception.scoring import DetectionLabels, LabelError, read_labels, score_detections
from triton_perception.serving import ServerConfig, TritonServer
from triton_perception.system import default_model_repository, free_ports

METADATA = 'metadata.yaml'
DRIVE_KEY_OFFSET = 10 ** 20  # above any stamp in ns: keeps the frames of two drives apart


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
                    workers: int = 1, ray_address: str = '') -> dict[str, Any]:
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
                  workers: int, ray_address: str) -> dict[str, Any]:
    drives = {bag.name: drive_settings(settings, bag, drive_labels(settings.labels, bag.name)
                                       if settings.labels else ()) for bag in bags}
    if workers > 1 or ray_address:
        outcomes = run_on_ray(drives, workers, ray_address, log)
    else:
        outcomes = {}
        for name, drive in drives.items():
            log(f'drive {name}')
            outcomes[name] = DriveOutcome(name, evaluate(drive, log), '', 1)
    reports = {name: outcome.report for name, outcome in outcomes.items()
               if outcome.report is not None}
    report: dict[str, Any] = {'drives': {}}
    for name in drives:  # in the directory's order, whatever order they finished in
        outcome = outcomes[name]
        entry: dict[str, Any] = {'failed': outcome.error}
        if outcome.report is not None:
            entry = {key: outcome.report[key] for key in ('nodes', 'accuracy', 'criteria')
                     if key in outcome.report}
        if outcome.attempts > 1:
            entry['attempts'] = outcome.attempts  # Ray ran it again after its worker died
        report['drives'][name] = entry
    if settings.labels:
        report['accuracy'] = overall_accuracy(reports, settings)
    if settings.criteria:  # floors hold for all drives together; frames are each drive's
        floors = read_criteria(settings.criteria)['floors']
        report['criteria'] = check_criteria({'accuracy': report['accuracy'], 'per_frame': {}},
                                            {'floors': floors, 'frames': {}})
    settings.output.mkdir(parents=True, exist_ok=True)
    (settings.output / 'report.json').write_text(json.dumps(report, indent=2), encoding='utf-8')
    (settings.output / 'report.md').write_text(drives_markdown(report), encoding='utf-8')
    return report


def overall_accuracy(reports: dict[str, dict[str, Any]],
                     settings: EvaluationSettings) -> dict[str, Any]:
    """Return the accuracy over every drive's frames (see the module docstring)."""
    accuracies = [report['accuracy'] for report in reports.values() if 'accuracy' in report]
    overall: dict[str, Any] = {}
    lanes = [accuracy['lanes'] for accuracy in accuracies if 'lanes' in accuracy]
    if lanes:
        tp, fp, fn = (sum(lane[key] for lane in lanes)
                      for key in ('true_positives', 'false_positives', 'false_negatives'))
        overall['lanes'] = {'F1': 2 * tp / (2 * tp + fp + fn) if tp else 0.0,
                            'precision': tp / (tp + fp) if tp + fp else 0.0,
                            'recall': tp / (tp + fn) if tp + fn else 0.0,
                            'true_positives': tp, 'false_positives': fp, 'false_negatives': fn}
    tracks = [accuracy['tracking'] for accuracy in accuracies if 'tracking' in accuracy]
    if tracks:
        objects = sum(track['labelled_boxes'] for track in tracks)
        published = sum(track['published_boxes'] for track in tracks)
        errors = sum(track['misses'] + track['false_positives'] + track['id_switches']
                     for track in tracks)
        id_true = sum(track['IDR'] * track['labelled_boxes'] for track in tracks)
        matches = sum(track['matches'] for track in tracks)
        overall['tracking'] = {
            'MOTA': 1 - errors / objects if objects else 0.0,
            'MOTP': sum(track['MOTP'] * track['matches'] for track in tracks) / matches
            if matches else 0.0,
            'IDF1': 2 * id_true / (objects + published) if objects + published else 0.0,
            'id_switches': sum(track['id_switches'] for track in tracks),
            'fragmentations': sum(track['fragmentations'] for track in tracks)}
    if any('detection' in accuracy for accuracy in accuracies):
        overall['detection'] = _joint_detection(reports, settings)
    return overall


def _joint_detection(reports: dict[str, dict[str, Any]],
                     settings: EvaluationSettings) -> dict[str, Any]:
    """COCO AP once over the frames of every drive, each drive's frames keyed apart."""
    class_names = detection_labels(settings.params_file)
    labels, predictions = {}, {}
    for number, (name, report) in enumerate(reports.items()):
        if 'detection' not in report.get('accuracy', {}):
            continue
        boxes = read_labels(Path(report['accuracy']['detection']['labels']), class_names)
        assert isinstance(boxes, DetectionLabels)
        outputs = read_outputs(Path(report['outputs_bag']), class_names)
        offset = number * DRIVE_KEY_OFFSET
        labels.update({offset + stamp: rows for stamp, rows in boxes.frames.items()})
        predictions.update({offset + stamp: rows for stamp, rows in outputs.detections.items()
                            if stamp in boxes.frames})
    result = score_detections(labels, predictions, class_names)
    result.pop('per_frame_recall', None)
    return result


def drives_markdown(report: dict[str, Any]) -> str:
    """Return the several-drive report as Markdown: overall accuracy, then each drive's."""
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
        figures = ', '.join(f'{kind} {name} {values[name]:.3f}' for kind, values in
                            accuracy.items() for name in ('AP50', 'F1', 'MOTA', 'IDF1')
                            if name in values)
        lines.append(f'- {title}: {figures or "no labels"}')
    return '\n'.join(lines) + '\n'


def replay_test(bag: Path, labels: list[Path], output: Path, criteria: Path | None = None,
                triton_url: str = '', workers: int = 1, ray_address: str = '',
                **options: Any) -> dict[str, Any]:
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
