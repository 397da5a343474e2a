"""
The glue bench's table and the issue's targets, from the cases' figures.

Targets (issue 31), checked on the measured figures only (None when the case did not run):
- detections + lanes on one camera: CPU per frame at most 1.5 x the floor's (detections only);
  the ratio to the floor taking frames serialized is reported beside it (issue 41);
- four cameras with both models and the overlay ready: the RSS of all perception processes
  together at most 500 MB (10^6 bytes; the figures are in MiB);
- no frame lost at 4 x 30 Hz with the constant graphs, every frame accounted for.
"""
from __future__ import annotations

from typing import Any

from triton_perception.bench.report import table_cell
from triton_perception.serving import ENSEMBLES

CPU_RATIO_TARGET = 1.5
RSS_TARGET_MB = 500.0
MIB_PER_MB = 1e6 / 2 ** 20
LAYOUT_NAMES = {'floor': 'floor (one bare node per camera)',
                'floor_serialized': 'floor, serialized take (one bare node per camera)',
                'per_node': 'per_node (a process per node)',
                'single': 'single (one perception_process)'}


def floor_of(cases: dict[str, dict[str, Any]], cameras: int,
             floor: str = 'floor') -> dict[str, Any] | None:
    """Return the figures of the `floor` layout for `cameras` cameras, None if it did not run."""
    return cases.get(f'{floor}_det_{cameras}cam')


def cpu_ratio(cases: dict[str, dict[str, Any]], figures: dict[str, Any],
              floor_layout: str = 'floor') -> float | None:
    """Return the case's CPU per frame over the floor's with as many cameras (None: no floor)."""
    floor = floor_of(cases, figures['cameras'], floor_layout)
    if not floor or not floor['cpu_ms_per_frame']:
        return None
    return round(float(figures['cpu_ms_per_frame']) / float(floor['cpu_ms_per_frame']), 2)


def targets(cases: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Return each target of issue 31 with the figures it is judged on, and whether it is met."""
    result: dict[str, Any] = {}
    for layout in ('single', 'per_node'):
        one = cases.get(f'{layout}_both_1cam')
        for floor, name in (('floor', 'floor'), ('floor_serialized', 'serialized_floor')):
            if one and floor_of(cases, 1, floor):
                ratio = cpu_ratio(cases, one, floor)
                result[f'cpu_both_1cam_vs_{name}_{layout}'] = {
                    'ratio': ratio, 'limit': CPU_RATIO_TARGET,
                    'met': ratio is not None and ratio <= CPU_RATIO_TARGET}
        four = cases.get(f'{layout}_both_4cam')
        if four:
            megabytes = round(four['rss_mib'] / MIB_PER_MB, 1)
            result[f'rss_both_4cam_{layout}'] = {'rss_mb': megabytes, 'limit_mb': RSS_TARGET_MB,
                                                 'met': megabytes <= RSS_TARGET_MB}
            result[f'no_frame_lost_4cam_{layout}'] = {
                'lost': four['frames_lost'], 'accounted': four['accounted'],
                'without_result': four['frames_without_result'],
                'met': four['frames_lost'] == 0 and bool(four['accounted'])}
    return result


def glue_table(report: dict[str, Any]) -> str:
    """
    Return the cases as a Markdown table, then one line per target.

    Frames sent are all cameras' (warm-up and window); every node accounts for each frame of
    its camera, so lost and without-result frames are summed over the nodes (the floor's: the
    frames that brought the bench no result).
    """
    cases = report['cases']
    lines = ['| layout | models | cameras | processes | CPU ms/frame | x floor | RSS MiB | '
             'RSS MiB/camera | added latency p50 / p99 ms | Triton ms/request | input Hz per '
             'camera | served | frames sent | lost, all nodes | without result, all nodes |',
             '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- '
             '| --- |']
    for figures in cases.values():
        triton = ', '.join(f'{model} {ms:.1f}' for model, ms in
                           sorted(figures['triton_request_ms'].items()) if model in ENSEMBLES)
        lines.append(
            f"| {LAYOUT_NAMES[figures['layout']]} | {figures['models']} | {figures['cameras']} "
            f"| {figures['processes']} | {table_cell(figures['cpu_ms_per_frame'])} "
            f"| {table_cell(cpu_ratio(cases, figures))} | {figures['rss_mib']:.0f} "
            f"| {figures['rss_per_camera_mib']:.0f} "
            f"| {table_cell(figures['added_latency_ms']['p50'])} / "
            f"{table_cell(figures['added_latency_ms']['p99'])} | {triton} "
            f"| {figures['input_hz_per_camera']:g} | {figures['served_share']:.0%} "
            f"| {figures['frames_sent']} | {table_cell(figures['frames_lost'])} "
            f"| {table_cell(figures['frames_without_result'])} |")
    lines.append('')
    for name, figures in cases.items():
        if figures.get('health_check_cpu_ms_per_frame') is not None:
            lines.append(f"- {name}: camera health check {figures['health_check_cpu_ms_per_frame']}"
                         f" ms of CPU per frame, {figures['health_check_cpu_share']:.1%} of the "
                         'CPU per frame')
    for name, target in report.get('targets', {}).items():
        shown = ', '.join(f'{key} {table_cell(value)}' for key, value in target.items()
                          if key != 'met')
        lines.append(f"- {name}: {shown}: {'met' if target['met'] else 'NOT met'}")
    return '\n'.join(lines)
