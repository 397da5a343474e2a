"""
`triton-perception bench` end to end with tiny settings, against the session's tritonserver.

Runs the command as users do (its own process, so its ROS context and signal handling are its
own) and checks the JSON has every figure with a sane value and the Markdown table is printed.
"""
from __future__ import annotations

import json
from pathlib import Path
import subprocess
import sys
from typing import Any

import pytest

pytestmark = [pytest.mark.server, pytest.mark.ros, pytest.mark.slow]

CASE_KEYS = ('reference_ms', 'reference_cpu_ms_per_frame', 'triton_ms', 'ros_e2e_ms',
             'triton_steps_ms', 'ratio',
             'capacity_fps', 'throughput_fps', 'throughput_ratio', 'p95_first_10s_ms',
             'p95_last_10s_ms', 'node_cpu_ms_per_frame', 'server_cpu_ms_per_frame',
             'node_peak_rss_mb', 'server_peak_rss_mb', 'throughput', 'per_node', 'budget',
             'cpu_outside_graph_ms_per_frame')
MACHINE_KEYS = ('cpu_model', 'cores', 'memory_gb', 'python', 'onnxruntime', 'triton', 'profile')


def test_bench_detection_end_to_end(triton_server: Any, tmp_path: Path) -> None:
    """
    The bench command as users run it writes every figure with a sane value and prints its tables.

    The overhead budget times every frame (none skipped), and max-in-flight reaches the nodes.
    """
    output = tmp_path / 'out' / 'bench.json'
    completed = subprocess.run(
        [str(Path(sys.executable).parent / 'triton-perception'), 'bench', '--frames', '5',
         '--duration', '5', '--cases', 'detection', '--triton-url', triton_server.grpc_url,
         '--profile', 'cpu', '--max-in-flight', '2', '--json', str(output)],
        capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert completed.returncode == 0, completed.stderr[-4000:]

    report = json.loads(output.read_text(encoding='utf-8'))
    assert set(MACHINE_KEYS) <= set(report['machine']), report['machine']
    assert report['machine']['triton'].startswith('2.'), report['machine']
    assert 'both' not in report and 'lanes' not in report
    figures = report['detection']
    assert set(CASE_KEYS) <= set(figures), sorted(figures)
    for key in ('reference_ms', 'triton_ms', 'ros_e2e_ms'):
        assert figures[key]['frames'] == 5, (key, figures[key])
        assert 0 < figures[key]['median'] <= figures[key]['p95'], (key, figures[key])
    # ROS and Triton add to the same processing; they cannot make it several times faster.
    assert figures['ros_e2e_ms']['median'] > 0.5 * figures['reference_ms']['median'], figures
    assert figures['ratio'] > 0 and figures['throughput_ratio'] > 0, figures
    assert figures['capacity_fps'] > 0, figures
    assert 0 < figures['throughput_fps'] <= 31, figures
    assert figures['throughput']['published'] == pytest.approx(5 * 30, abs=2), figures
    for key in ('p95_first_10s_ms', 'p95_last_10s_ms', 'node_cpu_ms_per_frame',
                'server_cpu_ms_per_frame', 'node_peak_rss_mb', 'server_peak_rss_mb'):
        assert figures[key] is not None and figures[key] > 0, (key, figures[key])
    steps = figures['triton_steps_ms']
    assert {'yolov5', 'yolov5_model'} <= set(steps), steps
    # Warm-up and timed frames, once from the bench's client and once from the node.
    assert steps['yolov5']['requests'] >= 2 * 5, steps
    assert steps['yolov5_model']['compute_infer_ms'] > 0, steps
    assert report['settings']['node_parameters']['max_in_flight'] == 2, report['settings']
    # The overhead budget: every frame timed through the node's stage sums and Triton's
    # statistics (none skipped with frames one at a time), Triton's rows per step.
    budget = figures['budget']
    assert budget['frames'] == 5 and budget['skipped_frames'] == 0, budget['skipped_why']
    graph = budget['steps'][-1]  # the model step, as in bytes_per_frame
    assert {'frame_to_node', 'node_to_request', 'client_server', f'triton {graph} compute_infer',
            'triton_ensemble', 'node_to_publish'} <= set(budget['stages_ms']), budget
    assert budget['stages_ms'][f'triton {graph} compute_infer']['median'] > 0, budget
    cpu = figures['cpu_outside_graph_ms_per_frame']
    assert cpu['graph_step'] == graph and cpu['node_ms'] > 0, cpu
    assert '| detection | node: callback -> request sent |' in completed.stdout, completed.stdout
    assert '| detection |' in completed.stdout, completed.stdout
    assert '| detection | yolov5_model |' in completed.stdout, completed.stdout
