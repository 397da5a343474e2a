"""
A replay metric is one module and one registration: the worked example of the docs runs.

docs/architecture.md ("Add a metric") shows a metric as a newcomer would write it. Its code is
taken from the page, registered in evaluation/metrics/metric_registry.py's METRICS, and every
reader of the metrics is checked to see it: the scoring, the criteria (a floor and a per-frame
threshold), report.md's headlines, the frame-by-frame comparison of `--expected` and the sum over
drives.
"""
from __future__ import annotations

import json
from pathlib import Path
import re
import types
from typing import Any

import numpy as np
import pytest

from support.checkout import REPO
from triton_perception.evaluation.accuracy import check_criteria, read_criteria, score_replay
from triton_perception.evaluation.accuracy_report import accuracy_regressions
from triton_perception.evaluation.comparison.expected_frames import frame_comparison
from triton_perception.evaluation.drives import drives_markdown, overall_accuracy
from triton_perception.evaluation.markdown_report import report_markdown
from triton_perception.evaluation.metrics import metric_registry
from triton_perception.evaluation.metrics.metric import Metric
from triton_perception.evaluation.metrics.replay_outputs import ReplayedFrames, ReplayOutputs
from triton_perception.scoring import LabelError

STAMPS = [1_700_000_000_000_000_000 + index * 100_000_000 for index in range(4)]
ROWS = [300.0, 340.0, 380.0, 420.0]


def example_metric() -> Metric:
    """Return the metric of docs/architecture.md's example, run from the page's own code."""
    page = (REPO / 'docs' / 'architecture.md').read_text(encoding='utf-8')
    section = page.split('## Add a metric', 1)[1]
    code = re.search(r'```python\n(.*?)```', section, re.S)
    assert code, 'docs/architecture.md: "Add a metric" has no python example'
    module = types.ModuleType('ego_lane_metric')
    exec(compile(code.group(1), 'docs/architecture.md', 'exec'), module.__dict__)  # noqa: S102
    metric = module.EGO_LANE
    assert isinstance(metric, Metric)
    return metric


@pytest.fixture
def registered(monkeypatch: pytest.MonkeyPatch) -> Metric:
    """Register the example beside the package's metrics, as its one line in METRICS would."""
    metric = example_metric()
    monkeypatch.setattr(metric_registry, 'METRICS', (*metric_registry.METRICS, metric))
    return metric


def lane_labels(path: Path) -> Path:
    """Write TuSimple labels with two lanes on every frame of STAMPS."""
    lines = [json.dumps({'raw_file': f'clips/drive/{stamp}.jpg', 'h_samples': ROWS,
                         'lanes': [[400.0] * 4, [900.0] * 4]}) for stamp in STAMPS]
    path.write_text('\n'.join(lines) + '\n', encoding='utf-8')
    return path


def replay(found_on: int) -> tuple[ReplayedFrames, ReplayOutputs]:
    """Return a replay that found both labelled lanes, as the ego lines, on `found_on` frames."""
    outputs = ReplayOutputs()
    for index, stamp in enumerate(STAMPS):
        found = index < found_on
        lanes = [np.array([[x, row] for row in ROWS]) for x in (400.0, 900.0)] if found else []
        outputs.lanes[stamp] = lanes
        outputs.lane_sides[stamp] = [-1, 1] if found else []
    return ReplayedFrames(list(enumerate(STAMPS, start=1)), (1280, 720)), outputs


def report(scored_accuracy: dict[str, Any], per_frame: dict[str, dict[int, float]]) -> Any:
    """Return a replay report around the scores, as add_accuracy writes it."""
    return {'input': {'bag': 'drive', 'topic': '/camera/image_raw', 'frames': len(STAMPS),
                      'rate': 1.0, 'timing': 'lockstep', 'replay_s': 1.0, 'bag_s': 0.4},
            'nodes': {}, 'detection': {'frames': 0, 'frames_with_class': {},
                                       'mean_per_frame': {}},
            'lanes': {'frames': len(STAMPS), 'mean_lanes_per_frame': 2.0, 'ego_lane_rate': 1.0},
            'outputs_bag': 'outputs', 'accuracy': scored_accuracy,
            'per_frame': {name: {str(stamp): value for stamp, value in values.items()}
                          for name, values in per_frame.items()}}


def test_a_registered_metric_is_scored_beside_the_lanes(registered: Metric,
                                                        tmp_path: Path) -> None:
    """The lane labels are scored by the lane metric and by the new one, with its frames."""
    camera, outputs = replay(found_on=3)
    scored = score_replay(camera, outputs, [lane_labels(tmp_path / 'lanes.json')], ['car'])
    assert set(scored.accuracy) == {'lanes', 'ego_lane'}
    assert scored.accuracy['ego_lane'] == {'ego_rate': 0.75, 'frames': 4,
                                           'labels': str(tmp_path / 'lanes.json')}
    assert scored.per_frame['ego_found'] == dict(zip(STAMPS, [1.0, 1.0, 1.0, 0.0]))
    assert scored.accuracy['lanes']['recall'] == 0.75


def test_the_criteria_hold_the_new_metric(registered: Metric, tmp_path: Path) -> None:
    """Its figure takes a floor, its per-frame figure a threshold; unknown names still fail."""
    camera, outputs = replay(found_on=3)
    scored = score_replay(camera, outputs, [lane_labels(tmp_path / 'lanes.json')], ['car'])
    criteria_file = tmp_path / 'criteria.yaml'
    criteria_file.write_text('floors: {ego_lane.ego_rate: 0.9}\n'
                             'frames: {ego_found: 1.0, pass_rate: 0.5}\n', encoding='utf-8')
    result = check_criteria(scored.accuracy, scored.per_frame, read_criteria(criteria_file))
    assert not result['passed'] and result['failing'] == ['ego_lane.ego_rate = 0.75 < 0.9']
    assert result['failing_frames'] == [STAMPS[3]]
    criteria_file.write_text('frames: {ego_seen: 1.0, pass_rate: 0.5}\n', encoding='utf-8')
    with pytest.raises(LabelError, match='known: detection_recall, lane_F1, ego_found'):
        read_criteria(criteria_file)


def test_headlines_comparison_and_drives_read_the_new_metric(registered: Metric,
                                                             tmp_path: Path) -> None:
    """report.md shows it, --expected compares its frames, a directory of drives sums it."""
    labels = [lane_labels(tmp_path / 'lanes.json')]
    runs = {}
    for found_on in (4, 1):
        camera, outputs = replay(found_on)
        scored = score_replay(camera, outputs, labels, ['car'])
        runs[found_on] = report(scored.accuracy, scored.per_frame)
    assert '| ego_lane | ego_rate 1.000 |' in report_markdown(runs[4])
    intervals = frame_comparison(runs[1], runs[4], 0.05)
    assert intervals['ego_found']['regressed'] and intervals['ego_found']['frames'] == 4
    assert any(problem.startswith('per-frame ego_found') for problem in
               accuracy_regressions(runs[1], runs[4]))
    overall = overall_accuracy(runs, ['car'])
    assert overall['ego_lane'] == {'ego_rate': 0.625, 'frames': 8}
    assert 'ego_lane ego_rate 0.625' in drives_markdown({'drives': {}, 'accuracy': overall})
