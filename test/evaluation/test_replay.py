"""Replaying recorded drives: the whole clip through the pipeline, and regression detection."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from support.checkout import REPO
from support.highway_clip import CALIBRATION, clip_bag
from triton_perception.evaluation.evaluation import evaluate, EvaluationSettings
from triton_perception.evaluation.figures import regressions, tracking_figures


@pytest.mark.ros
@pytest.mark.server
@pytest.mark.slow
def test_full_clip_replay_at_recorded_rate(shared: Path, triton_server: Any,
                                           tmp_path: Path) -> None:
    """
    The evaluation also reports the ego lane on the ground.

    That needs the clip's CameraInfo in the bag and its camera_pose in the parameters.
    """
    params = yaml.safe_load((REPO / 'config' / 'params.yaml').read_text())
    pose = yaml.safe_load((CALIBRATION / 'camera_pose.yaml').read_text())['/**']['ros__parameters']
    for node in ('detection_node', 'lane_node'):
        params[f'/**/{node}']['ros__parameters'].update(pose)
    params_file = tmp_path / 'params.yaml'
    params_file.write_text(yaml.safe_dump(params))
    bag = clip_bag(shared, tmp_path, None, CALIBRATION / 'camera_info.yaml')
    report = evaluate(EvaluationSettings(bag=bag, output=tmp_path / 'evaluation',
                                         triton_url=triton_server.grpc_url,
                                         params_file=params_file), log=print)
    assert report['input']['frames'] == 221
    for node, figures in report['nodes'].items():
        assert figures['accounted'], (node, figures)
        # Every frame the player published reached the node or was counted as lost on the way.
        assert figures['received'] + figures['lost_before_node'] == 221, (node, figures)
        assert figures['published'] > 0 and figures['failed'] == figures['rejected'] == 0
    assert report['lanes']['frames'] == report['nodes']['lane_node']['published']
    assert report['lanes']['ego_lane_rate'] >= 0.95, report['lanes']
    assert report['detection']['frames'] == report['nodes']['detection_node']['published']
    assert report['detection']['frames_with_class'].get('car', 0) >= 0.90, report['detection']
    ground = report['ground']
    print(f'ground: {ground}')
    assert ground['ego_lane_frames'] >= 0.9 * report['lanes']['frames'], ground
    assert abs(ground['ego_lane_width_m']['mean'] - 3.7) <= 0.3, ground  # the calibration's
    # The spread is reported, not asserted: which frames a loaded machine processes (the
    # latest-frame slot drops the rest) decides it (0.04 m quiet, 0.34 m under a CPU hog).
    assert abs(ground['lateral_offset_m']['mean']) <= 1.0, ground
    # Tracking (on by default) is reported. How well it holds the cars is not asserted here: at
    # recorded timing a loaded machine answers as few as 11 of the 221 frames, and tracks across
    # such gaps break (1.8 tracks per frame then, 3.5-3.9 on every frame).
    # tracking/test_tracking_clip.py holds the tracker to the labelled cars on every frame.
    tracking = report['tracking']
    print(f'tracking: {tracking}')
    assert tracking['mean_tracks_per_frame'] > 0, tracking
    saved = json.loads((tmp_path / 'evaluation' / 'report.json').read_text())
    assert saved['lanes'] == report['lanes']
    assert 'ego lane' in (tmp_path / 'evaluation' / 'report.md').read_text()
    assert 'ego-lane width' in (tmp_path / 'evaluation' / 'report.md').read_text()


def report_with(car_rate: float, lost_fraction: float) -> dict[str, Any]:
    """Return a minimal report, written out by hand, with the figures `regressions` compares."""
    return {'detection': {'frames_with_class': {'car': car_rate}, 'mean_per_frame': {'car': 2.0}},
            'lanes': {'ego_lane_rate': 0.98, 'mean_lanes_per_frame': 2.5},
            'nodes': {'lane_node': {'published_fraction': 0.6, 'lost_fraction': lost_fraction}}}


def test_regressions_apply_each_tolerance_to_hand_written_reports() -> None:
    """
    A report is a regression only beyond each figure's tolerance.

    A lost_fraction missing from a saved report reads as none lost.
    """
    expected = report_with(car_rate=0.95, lost_fraction=0.0)
    assert regressions(report_with(car_rate=0.91, lost_fraction=0.015), expected) == []
    assert regressions(report_with(car_rate=0.85, lost_fraction=0.0), expected) == [
        'detection.frames_with_class[car]: expected 0.950, got 0.850 (tolerance ±0.05)']
    assert regressions(report_with(car_rate=0.95, lost_fraction=0.05), expected) == [
        'nodes.lost_fraction[lane_node]: expected 0.000, got 0.050 (tolerance ±0.02)']
    # A report saved before losses were counted has no lost_fraction: it reads as none lost.
    del expected['nodes']['lane_node']['lost_fraction']
    assert regressions(report_with(car_rate=0.95, lost_fraction=0.0), expected) == []


def test_tracking_figures_of_hand_written_frames() -> None:
    """Track '1' lasts 0.2 s, '2' 0.1 s, '3' one frame; three new tracks in 0.3 s."""
    frames = [(10.0, ['1', '2']), (10.1, ['1', '2']), (10.2, ['1']), (10.3, ['3'])]
    figures = tracking_figures(frames)
    assert figures['tracks'] == 3 and figures['mean_tracks_per_frame'] == 1.5
    assert figures['track_length_s']['median'] == pytest.approx(0.1)
    assert figures['track_length_s']['p90'] == pytest.approx(0.18)
    assert figures['new_tracks_per_s'] == pytest.approx(10.0)
    expected = {**report_with(car_rate=0.95, lost_fraction=0.0), 'tracking': figures}
    fragmented = {**report_with(car_rate=0.95, lost_fraction=0.0),
                  'tracking': {**figures, 'new_tracks_per_s': 16.0}}
    assert regressions(fragmented, expected) == [
        'tracking.new_tracks_per_s[new_tracks_per_s]: expected 10.000, got 16.000 '
        '(tolerance ±50% of expected)']
    # A baseline from before tracking was reported compares nothing about it.
    assert regressions(fragmented, report_with(car_rate=0.95, lost_fraction=0.0)) == []


@pytest.mark.ros
@pytest.mark.server
@pytest.mark.slow
def test_expected_report_catches_a_raised_score_threshold(shared: Path, triton_server: Any,
                                                          tmp_path: Path) -> None:
    """
    An evaluation against an earlier report flags a raised score threshold as a regression.

    Fewer frames with cars: the report says REGRESSIONS.
    """
    bag = clip_bag(shared, tmp_path, 50)
    baseline = evaluate(EvaluationSettings(bag=bag, output=tmp_path / 'baseline',
                                           triton_url=triton_server.grpc_url), log=print)
    params = yaml.safe_load((REPO / 'config' / 'params.yaml').read_text())
    params['/**/detection_node']['ros__parameters']['score_threshold'] = 0.85
    regressed_params = tmp_path / 'regressed.yaml'
    regressed_params.write_text(yaml.safe_dump(params))
    regressed = evaluate(EvaluationSettings(
        bag=bag, output=tmp_path / 'regressed', triton_url=triton_server.grpc_url,
        params_file=regressed_params, expected=tmp_path / 'baseline' / 'report.json'), log=print)
    assert baseline['detection']['frames_with_class']['car'] >= 0.9
    problems = regressed['comparison']['regressions']
    assert any(problem.startswith('detection.frames_with_class[car]') for problem in problems), \
        problems
    assert 'REGRESSIONS' in (tmp_path / 'regressed' / 'report.md').read_text()


@pytest.mark.ros
@pytest.mark.server
@pytest.mark.slow
def test_lockstep_publishes_the_same_results_beside_a_cpu_hog(shared: Path, triton_server: Any,
                                                              tmp_path: Path) -> None:
    """
    The same bag replayed in lockstep twice, the second time beside a busy process.

    Every frame is answered both times, with the same detections, track ids and lanes: the
    results are those of the perception, not of the machine's load.
    """
    import subprocess
    import sys

    from triton_perception.evaluation.metrics.replay_outputs import read_outputs
    from triton_perception.evaluation.figures import detection_labels

    bag = clip_bag(shared, tmp_path, 24)
    outputs = []
    for run in ('quiet', 'hog'):
        hog = subprocess.Popen([sys.executable, '-c', 'while True: pass']) if run == 'hog' \
            else None
        try:
            report = evaluate(EvaluationSettings(
                bag=bag, output=tmp_path / run, triton_url=triton_server.grpc_url,
                timing='lockstep'), log=print)
        finally:
            if hog is not None:
                hog.kill()
                hog.wait()
        assert report['input']['timing'] == 'lockstep'
        outputs.append(read_outputs(Path(report['outputs_bag']), detection_labels(None)))
    quiet, loaded = outputs
    assert len(quiet.detections) == len(quiet.lanes) == 24
    assert sorted(quiet.detections) == sorted(loaded.detections)
    assert sorted(quiet.lanes) == sorted(loaded.lanes)
    for stamp in quiet.detections:
        np.testing.assert_allclose(quiet.detections[stamp], loaded.detections[stamp], atol=1e-6)
        np.testing.assert_array_equal(quiet.tracks[stamp][:, 6], loaded.tracks[stamp][:, 6])
        assert len(quiet.lanes[stamp]) == len(loaded.lanes[stamp])
        for ours, theirs in zip(quiet.lanes[stamp], loaded.lanes[stamp]):
            np.testing.assert_allclose(ours, theirs, atol=1e-3)
        assert quiet.lane_sides[stamp] == loaded.lane_sides[stamp]
