"""
The server is absent, killed or stopped.

Nodes wait and recover, the runner respawns it, and stopping the pipeline ends every process in
time.

Real processes throughout: a real tritonserver that is absent, killed, hung or serving
broken models (written at test time by test/support/fault_repository.py), node processes over
Fast DDS, and `triton-perception run`. Measured figures (recovery times, RSS, threads)
are attached to each test's report (fixture `measured`); tests assert behaviour.
"""
from __future__ import annotations

import os
from pathlib import Path
import signal
import subprocess
import sys
import threading
import time
from typing import Any, Callable

from diagnostic_msgs.msg import DiagnosticStatus
import numpy as np
import pytest
from sensor_msgs.msg import Image, PointCloud2
import tritonclient.grpc as grpcclient
from tritonclient.utils import InferenceServerException, np_to_triton_dtype
from vision_msgs.msg import Detection2DArray

from support.fault_plumbing import (ABSENT_S, Arrivals, arrived_since, assert_balanced,
                                    BUSY_MODEL_DELAY_S, children_named, CONDITION_LIMIT_S,
                                    kill_survivors, kill_tree, quiet_server, record_arrivals,
                                    Replay, StartNode, statuses, stop_cleanly, values, wait_gone,
                                    wait_settled)
from support.fault_repository import write_repository
from support.ros_helpers import BEST_EFFORT, Probe, wait_until
from triton_perception.frames.diagnostics import NodeStatus
from triton_perception.system.processes import free_ports, process_tree

# --- no server at start-up ------------------------------------------------------------------


@pytest.mark.ros
@pytest.mark.server
@pytest.mark.slow
def test_node_waits_for_an_absent_server_and_recovers(
        probe: Probe, diagnostics: Arrivals, detector_repository: Path, clip: list[Image],
        start_node: StartNode, measured: Callable[[str, Any], None]) -> None:
    """
    A node started before its server reports ERROR and drops frames until the server is up.

    Then it publishes detections and reports OK.
    """
    ports = tuple(free_ports(3))
    namespace = '/faults_absent'
    node = start_node('detection_node', namespace, f'127.0.0.1:{ports[1]}')
    fqn = f'{namespace}/detection_node'
    detections = record_arrivals(probe, Detection2DArray, f'{namespace}/detections')
    replay = Replay(probe.publisher(Image, f'{namespace}/image'), clip, 10.0)
    server = quiet_server(detector_repository, ports, ('yolov5',))
    try:
        probe.wait_for_subscribers(replay.publisher)
        started = time.monotonic()
        replay.start()
        wait_until(lambda: any(status.level == DiagnosticStatus.ERROR
                               for _, status in statuses(diagnostics, fqn)),
                   30.0, 'level ERROR in /diagnostics while Triton is absent')
        wait_until(lambda: time.monotonic() - started >= ABSENT_S, ABSENT_S + 1.0,
                   f'{ABSENT_S:g} s without a server')
        absent = statuses(diagnostics, fqn)
        assert all(status.level == DiagnosticStatus.ERROR for _, status in absent), absent
        assert absent[-1][1].message.startswith('Triton not ready: server unreachable'), absent
        assert values(absent[-1][1])['published'] == '0'
        assert int(values(absent[-1][1])['count dropped: triton not ready']) > 0
        server.start()
        server.wait_until_ready()
        ready_at = time.monotonic()
        resumed_at = wait_until(lambda: arrived_since(detections, ready_at), 30.0,
                                'detections once the server is up')
        wait_until(lambda: any(status.level == DiagnosticStatus.OK
                               for _, status in statuses(diagnostics, fqn, since=resumed_at)),
                   10.0, 'level OK in /diagnostics once the server is up')
        measured('recovery_after_ready_s', round(resumed_at - ready_at, 2))
        assert node.alive()
    finally:
        replay.stop()
        server.stop()
    stop_cleanly(node)


# --- tritonserver killed while frames stream in -------------------------------------------

@pytest.mark.ros
@pytest.mark.server
@pytest.mark.slow
def test_node_survives_a_killed_server_and_resumes(
        probe: Probe, diagnostics: Arrivals, detector_repository: Path, clip: list[Image],
        start_node: StartNode, measured: Callable[[str, Any], None]) -> None:
    """
    A node whose server is killed mid-stream reports ERROR and resumes once a new one is up.

    Every frame stays accounted for, dropped or failed for the server's absence only.
    """
    http_port, grpc_port, metrics_port = free_ports(3)
    namespace = '/faults_killed'
    fqn = f'{namespace}/detection_node'
    node = start_node('detection_node', namespace, f'127.0.0.1:{grpc_port}')
    detections = record_arrivals(probe, Detection2DArray, f'{namespace}/detections')
    replay = Replay(probe.publisher(Image, f'{namespace}/image'), clip, 30.0)
    first = quiet_server(detector_repository, (http_port, grpc_port, metrics_port), ('yolov5',))
    # Same gRPC port (all the node knows); new HTTP and metrics ports, because the HTTP
    # readiness checks leave TIME_WAIT sockets on the old one that TritonServer's port check
    # counts as "in use" for 60 s (see the runner test below).
    second = quiet_server(detector_repository, (*free_ports(1), grpc_port, *free_ports(1)),
                          ('yolov5',))
    stubs: set[int] = set()
    try:
        first.start()
        first.wait_until_ready()
        stubs = set(process_tree(first.pid)[1:])
        probe.wait_for_subscribers(replay.publisher)
        replay.start()
        wait_until(lambda: len(detections) >= 5, 60.0, 'detections before the kill')
        os.kill(first.pid, signal.SIGKILL)
        killed_at = time.monotonic()
        wait_until(lambda: any(status.level == DiagnosticStatus.ERROR
                               for _, status in statuses(diagnostics, fqn, since=killed_at)),
                   10.0, 'level ERROR once the server is gone')
        first.stop()
        second.start()
        second.wait_until_ready()
        ready_at = time.monotonic()
        resumed_at = wait_until(lambda: arrived_since(detections, ready_at), 30.0,
                                'detections after the restart')
        measured('down_s', round(ready_at - killed_at, 2))
        measured('resumed_after_ready_s', round(resumed_at - ready_at, 2))
        assert node.alive()
        # Every frame served before the server stops: one reaching a server that is shutting
        # down fails with 'unknown model' (Triton unloads its models first).
        replay.stop()
        wait_settled(diagnostics, fqn, timeout_s=20.0, since=time.monotonic())
    finally:
        replay.stop()
        first.stop()
        second.stop()
        kill_survivors(stubs)
    counts = wait_settled(diagnostics, fqn, timeout_s=20.0)
    assert_balanced(counts)
    reasons = NodeStatus(counts).reasons
    measured('reasons', reasons)
    # A request in flight at the kill fails; frames arriving while the server is away are
    # dropped; nothing else goes wrong.
    assert reasons.get('dropped: triton not ready', 0) > 0, counts
    assert set(reasons) <= {'failed: server unreachable', 'dropped: triton not ready',
                            'dropped: replaced by a newer frame'}, counts
    stop_cleanly(node)


@pytest.mark.server
def test_stopping_a_killed_server_ends_its_stubs(pipeline_repository: Path) -> None:
    """Stopping a killed server ends its Python-backend stubs, even with a model mid-request."""
    server = quiet_server(pipeline_repository, tuple(free_ports(3)), ('yolov5',))
    stop_requests = threading.Event()
    completed: list[float] = []

    def request_continuously() -> None:
        with grpcclient.InferenceServerClient(server.grpc_url) as client:
            inputs = []
            for name, value in (('IMAGE', np.zeros((48, 64, 3), np.uint8)),
                                ('SCORE_THRESHOLD', np.array([0.25], np.float32)),
                                ('IOU_THRESHOLD', np.array([0.45], np.float32)),
                                ('MAX_DETECTIONS', np.array([100], np.int32))):
                inputs.append(grpcclient.InferInput(name, list(value.shape),
                                                    np_to_triton_dtype(value.dtype)))
                inputs[-1].set_data_from_numpy(value)
            while not stop_requests.is_set():
                try:
                    client.infer('yolov5', inputs, client_timeout=5.0)
                    completed.append(time.monotonic())
                except InferenceServerException:
                    stop_requests.wait(0.1)  # the server is gone; the test ends us
    # Two clients keep a request queued behind the one executing (0.5 s each, one instance),
    # so the model is always inside execute() when the server is killed.
    clients = [threading.Thread(target=request_continuously, daemon=True) for _ in range(2)]
    stubs: set[int] = set()
    try:
        server.start()
        server.wait_until_ready()
        stubs = set(process_tree(server.pid)[1:])
        for client in clients:
            client.start()
        wait_until(lambda: len(completed) >= 2, 10.0, 'two requests to complete')
        os.kill(server.pid, signal.SIGKILL)
        server.stop()
        wait_gone(stubs, CONDITION_LIMIT_S)
    finally:
        stop_requests.set()
        for client in clients:
            client.join(timeout=10.0)
        server.stop()
        kill_survivors(stubs)


@pytest.fixture(scope='module')
def pipeline_repository(tmp_path_factory: Any) -> Path:
    """
    Both ensemble names, answered by test models.

    The detector takes 0.5 s per frame, so requests are always in flight when the pipeline is
    stopped.
    """
    root = write_repository(tmp_path_factory.mktemp('pipeline_repository'),
                            {'yolov5': 'ok'}, delay_s=BUSY_MODEL_DELAY_S)
    return write_repository(root, {'lane_detection': 'lanes_ok'})


def start_runner(tmp_path: Path, namespace: str, repository: Path,
                 *arguments: str) -> tuple[subprocess.Popen, Path]:
    """
    Start `triton-perception run` (CPU profile, free ports) in `namespace` with `arguments`.

    Returns the process and its log file.
    """
    http_port, grpc_port, metrics_port = free_ports(3)
    log_path = tmp_path / 'run.log'
    with open(log_path, 'w', encoding='utf-8') as log:
        process = subprocess.Popen(
            [str(Path(sys.executable).parent / 'triton-perception'), 'run', 'profile:=cpu',
             f'model_repository:={repository}', f'namespace:={namespace}',
             f'camera_topic:={namespace}/cam/image_raw', f'grpc_port:={grpc_port}',
             f'http_port:={http_port}', f'metrics_port:={metrics_port}', *arguments],
            stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    return process, log_path


def wait_for_pipeline(probe: Probe, process: subprocess.Popen, log_path: Path,
                      camera: Any, subscribers: int) -> None:
    """Wait until `subscribers` subscribe to `camera`; fail with the runner's log if it exits."""
    wait_until(lambda: camera.get_subscription_count() >= subscribers or process.poll() is not None,
               120.0, f'{subscribers} node(s) subscribed to the camera')
    assert process.poll() is None, log_path.read_text()


@pytest.mark.ros
@pytest.mark.server
@pytest.mark.slow
def test_runner_respawns_a_killed_server(
        probe: Probe, pipeline_repository: Path, clip: list[Image], tmp_path: Path,
        measured: Callable[[str, Any], None]) -> None:
    """The runner restarts a killed tritonserver and detections resume; it then exits with 0."""
    namespace = '/faults_respawn'
    process, log_path = start_runner(tmp_path, namespace, pipeline_repository,
                                     'respawn_delay:=1.0', 'enable_lanes:=false',
                                     'enable_overlay:=false')
    detections = record_arrivals(probe, Detection2DArray, f'{namespace}/detections')
    camera = probe.publisher(Image, f'{namespace}/cam/image_raw')
    replay = Replay(camera, clip, 30.0)
    stubs: set[int] = set()
    try:
        wait_for_pipeline(probe, process, log_path, camera, 1)
        replay.start()
        wait_until(lambda: len(detections) >= 3, 60.0, 'detections before the kill')
        [server_pid] = children_named(process.pid, 'tritonserver')
        stubs = set(process_tree(server_pid)[1:])
        os.kill(server_pid, signal.SIGKILL)
        killed_at = time.monotonic()

        def restarted() -> str | None:
            log = log_path.read_text()
            return log if log.count('tritonserver ready') >= 2 or 'restart failed' in log else None
        log = wait_until(restarted, 60.0, 'the runner to restart tritonserver')
        ready_at = time.monotonic()
        assert 'tritonserver crashed (exit code -9)' in log, log
        assert 'restarting tritonserver (restart 1)' in log, log
        assert 'restart failed' not in log, log
        resumed_at = wait_until(lambda: arrived_since(detections, ready_at), 30.0,
                                'detections after the respawn')
        measured('respawn_ready_after_kill_s', round(ready_at - killed_at, 2))
        measured('resumed_after_ready_s', round(resumed_at - ready_at, 2))
        assert process.poll() is None
        assert children_named(process.pid, 'tritonserver') != [server_pid]
    finally:
        replay.stop()
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            kill_tree(process)
        kill_survivors(stubs)
    assert process.returncode == 0, log_path.read_text()


# --- shutdown --------------------------------------------------------------------------------

@pytest.mark.ros
@pytest.mark.server
@pytest.mark.slow
@pytest.mark.parametrize('stop_signal,hang', [(signal.SIGINT, False), (signal.SIGTERM, False),
                                              (signal.SIGTERM, True)],
                         ids=['sigint-busy', 'sigterm-busy', 'sigterm-hung-server'])
def test_runner_stops_everything_in_time(
        probe: Probe, pipeline_repository: Path, clip: list[Image], tmp_path: Path,
        stop_signal: int, hang: bool, measured: Callable[[str, Any], None]) -> None:
    """
    SIGINT or SIGTERM to the runner ends every process it started in time, and it exits with 0.

    This holds with requests in flight and with a hung (SIGSTOPped) server.
    """
    namespace = f'/faults_stop_{int(stop_signal)}_{int(hang)}'
    process, log_path = start_runner(tmp_path, namespace, pipeline_repository)
    detections = record_arrivals(probe, Detection2DArray, f'{namespace}/detections')
    lanes = record_arrivals(probe, PointCloud2, f'{namespace}/lanes')
    # overlay_node subscribes to the camera only while its output is watched.
    overlays = record_arrivals(probe, Image, f'{namespace}/overlay', BEST_EFFORT)
    camera = probe.publisher(Image, f'{namespace}/cam/image_raw')
    replay = Replay(camera, clip, 30.0)
    tree: set[int] = set()
    try:
        # perception_process subscribes the camera once; the watched overlay once more.
        wait_for_pipeline(probe, process, log_path, camera, 2)
        replay.start()
        wait_until(lambda: detections and lanes and overlays, 60.0,
                   'detections, lanes and overlays')
        tree = set(process_tree(process.pid)[1:])
        [server_pid] = children_named(process.pid, 'tritonserver')
        if hang:
            os.kill(server_pid, signal.SIGSTOP)
        stopped_at = time.monotonic()
        process.send_signal(stop_signal)
        process.wait(timeout=CONDITION_LIMIT_S)
        wait_gone(tree, CONDITION_LIMIT_S)
        elapsed_s = time.monotonic() - stopped_at
    finally:
        replay.stop()
        if process.poll() is None:
            kill_tree(process)
        kill_survivors(tree)
    measured('everything_gone_after_s', round(elapsed_s, 2))
    assert process.returncode == 0, log_path.read_text()
