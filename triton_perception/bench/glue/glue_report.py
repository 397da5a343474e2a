"""
The glue bench's table and the package's targets for its nodes' cost, from the cases' figures.

Targets, checked on the measured figures only (a line only for the cases that ran):
- detections + lanes on one camera: CPU per frame at most
  1.2 x the floor's (detections only), judged against the floor taking the Image; the ratio to
  the floor taking frames serialized is reported beside it;
- four cameras with both models and the overlay ready, in one perception_process:
  the RSS of all perception processes together at most 500 MB (10^6 bytes; the figures are in
  MiB);
- four cameras with both models at 30 Hz, each layout: at least 99 % of the results
  served, no frame lost, every frame accounted for, and the layout's RSS at most 1 GB; the
  target holds for 1280x720 frames, so it is met only with frames of at least as many pixels.
"""
from __future__ import annotations


from triton_perception.bench.glue.glue_schema import (CpuTarget, GlueCaseFigures, GlueReport,
                                                      RssTarget, ServedTarget)
from triton_perception.bench.session import table_cell
from triton_perception.serving import ENSEMBLES

CPU_RATIO_TARGET = 1.5          # against the floor that takes frames serialized
CPU_RATIO_GOAL = 1.2
RSS_TARGET_MB = 500.0           # one perception_process, four cameras
SERVED_TARGET = 0.99            # four cameras at 30 Hz
LAYOUT_RSS_TARGET_MB = 1000.0   # the layout that serves them
SERVED_TARGET_PIXELS = 1280 * 720
MIB_PER_MB = 1e6 / 2 ** 20
LAYOUT_NAMES = {'floor': 'floor (one bare node per camera)',
                'floor_serialized': 'floor, serialized take (one bare node per camera)',
                'per_node': 'per_node (a process per node)',
                'single': 'single (one perception_process)',
                'single_events': "single, hot path on rclpy's EventsExecutor",
                'groups_of_2': 'groups_of_2 (a perception_process per 2 cameras)',
                'per_camera': 'per_camera (a perception_process per camera)'}
FOUR_CAMERA_LAYOUTS = ('single', 'groups_of_2', 'per_camera', 'per_node')


def floor_of(cases: dict[str, GlueCaseFigures], cameras: int,
             floor: str = 'floor') -> GlueCaseFigures | None:
    """Return the figures of the `floor` layout for `cameras` cameras, None if it did not run."""
    return cases.get(f'{floor}_det_{cameras}cam')


def cpu_ratio(cases: dict[str, GlueCaseFigures], figures: GlueCaseFigures,
              floor_layout: str = 'floor') -> float | None:
    """Return the case's CPU per frame over the floor's with as many cameras (None: no floor)."""
    floor = floor_of(cases, figures['cameras'], floor_layout)
    if not floor or not floor['cpu_ms_per_frame']:
        return None
    return round(float(figures['cpu_ms_per_frame']) / float(floor['cpu_ms_per_frame']), 2)


def megabytes(figures: GlueCaseFigures) -> float:
    """Return the case's RSS in MB (10^6 bytes)."""
    return round(float(figures['rss_mib']) / MIB_PER_MB, 1)


def served_target(figures: GlueCaseFigures) -> ServedTarget:
    """Return the four-camera target for one layout: served, lost, accounted, RSS."""
    width, _, height = str(figures.get('frame', '960x540')).partition('x')
    large_enough = int(width) * int(height) >= SERVED_TARGET_PIXELS
    return {'frame': figures.get('frame'), 'served': figures['served_share'],
            'limit': SERVED_TARGET, 'lost': figures['frames_lost'],
            'accounted': figures['accounted'], 'rss_mb': megabytes(figures),
            'limit_mb': LAYOUT_RSS_TARGET_MB,
            'met': (large_enough and figures['served_share'] >= SERVED_TARGET
                    and figures['frames_lost'] == 0 and bool(figures['accounted'])
                    and megabytes(figures) <= LAYOUT_RSS_TARGET_MB)}


def targets(cases: dict[str, GlueCaseFigures]) -> dict[str, CpuTarget | RssTarget | ServedTarget]:
    """Return each target with the figures it is judged on, and whether it is met."""
    result: dict[str, CpuTarget | RssTarget | ServedTarget] = {}
    for layout in ('single', 'single_events', 'per_node'):
        one = cases.get(f'{layout}_both_1cam')
        if one and floor_of(cases, 1, 'floor_serialized'):
            ratio = cpu_ratio(cases, one, 'floor_serialized')
            result[f'cpu_both_1cam_{layout}'] = {
                'frame': one.get('frame'), 'ratio_to_floor': cpu_ratio(cases, one),
                'ratio_to_floor_serialized': ratio, 'limit': CPU_RATIO_TARGET,
                'goal': CPU_RATIO_GOAL,
                'met': ratio is not None and ratio <= CPU_RATIO_TARGET}
    single = cases.get('single_both_4cam')
    if single:
        result['rss_both_4cam_single'] = {'rss_mb': megabytes(single),
                                          'limit_mb': RSS_TARGET_MB,
                                          'met': megabytes(single) <= RSS_TARGET_MB}
    for layout in FOUR_CAMERA_LAYOUTS:
        four = cases.get(f'{layout}_both_4cam')
        if four:
            result[f'served_4cam_{layout}'] = served_target(four)
    return result


def node_and_server(figures: GlueCaseFigures) -> float | None:
    """
    Return the case's CPU per frame with tritonserver's: where work moved into the graph went.

    On this machine the CPU profile runs the graphs on the same cores as the nodes; on the Orin
    the model steps run on the GPU, so the sum overstates what the Orin's cores pay.
    """
    server = figures.get('server_cpu_ms_per_frame')
    node = figures.get('cpu_ms_per_frame')
    if server is None or node is None:
        return None
    return round(float(node) + float(server), 2)


def glue_table(report: GlueReport) -> str:
    """
    Return the cases as a Markdown table, then one line per target.

    Frames sent are all cameras' (warm-up and window); every node accounts for each frame of
    its camera, so lost and without-result frames are summed over the nodes (the floor's: the
    frames that brought the bench no result).
    """
    cases = report.get('cases', {})
    lines = ['| layout | models | cameras | processes | CPU ms/frame | x floor | x serialized '
             'floor | tritonserver '
             'CPU ms/frame | node + server ms/frame | RSS MiB | RSS MiB/camera | added latency '
             'p50 / p99 ms | Triton ms/request | input Hz per camera | served | frames sent | '
             'lost, all nodes | without result, all nodes |',
             '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- '
             '| --- | --- | --- | --- |']
    for figures in cases.values():
        triton = ', '.join(f'{model} {ms:.1f}' for model, ms in
                           sorted(figures['triton_request_ms'].items()) if model in ENSEMBLES)
        lines.append(
            f"| {LAYOUT_NAMES[figures['layout']]} | {figures['models']} | {figures['cameras']} "
            f"| {figures['processes']} | {table_cell(figures['cpu_ms_per_frame'])} "
            f'| {table_cell(cpu_ratio(cases, figures))} '
            f"| {table_cell(cpu_ratio(cases, figures, 'floor_serialized'))} "
            f"| {table_cell(figures.get('server_cpu_ms_per_frame'))} "
            f"| {table_cell(node_and_server(figures))} | {figures['rss_mib']:.0f} "
            f"| {figures['rss_per_camera_mib']:.0f} "
            f"| {table_cell(figures['added_latency_ms']['p50'])} / "
            f"{table_cell(figures['added_latency_ms']['p99'])} | {triton} "
            f"| {figures['input_hz_per_camera']:g} | {figures['served_share']:.0%} "
            f"| {figures['frames_sent']} | {table_cell(figures['frames_lost'])} "
            f"| {table_cell(figures['frames_without_result'])} |")
    lines.append('')
    settings = report.get('settings')
    frame = settings['frame'] if settings else None
    if frame:
        lines.append(f'- frames: {frame[2]} {frame[0]}x{frame[1]} per camera')
    for name, figures in cases.items():
        if figures.get('bench_cpu_ms_per_frame') is not None:
            lines.append(f'- {name}: beside the case, tritonserver '
                         f"{figures['server_cpu_ms_per_frame']} and the bench's own process "
                         f"{figures['bench_cpu_ms_per_frame']} ms of CPU per frame")
        if figures.get('health_check_cpu_ms_per_frame') is not None:
            lines.append(f"- {name}: camera health check {figures['health_check_cpu_ms_per_frame']}"
                         f" ms of CPU per frame, {figures['health_check_cpu_share']:.1%} of the "
                         'CPU per frame')
    for name, target in report.get('targets', {}).items():
        shown = ', '.join(f'{key} {table_cell(value)}' for key, value in target.items()
                          if key != 'met')
        lines.append(f"- {name}: {shown}: {'met' if target['met'] else 'NOT met'}")
    return '\n'.join(lines)
