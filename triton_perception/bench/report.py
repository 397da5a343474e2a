"""The report of `bench`: how each figure was measured, and its tables."""
from __future__ import annotations

from typing import Mapping

from triton_perception.bench.bench_schema import CaseFigures, ThroughputPhase
from triton_perception.bench.budget import row_label
from triton_perception.bench.session import (CASES, DIAGNOSTICS_PERIOD_S, RATE_HZ,
                                             RSS_SAMPLE_PERIOD_S, STEP_TIMERS, table_cell)

METHOD = {
    'reference_ms': 'model repository modules by file path + onnxruntime CPU with '
                    'configs/cpu.pbtxt thread settings, one process, median after warm-up; '
                    'each frame run twice in a row, the second run timed (warm, as the ROS '
                    "path's model step after the bench's Triton request) "
                    '(also with --profile tensorrt: ratio then sets GPU serving against CPU)',
    'triton_ms': 'tritonclient.grpc request as the node sends it, frames one at a time; '
                 'both: the two requests concurrently, until both returned',
    'latency_order': 'per frame: reference, then Triton, then ROS (paired under the same load)',
    'ros_e2e_ms': 'publish (rgb8, reliable publisher) -> result callback in this process, '
                  'frames one at a time; lanes: lanes and drivable_area both received',
    'throughput_fps': f'clip looped at {RATE_HZ:g} Hz; results received / duration; both: the '
                      "slower node's (the nodes drop frames independently)",
    'p95_first_10s_ms': 'publish -> result received, frames published in the first 10 s of the '
                        "throughput phase (last 10 s likewise); both: each node's results",
    'cpu_ms_per_frame': 'utime+stime of the process and its children over the throughput '
                        'phase (including the drain) / results; both: node = sum of each '
                        "node's per result, server = per (results of both nodes / 2)",
    'reference_cpu_ms_per_frame': 'process CPU time of the reference loop / frames (onnxruntime '
                                  'uses 2 threads, so it exceeds reference_ms)',
    'bytes_per_frame': 'per ensemble, bytes one frame moves across process boundaries: client '
                       '-> server (frame + request inputs), into the model step (between steps), '
                       "server -> client (the ensemble outputs), from the configs' shapes",
    'triton_steps_ms': "Triton statistics over the latency phase (the bench's and the node's "
                       'requests): mean ms per request of each timer, for the ensemble and each '
                       "of its steps; where Triton's share of the time goes",
    'budget': "one-node cases, latency phase (frames one at a time): per frame, the bench's "
              'publish -> last result received split into stages that sum to it; median and p90 '
              'over frames of each stage (so the medians need not add up). node_*: the '
              "node's own stage sums in /diagnostics (stage_*_ms_sum, time.monotonic() in the "
              'worker: callback -> client.infer called -> returned -> every result published), '
              'read after each frame (the bench sets diagnostics_period_s '
              f"{DIAGNOSTICS_PERIOD_S:g}); Triton rows: Triton's statistics "
              '(get_inference_statistics) before and after the '
              "frame, each step's queue/compute_input/compute_infer/compute_output, ensemble "
              "scheduling = the ensemble's success time - the steps'; client_server = the "
              "node's client.infer round trip - the ensemble's success time (serialisation, "
              'gRPC, the front end); result_to_subscriber = DDS reception - source timestamp '
              'of the last result message (MessageInfo); frame_to_node = the remainder (the '
              "frame's publish, DDS and the node's executor, plus the bench's own callback "
              'delay); a frame is skipped unless exactly one node frame and one Triton request '
              'lie between the readings',
    'throughput.node_stages_ms': "throughput phase: the node's stage sums (as in budget) over "
                                 'the phase / the frames they count: mean ms per result',
    'throughput.triton_steps_ms': 'throughput phase: as triton_steps_ms, over the phase (with '
                                  'max_in_flight > 1 the queue timers show requests waiting)',
    'cpu_outside_graph_ms_per_frame': 'one-node cases, throughput phase: utime+stime per '
                                      "result of the node, of tritonserver's own process (gRPC "
                                      'front end, ensemble scheduler, in-process backends) and '
                                      'of each Python backend stub by the model it serves (its '
                                      'command line); outside_graph = node + tritonserver + '
                                      "the stubs of the ensemble's steps before the model step; "
                                      "the model step's stub counts whole as the graph (its IPC "
                                      'included, so outside_graph is a lower bound); None when '
                                      'the model step has no process of its own',
    'node_peak_rss_mb': 'VmHWM of each node process, summed for both',
    'server_peak_rss_mb': f'max over {RSS_SAMPLE_PERIOD_S:g} s samples of the summed VmRSS of '
                          'tritonserver and its children (Python backend stubs), during the case; '
                          'shared-memory regions count once per process mapping them',
}


def markdown_table(cases: Mapping[str, CaseFigures]) -> str:
    """Return the cases' headline figures as one Markdown table (– where a figure is missing)."""
    cell = table_cell
    header = ('| case | reference ms | Triton ms (median / p95) | ROS e2e ms (median / p95) | '
              'ratio | capacity fps | throughput fps | throughput ratio | '
              'p95 first / last 10 s ms | node CPU ms/frame | server CPU ms/frame | '
              'node peak RSS MB | server peak RSS MB |')
    rows = [header, '|' + ' --- |' * header.count(' | ') + ' --- |']
    for case in CASES:
        if case not in cases:
            continue
        figures = cases[case]
        rows.append(' | '.join([
            f'| {case}', cell(figures['reference_ms']['median']),
            f"{cell(figures['triton_ms']['median'])} / {cell(figures['triton_ms']['p95'])}",
            f"{cell(figures['ros_e2e_ms']['median'])} / {cell(figures['ros_e2e_ms']['p95'])}",
            cell(figures['ratio']), cell(figures['capacity_fps']), cell(figures['throughput_fps']),
            cell(figures['throughput_ratio']),
            f"{cell(figures['p95_first_10s_ms'])} / {cell(figures['p95_last_10s_ms'])}",
            cell(figures['node_cpu_ms_per_frame']), cell(figures['server_cpu_ms_per_frame']),
            cell(figures['node_peak_rss_mb']), cell(figures['server_peak_rss_mb'])]) + ' |')
    return '\n'.join(rows)


def steps_table(cases: Mapping[str, CaseFigures]) -> str:
    """Where Triton's share goes: each ensemble and step, mean ms per request per timer."""
    header = ('| case | model | requests | '
              + ' | '.join(f'{timer} ms' for timer in STEP_TIMERS) + ' |')
    rows = [header, '|' + ' --- |' * (len(STEP_TIMERS) + 3)]
    for case in CASES:
        steps = cases[case]['triton_steps_ms'] if case in cases else {}
        for model, figures in steps.items():
            rows.append(f'| {case} | {model} | {figures["requests"]} | ' + ' | '.join(
                f'{figures[f"{timer}_ms"]:g}' for timer in STEP_TIMERS) + ' |')
    return '\n'.join(rows)


def budget_table(cases: Mapping[str, CaseFigures]) -> str:
    """Where each one-node case's end-to-end time goes: per stage, median and p90 ms."""
    rows = ['| case | stage | median ms | p90 ms |', '| --- | --- | --- | --- |']
    notes = []
    for case in CASES:
        budget = cases[case]['budget'] if case in cases else None
        if not budget:
            continue

        def line(label: str, figures: Mapping[str, float | None], case: str = case) -> str:
            return (f'| {case} | {label} | {table_cell(figures.get("median"))} | '
                    f'{table_cell(figures.get("p90"))} |')
        rows += [line(row_label(row), figures) for row, figures in budget['stages_ms'].items()]
        rows.append(line(f'**end to end** ({budget["frames"]} frames)', budget['e2e_ms']))
        rows.append(line('reference (in-process)', {'median': budget['reference_ms']}))
        rows.append(line('**beyond the reference**', {'median': budget['beyond_reference_ms']}))
        rows.append(line("**beyond Triton's compute_infer** (the model steps')",
                         {'median': budget.get('beyond_triton_compute_ms')}))
        notes += loaded_line(case, cases[case].get('throughput'), budget.get('steps', []))
        cpu = cases[case].get('cpu_outside_graph_ms_per_frame')
        if cpu:
            steps = ', '.join(f'{step} {table_cell(ms)}'
                              for step, ms in cpu['server_steps_ms'].items())
            notes.append(f'{case}: CPU ms per result outside the model graph '
                         f'{table_cell(cpu["outside_graph_ms"])} (node '
                         f'{table_cell(cpu["node_ms"])}, tritonserver '
                         f'{table_cell(cpu["server_main_ms"])}; stubs: {steps}; graph '
                         f'step {cpu["graph_step"]})')
    return '\n'.join(rows + [''] + notes if notes else rows)


def loaded_line(case: str, throughput: ThroughputPhase | None, steps: list[str]) -> list[str]:
    """Return the throughput phase's means: the node's stages, Triton's queue and compute."""
    if throughput is None:
        return []
    nodes = [stages for stages in throughput.get('node_stages_ms', {}).values() if stages]
    timers = throughput.get('triton_steps_ms', {})
    if len(nodes) != 1 or not all(step in timers for step in steps) or not steps:
        return []
    stages = nodes[0]
    queue = sum(timers[step]['queue_ms'] for step in steps)
    compute = sum(timers[step][f'{timer}_ms'] for step in steps for timer in STEP_TIMERS
                  if timer != 'queue')
    return [f'{case} at {RATE_HZ:g} Hz (throughput phase, mean ms per result): node callback -> '
            f'request sent {table_cell(stages["to_request"])}, request round trip '
            f'{table_cell(stages["request"])} (Triton queue {queue:.2f}, compute {compute:.2f}), '
            f'response -> published {table_cell(stages["to_publish"])}']
