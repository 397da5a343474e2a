"""
Faulty models: each fault is named, and requests, threads and memory stay bounded.

The faults: models that fail to load, return malformed output, are not served, or answer after the
request timeout.

Real processes throughout: a real tritonserver that is absent, killed, hung or serving
broken models (written at test time by test/support/fault_repository.py), node processes over
Fast DDS, and `triton-perception run`. Measured figures (recovery times, RSS, threads)
are attached to each test's report (fixture `measured`); tests assert behaviour.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from diagnostic_msgs.msg import DiagnosticStatus
import pytest
from sensor_msgs.msg import Image

from support.fault_plumbing import (Arrivals, assert_balanced, latest, noise_frame, primed,
                                    proc_status, quiet_server, Replay, StartNode, statuses,
                                    stop_cleanly, values, wait_settled)
from support.fault_repository import write_repository
from support.ros_helpers import Probe, wait_until
from triton_perception.serving.server.server_config import ServerError
from triton_perception.serving.server.triton_server import TritonServer
from triton_perception.system.processes import free_ports

# --- models that fail to load or return malformed output ----------------------------------


@pytest.mark.server
def test_a_model_that_fails_to_load_is_named(tmp_path: Path) -> None:
    """A model that fails to load fails the server's start, naming the model and its reason."""
    repository = write_repository(tmp_path, {'yolov5': 'ok', 'broken': 'fail_load'})
    server = quiet_server(repository, tuple(free_ports(3)), ('yolov5',))
    with pytest.raises(ServerError) as error:
        with server:
            pass
    assert 'broken' in str(error.value), error.value
    assert 'this model refuses to load' in str(error.value), error.value
    assert server.poll() is not None


MALFORMED = [
    ('detection_node', 'bad_shape', 'DETECTIONS has shape (3, 5), expected [R, 6]'),
    ('detection_node', 'bad_count', 'NUM_DETECTIONS is 301, outside [0, 300] (the rows of '
                                    'DETECTIONS)'),
    ('detection_node', 'bad_dtype', 'DETECTIONS has dtype float64, expected float32'),
    ('detection_node', 'nan_detections', 'DETECTIONS has non-finite values (NaN or inf)'),
    ('lane_node', 'lanes_bad_area',
     'LANE_RUN_COUNTS has shape (25,), expected [48] (the rows of LANE_RUNS)'),
]


@pytest.mark.ros
@pytest.mark.server
@pytest.mark.slow
def test_malformed_outputs_fail_with_a_reason(probe: Probe, diagnostics: Arrivals,
                                              fault_server: TritonServer,
                                              start_node: StartNode) -> None:
    """
    Each node runs against one broken model.

    A lane_node on a well-formed one is the control (the checks accept what the real ensembles
    return: see test_nodes.py).
    """
    cases = [*MALFORMED, ('lane_node', 'lane_detection', None)]
    nodes = [start_node(executable, f'/faults_{model}', fault_server.grpc_url,
                        model_name=model) for executable, model, _ in cases]
    frames = 5
    baselines = []
    for executable, model, _ in cases:
        fqn = f'/faults_{model}/{executable}'
        publisher = probe.publisher(Image, f'/faults_{model}/image')
        probe.wait_for_subscribers(publisher)
        wait_until(lambda: (latest(diagnostics, fqn) or {}).get('triton_ready') == 'true',
                   30.0, f'{fqn} to find {model} ready')
        baselines.append(primed(diagnostics, publisher, fqn, noise_frame()))
        for index in range(frames):
            message = noise_frame()
            message.header.stamp.sec = index
            publisher.publish(message)
    for (executable, model, reason), node, baseline in zip(cases, nodes, baselines):
        fqn = f'/faults_{model}/{executable}'
        counts = wait_settled(diagnostics, fqn, received=baseline + frames)
        assert_balanced(counts)
        assert node.alive(), node.output()
        if reason is None:
            assert int(counts['published']) >= 1 and counts['failed'] == '0', counts
            continue
        key = 'count failed: result handling: MalformedOutput'
        assert int(counts.get(key, 0)) >= 1, counts
        assert int(counts[key]) == int(counts['failed']), counts
        assert counts['published'] == '0', counts
        assert counts['last_error'].endswith(f'malformed output: {reason}'), counts
        # WARN for the failures; ERROR once frames arrived and nothing was published for 1 s.
        assert any(status.level in (DiagnosticStatus.WARN, DiagnosticStatus.ERROR)
                   for _, status in statuses(diagnostics, fqn)), fqn
        assert f"result handling failed: MalformedOutput('malformed output: {reason}" \
            in node.output()
    stop_cleanly(*nodes)


@pytest.mark.ros
@pytest.mark.server
def test_a_model_the_server_does_not_serve_is_reported(
        probe: Probe, diagnostics: Arrivals, fault_server: TritonServer,
        start_node: StartNode) -> None:
    """What a node sees of a model that failed to load: the server runs, the model is absent."""
    namespace = '/faults_absent_model'
    fqn = f'{namespace}/detection_node'
    node = start_node('detection_node', namespace, fault_server.grpc_url,
                      model_name='broken')
    publisher = probe.publisher(Image, f'{namespace}/image')
    probe.wait_for_subscribers(publisher)
    received = primed(diagnostics, publisher, fqn, noise_frame())
    counts = wait_settled(diagnostics, fqn, received=received)
    status = statuses(diagnostics, fqn)[-1][1]
    assert status.level == DiagnosticStatus.ERROR
    assert 'broken' in status.message and status.message.startswith('Triton not ready'), \
        status.message
    assert counts['count dropped: triton not ready'] == counts['received'], counts
    assert node.alive()
    stop_cleanly(node)


# --- requests that outlive their timeout -------------------------------------------------

@pytest.mark.ros
@pytest.mark.server
@pytest.mark.slow
def test_timeouts_keep_requests_threads_and_memory_bounded(
        probe: Probe, diagnostics: Arrivals, fault_server: TritonServer, start_node: StartNode,
        measured: Callable[[str, Any], None]) -> None:
    """
    Requests that outlive their timeout fail as timeouts without piling up.

    Failures stay within what max_in_flight request threads can fail, frames are dropped
    instead, pending stays bounded and the node starts no new threads.
    """
    namespace = '/faults_timeout'
    fqn = f'{namespace}/detection_node'
    timeout_s, max_in_flight = 0.25, 2
    node = start_node('detection_node', namespace, fault_server.grpc_url,
                      model_name='slow', request_timeout_s=timeout_s, max_in_flight=max_in_flight)
    replay = Replay(probe.publisher(Image, f'{namespace}/image'), [noise_frame()], 30.0)
    pid = node.process.pid
    try:
        probe.wait_for_subscribers(replay.publisher)
        baseline = primed(diagnostics, replay.publisher, fqn, noise_frame())
        replay.start()
        # Warmed up once the first requests have timed out: every thread and buffer exists.
        warm_at, warm_status = wait_until(
            lambda: next(((at, status) for at, status in statuses(diagnostics, fqn)
                          if int(values(status)['failed']) >= 2 * max_in_flight), None),
            30.0, 'the first timeouts')
        threads_before, rss_before = proc_status(pid, 'Threads'), proc_status(pid, 'VmRSS')
        wait_until(lambda: replay.sent >= 300, 30.0, '300 frames at 30 Hz')
        sent = replay.stop()
        counts = wait_settled(diagnostics, fqn, received=baseline + sent)
        settled_at = statuses(diagnostics, fqn)[-1][0]
        threads_after, rss_after = proc_status(pid, 'Threads'), proc_status(pid, 'VmRSS')
    finally:
        replay.stop()
    assert_balanced(counts)
    failed = int(counts['failed']) - int(values(warm_status)['failed'])
    elapsed_s = settled_at - warm_at
    measured('frames', sent)
    measured('failed_after_warm_up', failed)
    measured('threads', f'{threads_before} -> {threads_after}')
    measured('rss_kib', f'{rss_before} -> {rss_after}')
    assert counts['published'] == '0', counts
    assert counts[f'count failed: timeout after {timeout_s:g} s'] == counts['failed'], counts
    # Each request thread spends at least the timeout on every failed frame (one request per
    # thread may have started before the first report); unbounded, 30 Hz would fail them all.
    assert 0 < failed <= max_in_flight * (elapsed_s / timeout_s + 1), (failed, elapsed_s)
    assert int(counts['dropped']) > 0, counts
    # At most one frame waiting in the slot plus one per request thread, at every report.
    pending = [int(values(status)['pending']) for _, status in statuses(diagnostics, fqn)]
    assert max(pending) <= max_in_flight + 1, pending
    assert threads_after <= threads_before, (threads_before, threads_after)
    assert node.alive()
    stop_cleanly(node)
