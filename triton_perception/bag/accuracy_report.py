"""
The report of a scored replay: accuracy added to `bag evaluate`'s report, report.md, figures.

`add_accuracy` scores a report's outputs bag (bag/accuracy.py) and checks the criteria;
`score` does it again for an earlier evaluation without Triton; `report_markdown` writes the
failing criteria first, then the accuracy, then the replay's own figures.
"""
from __future__ import annotations

from dataclasses import dataclass
import json
from pathlib import Path
from typing import Any, Callable

import numpy as np

from triton_perception.bag.accuracy import (camera_frames, CameraFrames, check_criteria,
                                            read_criteria, read_outputs, ReplayOutputs,
                                            score_replay, WORST_FRAMES, worst_frames)
from triton_perception.bag.accuracy_figures import (chart, precision_recall, save_rgb,
                                                    worst_frame_sheet)
from triton_perception.bag.bag_format import BagError
from triton_perception.bag.figures import detection_labels, markdown
from triton_perception.bag.frame_comparison import frame_comparison, KINDS
from triton_perception.scoring import LabelError


@dataclass(frozen=True)
class Scoring:
    """What a replay is scored with: label files, criteria and the lane options."""

    labels: tuple[Path, ...] = ()
    criteria: Path | None = None
    params_file: Path | None = None  # for the detector's class names, as the replay used
    lanes_scored: str = 'all'
    lane_rows_from_labels: bool = False
    sparse_tracks: bool = False


def add_accuracy(report: dict[str, Any], scoring: Scoring, log: Callable[[str], None],
                 figures: Path | None = None) -> None:
    """
    Score the report's outputs bag against `scoring.labels` and check `scoring.criteria`.

    Adds `accuracy`, `worst_frames` and, with criteria, `criteria` ({passed, failing,
    failing_frames}); nothing without labels. With `figures` (a directory) also draws the
    precision-recall curves, lane F1 along the drive and the worst frames there
    (accuracy_figures), listed in `report['figures']`. Raises LabelError for bad labels or
    criteria.
    """
    if not scoring.labels:
        if scoring.criteria:
            raise LabelError('--criteria needs --labels: there is nothing to hold the figures to')
        return
    criteria = read_criteria(scoring.criteria) if scoring.criteria else None
    log(f'scoring against {", ".join(str(path) for path in scoring.labels)}')
    class_names = detection_labels(scoring.params_file)
    camera = camera_frames(Path(report['input']['bag']), report['input']['topic'])
    outputs = read_outputs(Path(report['outputs_bag']), class_names)
    scored = score_replay(camera, outputs, list(scoring.labels), class_names,
                          scoring.lanes_scored, scoring.lane_rows_from_labels,
                          scoring.sparse_tracks)
    report['accuracy'] = scored['accuracy']
    # Per frame (keys as JSON writes them): what a later --expected compares frame by frame.
    report['per_frame'] = {name: {str(stamp): value for stamp, value in sorted(values.items())}
                           for name, values in scored['per_frame'].items()}
    report['worst_frames'] = worst_frames(scored)
    if criteria is not None:
        report['criteria'] = check_criteria(scored, criteria)
    if figures is not None:
        report['figures'] = draw_figures(figures, report, scored, outputs, camera, class_names)


def draw_figures(directory: Path, report: dict[str, Any], scored: dict[str, Any],
                 outputs: ReplayOutputs, camera: CameraFrames,
                 class_names: list[str]) -> list[str]:
    """Draw the figures of a scored replay into `directory`; return their file names."""
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    boxes = scored['labels'].get('DetectionLabels')
    if boxes is not None:
        labelled = sorted({int(row[4]) for rows in boxes.frames.values() for row in rows})
        curves = []
        for class_id in labelled:
            recall, precision = precision_recall(boxes.frames, outputs.detections, class_id)
            if len(recall):
                curves.append((class_names[class_id], recall, precision))
        if curves:
            save_rgb(directory / 'precision_recall.png', chart(curves, 'recall', 'precision'))
            written.append('precision_recall.png')
    lane_f1 = scored['per_frame'].get('lane_F1')
    if lane_f1:
        stamps = sorted(lane_f1)
        seconds = (np.array(stamps) - stamps[0]) / 1e9
        save_rgb(directory / 'lane_f1.png', chart(
            [('lane F1', seconds, np.array([lane_f1[stamp] for stamp in stamps]))],
            'time in the drive (s)', 'lane F1', (0.0, max(float(seconds[-1]), 1.0))))
        written.append('lane_f1.png')
    worst = list(dict.fromkeys(stamp for frames in report['worst_frames'].values()
                               for stamp, _value in frames))
    lanes = scored['labels'].get('LaneLabels')
    truth = {stamp: {'boxes': boxes.frames.get(stamp, np.zeros((0, 6))) if boxes else
                     np.zeros((0, 6)),
                     'lanes': lanes.frames.get(stamp, []) if lanes else []} for stamp in worst}
    published = {stamp: {'boxes': outputs.detections.get(stamp, np.zeros((0, 6))),
                         'lanes': outputs.lanes.get(stamp, [])} for stamp in worst}
    sheet = worst_frame_sheet(Path(report['input']['bag']), report['input']['topic'], worst,
                              truth, published)
    if sheet is not None:
        save_rgb(directory / 'worst_frames.png', sheet)
        written.append('worst_frames.png')
    return written


def write_report(report: dict[str, Any], output: Path) -> None:
    """Write report.json and report.md into `output`."""
    output.mkdir(parents=True, exist_ok=True)
    (output / 'report.json').write_text(json.dumps(report, indent=2), encoding='utf-8')
    (output / 'report.md').write_text(report_markdown(report), encoding='utf-8')


HEADLINES = {'detection': ('AP', 'AP50', 'AP75', 'precision', 'recall'),
             'tracking': ('MOTA', 'MOTP', 'IDF1', 'id_switches', 'fragmentations'),
             'lanes': ('F1', 'precision', 'recall', 'tusimple_accuracy')}


def report_markdown(report: dict[str, Any]) -> str:
    """
    Return the report as Markdown: failing criteria first, then accuracy, then the replay.

    The replay's own figures (node accounting, detections, lanes, tracking) follow as
    bag/figures.py writes them.
    """
    title, _separator, rest = markdown(report).partition('\n\n')
    lines = [title, '']
    criteria = report.get('criteria')
    if criteria is not None:
        verdict = 'PASSED' if criteria['passed'] else 'FAILED'
        lines += [f'**Criteria: {verdict}**', '']
        lines += [f'- {failure}' for failure in criteria['failing']]
        failing_frames = criteria['failing_frames']
        if failing_frames:
            shown = ', '.join(str(stamp) for stamp in failing_frames[:WORST_FRAMES * 4])
            more = ' ...' if len(failing_frames) > WORST_FRAMES * 4 else ''
            lines.append(f'- failing frames (stamp, ns): {shown}{more}')
        lines.append('')
    accuracy = report.get('accuracy')
    if accuracy:
        lines += ['| accuracy | ' + ' | '.join(['figure'] * 5) + ' |', '| --- |' + ' --- |' * 5]
        for kind, names in HEADLINES.items():
            if kind in accuracy:
                cells = [f'{name} {accuracy[kind][name]:.3f}' if isinstance(
                    accuracy[kind][name], float) else f'{name} {accuracy[kind][name]}'
                         for name in names if name in accuracy[kind]]
                lines.append(f'| {kind} | ' + ' | '.join(cells + [''] * (5 - len(cells))) + ' |')
        unanswered = {kind: figures.get('frames_without_output', 0)
                      for kind, figures in accuracy.items()}
        lines += ['', 'Labelled frames without an output (scored as all misses): '
                  + ', '.join(f'{kind} {count}' for kind, count in unanswered.items()) + '.']
        if 'lanes' in accuracy:
            lanes = accuracy['lanes']
            lines.append(f"Lanes drawn {lanes.get('lane_width_px', 0):.1f} px wide (30 px at "
                         f"1640 px), lanes scored: {lanes.get('lanes_scored')}"
                         + (', cropped to the labelled rows' if lanes.get('lane_rows_from_labels')
                            else '') + '.')
        for name, frames in report.get('worst_frames', {}).items():
            lines.append(f'Worst frames by {name} (stamp ns: value): '
                         + ', '.join(f'{stamp}: {value:.2f}' for stamp, value in frames) + '.')
        lines.append('')
        lines += [f'![{name}]({name})' for name in report.get('figures', [])]
        if report.get('figures'):
            lines += ['', 'In worst_frames.png the labels are green and the outputs magenta.', '']
    return '\n'.join(lines) + '\n' + rest


def score(evaluation: Path, output: Path, scoring: Scoring,
          log: Callable[[str], None]) -> dict[str, Any]:
    """
    Score the outputs of an earlier `bag evaluate` (its --output directory) again, without Triton.

    The report is the earlier one with the accuracy against `scoring.labels`, written to
    `output`. Raises BagError when `evaluation` holds no report of a `bag evaluate` run.
    """
    try:
        report: dict[str, Any] = json.loads(
            (Path(evaluation) / 'report.json').read_text(encoding='utf-8'))
        report['input']['bag'], report['outputs_bag']  # noqa: B018 (what scoring reads)
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise BagError(f'{evaluation} holds no report.json of a `bag evaluate` run '
                       f'({error!r})') from None
    for key in ('accuracy', 'per_frame', 'worst_frames', 'criteria', 'comparison', 'figures'):
        report.pop(key, None)
    add_accuracy(report, scoring, log, output)
    write_report(report, output)
    return report


ACCURACY_TOLERANCE = 0.05  # an accuracy fraction may fall this much before --expected flags it
COUNTS = ('id_switches', 'fragmentations')


def accuracy_regressions(report: dict[str, Any], expected: dict[str, Any]) -> list[str]:
    """
    Return each headline accuracy figure that regressed, as a sentence.

    Kinds with per-frame figures in both reports (lanes, detection) are judged by the bootstrap
    interval of their frames' change (frame_comparison): regressed only when all of it lies
    below -ACCURACY_TOLERANCE. The others (tracking, and reports without per-frame figures)
    regress when a figure fell by more than ACCURACY_TOLERANCE. Only figures both reports have
    are compared (the same kinds of labels); a rise is no regression.
    """
    intervals = frame_comparison(report, expected, ACCURACY_TOLERANCE)
    problems = [f"per-frame {name}: mean change {figures['mean_difference']:+.3f} over "
                f"{figures['frames']} frames, 95 % interval [{figures['interval'][0]:+.3f}, "
                f"{figures['interval'][1]:+.3f}], all below -{ACCURACY_TOLERANCE:g}"
                for name, figures in intervals.items() if figures['regressed']]
    judged = {KINDS[name] for name in intervals}
    for kind, names in HEADLINES.items():
        old, new = expected.get('accuracy', {}).get(kind), report.get('accuracy', {}).get(kind)
        if not old or not new or kind in judged:
            continue
        for name in names:
            if name in COUNTS or name not in old or name not in new:
                continue
            if new[name] < old[name] - ACCURACY_TOLERANCE:
                problems.append(f'accuracy.{kind}.{name}: expected {old[name]:.3f}, got '
                                f'{new[name]:.3f} (may fall by {ACCURACY_TOLERANCE:g})')
    return problems
