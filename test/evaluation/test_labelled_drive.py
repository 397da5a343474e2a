"""
The highway clip as a labelled drive, replayed and scored end to end.

The labels are the eye-read ones of test/data (lane_labels.md, clip_track_labels.md) written as
a labelling tool exports them (dev/write_clip_labels.py): ego lines as CULane files named by
the frames' stamps, car identities as MOTChallenge gt.txt. The ego lines are read at three
rows, so lanes are scored as the ego lane's two lines cropped to those rows; the cars are
labelled every 4th frame, so tracks are scored on the labelled frames.
"""
from __future__ import annotations

import json
from pathlib import Path
import subprocess
import sys
from typing import Any

import numpy as np
import pytest
import yaml

from support.checkout import REPO
from support.highway_clip import clip_bag
from triton_perception.evaluation.accuracy_report import score, Scoring
from triton_perception.evaluation.evaluation import evaluate, EvaluationSettings

LABELS = REPO / 'test' / 'data' / 'highway_clip' / 'labels'
FRAMES = None     # the whole clip: the lane labels run to frame 220, the car labels to 80
RATE = 0.25       # slow enough that the CPU profile answers most frames on 2 cores
# Bands of the figures (docs/bags.md records a run): the served models on the labelled clip.
LANE_F1_FLOOR = 0.6
IDF1_FLOOR = 0.5


@pytest.fixture(scope='module')
def scored(shared: Path, triton_server: Any, tmp_path_factory: pytest.TempPathFactory
           ) -> tuple[Path, dict[str, Any]]:
    """
    Evaluate the labelled clip once for the module, with criteria it should pass.

    Returns the working directory and the evaluation's report.
    """
    directory = tmp_path_factory.mktemp('labelled')
    bag = clip_bag(shared, directory, FRAMES)
    criteria = directory / 'criteria.yaml'
    criteria.write_text(yaml.safe_dump({'floors': {'lanes.F1': LANE_F1_FLOOR,
                                                   'tracking.IDF1': IDF1_FLOOR},
                                        'frames': {'lane_F1': 0.5, 'pass_rate': 0.5}}))
    report = evaluate(EvaluationSettings(
        bag=bag, output=directory / 'evaluation', triton_url=triton_server.grpc_url, rate=RATE,
        labels=(LABELS / 'culane', LABELS / 'gt.txt'), criteria=criteria, lanes_scored='ego',
        lane_rows_from_labels=True, sparse_tracks=True), log=print)
    return directory, report


@pytest.mark.ros
@pytest.mark.server
@pytest.mark.slow
def test_the_clip_scores_within_its_bands(scored: tuple[Path, dict[str, Any]]) -> None:
    """
    The served models score the labelled clip within its bands: lane F1 and IDF1 above floors.

    The criteria pass, the report says so, and both figures are drawn.
    """
    _directory, report = scored
    lanes, tracking = report['accuracy']['lanes'], report['accuracy']['tracking']
    print(json.dumps({'lanes': {key: lanes[key] for key in ('F1', 'precision', 'recall',
                                                            'frames', 'frames_without_output')},
                      'tracking': {key: tracking[key] for key in ('MOTA', 'MOTP', 'IDF1',
                                                                  'id_switches', 'frames')}}))
    assert lanes['frames'] == 10 and tracking['frames'] == 21
    assert lanes['F1'] >= LANE_F1_FLOOR, lanes
    assert tracking['IDF1'] >= IDF1_FLOOR, tracking
    assert report['criteria']['passed'], report['criteria']
    # The clean clip raises no image condition; in lockstep a slow frame can read as the camera
    # pausing (rate), which is the replay's pace, not the camera's.
    assert set(report['camera_health']['reasons']) <= {'rate'}, report['camera_health']
    evaluation = Path(report['outputs_bag']).parent
    assert 'Criteria: PASSED' in (evaluation / 'report.md').read_text()
    assert report['figures'] == ['lane_f1.png', 'worst_frames.png']
    assert all((evaluation / name).stat().st_size > 1000 for name in report['figures'])


@pytest.mark.ros
@pytest.mark.server
@pytest.mark.slow
def test_score_gives_the_evaluations_accuracy_without_triton(
        scored: tuple[Path, dict[str, Any]]) -> None:
    """`bag score` of an evaluation's outputs gives its accuracy again, without Triton."""
    directory, report = scored
    again = score(directory / 'evaluation', directory / 'rescored', Scoring(
        (LABELS / 'culane', LABELS / 'gt.txt'), lanes_scored='ego', lane_rows_from_labels=True,
        sparse_tracks=True), log=print)
    assert again['accuracy'] == report['accuracy']


@pytest.mark.ros
@pytest.mark.server
@pytest.mark.slow
def test_failing_criteria_exit_1_and_come_first(scored: tuple[Path, dict[str, Any]]) -> None:
    """
    Criteria that fail make `bag score` exit with 1, and the report says so before anything else.

    A floor on a figure the report lacks fails, naming it.
    """
    directory, _report = scored
    strict = directory / 'strict.yaml'
    strict.write_text(yaml.safe_dump({'floors': {'lanes.F1': 1.01, 'detection.AP50': 0.5}}))
    result = subprocess.run(
        [sys.executable, '-m', 'triton_perception.cli', 'bag', 'score',
         str(directory / 'evaluation'), '--output', str(directory / 'strict'),
         '--labels', str(LABELS / 'culane'), '--lanes-scored', 'ego',
         '--lane-rows-from-labels', '--criteria', str(strict)],
        capture_output=True, text=True, timeout=300)
    assert result.returncode == 1, result.stderr
    report = (directory / 'strict' / 'report.md').read_text()
    assert report.index('Criteria: FAILED') < report.index('| node |')
    assert 'lanes.F1 = ' in report and 'detection.AP50: not in the report' in report


@pytest.mark.ros
@pytest.mark.server
@pytest.mark.slow
def test_shifted_labels_are_a_regression_and_the_same_labels_are_not(
        scored: tuple[Path, dict[str, Any]], tmp_path: Path) -> None:
    """
    The clip's outputs scored against lane labels moved 80 px on half the frames: flagged.

    Scored against the same labels again: no regression, a zero interval. Both frame by frame
    (bootstrap intervals), against the evaluation's own report.
    """
    from triton_perception.evaluation.accuracy_report import accuracy_regressions
    directory, report = scored
    shifted = tmp_path / 'culane'
    shifted.mkdir()
    for number, label in enumerate(sorted((LABELS / 'culane').glob('*.lines.txt'))):
        lines = label.read_text().splitlines()
        if number % 2 == 0:  # x moved, rows kept: the ego lines no longer match
            lines = [' '.join(str(int(value) + 80) if index % 2 == 0 else value
                              for index, value in enumerate(line.split())) for line in lines]
        (shifted / label.name).write_text('\n'.join(lines) + '\n')
    options = {'lanes_scored': 'ego', 'lane_rows_from_labels': True}
    moved = score(directory / 'evaluation', tmp_path / 'moved', Scoring((shifted,), **options),
                  log=print)
    same = score(directory / 'evaluation', tmp_path / 'same',
                 Scoring((LABELS / 'culane',), **options), log=print)
    problems = accuracy_regressions(moved, report)
    assert any(problem.startswith('per-frame lane_F1') for problem in problems), problems
    assert accuracy_regressions(same, report) == []


def test_expected_flags_an_accuracy_figure_that_fell() -> None:
    """--expected: a lane F1 0.1 lower is a regression; 0.03 lower and any rise are not."""
    from triton_perception.evaluation.accuracy_report import accuracy_regressions
    expected = {'accuracy': {'lanes': {'F1': 0.9, 'precision': 0.9}, 'tracking': {'IDF1': 0.8}}}
    fallen = {'accuracy': {'lanes': {'F1': 0.8, 'precision': 0.87}, 'tracking': {'IDF1': 0.95}}}
    assert accuracy_regressions(fallen, expected) == [
        'accuracy.lanes.F1: expected 0.900, got 0.800 (may fall by 0.05)']
    assert accuracy_regressions({}, expected) == []


def test_the_precision_recall_curve_follows_the_ranked_detections() -> None:
    """Two labelled cars; detections 0.9 (hit), 0.8 (a miss), 0.7 (hit) rank as COCO ranks them."""
    from triton_perception.evaluation.metrics.accuracy_figures import precision_recall
    labels = {1: np.array([[0, 0, 10, 10, 2, 0], [20, 0, 30, 10, 2, 0]], float)}
    detections = {1: np.array([[0, 0, 10, 10, 0.9, 2], [50, 50, 60, 60, 0.8, 2],
                               [21, 0, 30, 10, 0.7, 2]], float)}
    recall, precision = precision_recall(labels, detections, 2)
    np.testing.assert_allclose(recall, [0.5, 0.5, 1.0])
    np.testing.assert_allclose(precision, [1.0, 0.5, 2 / 3])
