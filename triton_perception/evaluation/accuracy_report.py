"""
The accuracy of a scored replay, added to `bag evaluate`'s report, with its figures.

`add_accuracy` scores a report's outputs bag (evaluation/accuracy.py) and checks the criteria;
`score` does it again for an earlier evaluation without Triton; markdown_report.py writes both
reports.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

from triton_perception.evaluation.accuracy import (check_criteria, read_criteria, score_replay,
                                                   ScoredReplay, worst_frames)
from triton_perception.evaluation.comparison import frame_comparison
from triton_perception.evaluation.figures import detection_labels
from triton_perception.evaluation.markdown_report import write_report
from triton_perception.evaluation.metrics import (chart, Drawn, figure, frame_figures,
                                                  precision_recall, read_outputs, read_report,
                                                  registered, replayed_frames, ReplayedFrames,
                                                  ReplayOutputs, ReplayReport, save_rgb,
                                                  ScoringOptions, worst_frame_sheet)
from triton_perception.scoring import DetectionLabels, LabelError, LaneLabels


@dataclass(frozen=True)
class Scoring:
    """What a replay is scored with: label files, criteria and the lane options."""

    labels: tuple[Path, ...] = ()
    criteria: Path | None = None
    params_file: Path | None = None  # for the detector's class names, as the replay used
    lanes_scored: str = 'all'
    lane_rows_from_labels: bool = False
    sparse_tracks: bool = False

    def options(self) -> ScoringOptions:
        """Return the departures from the benchmarks' protocols, as the metrics take them."""
        return ScoringOptions(self.lanes_scored, self.lane_rows_from_labels, self.sparse_tracks)


def add_accuracy(report: ReplayReport, scoring: Scoring, log: Callable[[str], None],
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
    camera = replayed_frames(Path(report['input']['bag']), report['input']['topic'])
    outputs = read_outputs(Path(report['outputs_bag']), class_names)
    scored = score_replay(camera, outputs, list(scoring.labels), class_names, scoring.options())
    report['accuracy'] = scored.accuracy
    # Per frame (keys as JSON writes them): what a later --expected compares frame by frame.
    report['per_frame'] = {name: {str(stamp): value for stamp, value in sorted(values.items())}
                           for name, values in scored.per_frame.items()}
    report['worst_frames'] = worst_frames(scored.per_frame)
    if criteria is not None:
        report['criteria'] = check_criteria(scored.accuracy, scored.per_frame, criteria)
    if figures is not None:
        report['figures'] = draw_figures(figures, report, scored, outputs, camera, class_names)


def draw_figures(directory: Path, report: ReplayReport, scored: ScoredReplay,
                 outputs: ReplayOutputs, camera: ReplayedFrames,
                 class_names: list[str]) -> list[str]:
    """Draw the figures of a scored replay into `directory`; return their file names."""
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    boxes = scored.labels.get('DetectionLabels')
    if isinstance(boxes, DetectionLabels):
        labelled = sorted({int(row[4]) for rows in boxes.frames.values() for row in rows})
        curves = []
        for class_id in labelled:
            recall, precision = precision_recall(boxes.frames, outputs.detections, class_id)
            if len(recall):
                curves.append((class_names[class_id], recall, precision))
        if curves:
            save_rgb(directory / 'precision_recall.png', chart(curves, 'recall', 'precision'))
            written.append('precision_recall.png')
    lane_f1 = scored.per_frame.get('lane_F1')
    if lane_f1:
        stamps = sorted(lane_f1)
        seconds = (np.array(stamps) - stamps[0]) / 1e9
        save_rgb(directory / 'lane_f1.png', chart(
            [('lane F1', seconds, np.array([lane_f1[stamp] for stamp in stamps]))],
            'time in the drive (s)', 'lane F1', (0.0, max(float(seconds[-1]), 1.0))))
        written.append('lane_f1.png')
    worst = list(dict.fromkeys(stamp for frames in report['worst_frames'].values()
                               for stamp, _value in frames))
    lanes = scored.labels.get('LaneLabels')
    truth: dict[int, Drawn] = {
        stamp: {'boxes': boxes.frames.get(stamp, np.zeros((0, 6)))
                if isinstance(boxes, DetectionLabels) else np.zeros((0, 6)),
                'lanes': lanes.frames.get(stamp, []) if isinstance(lanes, LaneLabels) else []}
        for stamp in worst}
    published: dict[int, Drawn] = {
        stamp: {'boxes': outputs.detections.get(stamp, np.zeros((0, 6))),
                'lanes': outputs.lanes.get(stamp, [])} for stamp in worst}
    sheet = worst_frame_sheet(Path(report['input']['bag']), report['input']['topic'], worst,
                              truth, published)
    if sheet is not None:
        save_rgb(directory / 'worst_frames.png', sheet)
        written.append('worst_frames.png')
    return written


def score(evaluation: Path, output: Path, scoring: Scoring,
          log: Callable[[str], None]) -> ReplayReport:
    """
    Score the outputs of an earlier `bag evaluate` (its --output directory) again, without Triton.

    The report is the earlier one with the accuracy against `scoring.labels`, written to
    `output`. Raises BagError when `evaluation` holds no report of a `bag evaluate` run.
    """
    report = read_report(Path(evaluation) / 'report.json')
    for key in ('accuracy', 'per_frame', 'worst_frames', 'criteria', 'comparison', 'figures'):
        report.pop(key, None)  # type: ignore[misc]
    add_accuracy(report, scoring, log, output)
    write_report(report, output)
    return report


ACCURACY_TOLERANCE = 0.05  # an accuracy fraction may fall this much before --expected flags it


def accuracy_regressions(report: ReplayReport, expected: ReplayReport) -> list[str]:
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
    judged = {frame_figures()[name].kind for name in intervals}
    for metric in registered():
        kind = metric.kind
        old, new = expected.get('accuracy', {}).get(kind), report.get('accuracy', {}).get(kind)
        if not old or not new or kind in judged:
            continue
        for name in metric.headlines:
            if name in metric.counts or name not in old or name not in new:
                continue
            if figure(new, name) < figure(old, name) - ACCURACY_TOLERANCE:
                problems.append(f'accuracy.{kind}.{name}: expected {figure(old, name):.3f}, got '
                                f'{figure(new, name):.3f} (may fall by {ACCURACY_TOLERANCE:g})')
    return problems
