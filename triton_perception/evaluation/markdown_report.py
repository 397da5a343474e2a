"""
report.md of one replay: an evaluation's human-readable report, beside report.json.

Failing criteria first, then accuracy (through the metric registry), then the replay's own
figures: node accounting and latency, detections, lanes, the ground, tracking, camera health
and the comparison with an earlier run. report.json's shape is report_schema.py's, which also
writes every report.md (a replay's, several drives', a comparison's) beside its JSON.
"""
from __future__ import annotations

from pathlib import Path

from triton_perception.evaluation.accuracy import WORST_FRAMES
from triton_perception.evaluation.comparison import comparison_markdown, runs_markdown
from triton_perception.evaluation.figures import replay_speed
from triton_perception.evaluation.metrics import (health_markdown, registered, ReplayReport,
                                                  write_report_files)


def write_report(report: ReplayReport, output: Path) -> None:
    """Write report.json and report.md into `output`."""
    write_report_files(output, report, report_markdown(report))


def report_markdown(report: ReplayReport) -> str:
    """
    Return the report as Markdown: failing criteria first, then accuracy, then the replay.

    The replay's own figures (node accounting, detections, lanes, tracking) follow.
    """
    lines = [f"# Evaluation of {report['input']['bag']}", '']
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
        for metric in registered():
            section = accuracy.get(metric.kind)
            if section is not None:
                cells = [f'{name} {section[name]:.3f}' if isinstance(section[name], float)
                         else f'{name} {section[name]}'
                         for name in metric.headlines if name in section]
                lines.append(f'| {metric.kind} | ' + ' | '.join(cells + [''] * (5 - len(cells)))
                             + ' |')
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
    return '\n'.join(lines) + '\n' + replay_markdown(report)


def replay_markdown(report: ReplayReport) -> str:
    """
    Return the replay's own figures as Markdown.

    Node accounting and latency, detections and lanes, then the ground, tracking and the
    comparison with an expected report where the report has them.
    """
    served = report.get('served')
    lines = [f"{report['input']['frames']} frames on {report['input']['topic']}, "
             f"{replay_speed(report['input'])}"
             + (f", in ROS domain {report['input']['ros_domain_id']} of its own"
                if 'ros_domain_id' in report['input'] else '') + '.' + (
                 f" Models served at precision {served['precision']}" + (
                     f" (calibration: {served['calibration']})" if served['calibration'] else '')
                 + '.' if served else ''), '',
             '| node | lost before the node | received | published | dropped | rejected | '
             'failed | accounted | latency p50 / p95 / max (ms) |',
             '| --- | --- | --- | --- | --- | --- | --- | --- | --- |']
    for node, figures in report['nodes'].items():
        latency = figures['latency_ms']
        lines.append(f"| {node} | {figures.get('lost_before_node', 0)} | {figures['received']} | "
                     f"{figures['published']} | {figures['dropped']} | {figures['rejected']} | "
                     f"{figures['failed']} | "
                     f"{'yes' if figures['accounted'] else 'NO'} | "
                     f"{latency.get('p50', 0):.0f} / {latency.get('p95', 0):.0f} / "
                     f"{latency.get('max', 0):.0f} |")
    detection, lanes = report['detection'], report['lanes']
    lines += ['', f"Detections in {detection['frames']} published frames:", '',
              '| class | frames with it | boxes per frame |', '| --- | --- | --- |']
    for name, rate in detection['frames_with_class'].items():
        lines.append(f"| {name} | {rate:.1%} | {detection['mean_per_frame'][name]:.2f} |")
    lines += ['', f"Lanes in {lanes['frames']} published frames: "
              f"{lanes['mean_lanes_per_frame']:.2f} lanes per frame, ego lane (left and right "
              f"boundary) in {lanes['ego_lane_rate']:.1%}.", '']
    if 'ground' in report:
        ground = report['ground']
        width, offset = ground['ego_lane_width_m'], ground['lateral_offset_m']
        lines += [f"On the ground ({ground['frames']} frames, both ego lines in "
                  f"{ground['ego_lane_frames']}): ego-lane width {width['mean']:.2f} m "
                  f"(std {width['std']:.2f} m), lateral offset from the lane centre "
                  f"{offset['mean']:+.2f} m (std {offset['std']:.2f} m, + = left).", '']
    if 'tracking' in report:
        tracking = report['tracking']
        length = tracking['track_length_s']
        lines += [f"Tracking: {tracking['tracks']} tracks, {tracking['mean_tracks_per_frame']:.2f} "
                  f"per frame, lasting {length['median']:.2f} s (median, p90 "
                  f"{length['p90']:.2f} s); {tracking['new_tracks_per_s']:.2f} new tracks per "
                  'second.', '']
    lines += health_markdown(report.get('camera_health', {}))
    if 'comparison' in report:
        comparison = report['comparison']
        lines += [f"Compared with {comparison['expected']}: "
                  + ('no regression.' if not comparison['regressions'] else 'REGRESSIONS:'), '']
        lines += [f'- {problem}' for problem in comparison['regressions']]
        lines += comparison_markdown(comparison.get('intervals', {}))
        if 'runs' in comparison:
            lines += ['', *runs_markdown(comparison['runs'])]
    return '\n'.join(lines) + '\n'
