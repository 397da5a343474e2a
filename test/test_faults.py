"""Reliability and security (issue 8), with real processes: a real tritonserver that is absent,
killed, hung or serving broken models, node processes over Fast DDS, and `triton-perception run`.

The broken models are written at test time into tmp_path (test/fault_repository.py); the real
detector is the package's own yolov5 ensemble. Measured figures (recovery times, RSS, threads)
are attached to each test's report (fixture `measured`).
"""
from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Callable, Iterator

import cv2
import numpy as np
import pytest
import tritonclient.grpc as grpcclient
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from sensor_msgs.msg import CompressedImage, Image, PointCloud2
from tritonclient.utils import InferenceServerException
from vision_msgs.msg import Detection2DArray

import triton_perception.triton.server as server_module
from conftest import REPO
from triton_perception.processes import NodeProcess, alive, free_ports, process_tree, ros_arguments
from fault_repository import write_repository
from image_fuzz import fuzzed_compressed, fuzzed_image
from ros_helpers import BEST_EFFORT, RELIABLE, Probe, wait_until
from test_pipeline_run import clip_frames
from triton_perception.image_conversion import (ImageRejected, check_compressed, check_image,
                                                compressed_to_rgb, image_to_rgb)
from triton_perception.models import install_models
from triton_perception.diagnostics import NodeStatus, status_name
from triton_perception.triton.server import ServerConfig, ServerError, TritonServer
from triton_perception.validation import MalformedOutput, check_detections, check_lane_maps

SEED = 20240801
# The nodes' default max_image_pixels: a damaged JPEG/PNG header may claim up to this much.
DEFAULT_MAX_PIXELS = 3840 * 2160
COUNTED = ('published', 'dropped', 'rejected', 'failed')
# The issue describes a server that appears ~20 s after the node; 8 s keeps CI fast and takes
# the same path (unreachable, ERROR, retries with a backoff capped at 1.5 s, recovery). Only
# gRPC's own reconnect backoff grows with the absence: recovery takes longer after a long one.
ABSENT_S = 8.0
# The issue asks for 60 s at 100 Hz; CI runs 20 s. TRITON_PERCEPTION_OVERLOAD_S=3600 is a soak.
OVERLOAD_S = float(os.environ.get('TRITON_PERCEPTION_OVERLOAD_S', '20'))
# The figure: the node's readiness backoff is capped at 1.5 s and gRPC's reconnect
# backoff at 1 s (client.py), so results resume about a second after the server is ready.
# Generous limits for conditions to come true on a loaded 2-core machine: a test fails on them
# only when the behaviour does not happen. How fast it happens is measured (`measured`), and
# the README quotes those figures; speed targets live in `make bench` and `make soak`.
CONDITION_LIMIT_S = 60.0
SLOW_MODEL_DELAY_S = 2.0
BUSY_MODEL_DELAY_S = 0.5
# Model name -> behaviour (test/fault_model.py). No model may be called 'nan': `-p
# model_name:=nan` would reach the node as a float.
FAULT_MODELS = {'yolov5': 'ok', 'bad_shape': 'bad_shape', 'bad_dtype': 'bad_dtype',
                'nan_detections': 'nan', 'bad_count': 'bad_count', 'lane_detection': 'lanes_ok',
                'lanes_bad_area': 'lanes_bad_area'}
DETECTOR_STEPS = ('yolov5', 'yolov5_preprocess', 'yolov5_model')


# --- the pure output checks ------------------------------------------------------------------

def lane_outputs(height: int = 36, width: int = 64) -> dict[str, np.ndarray]:
    return {'LANE_PROBABILITY': np.zeros((height, width), np.uint8),
            'DRIVABLE_MARGIN': np.full((height, width), 128, np.uint8)}


def detection_outputs(rows: np.ndarray, count: int) -> dict[str, np.ndarray]:
    return {'DETECTIONS': rows, 'NUM_DETECTIONS': np.array([count], np.int32)}


def test_well_formed_outputs_pass() -> None:
    rows = np.zeros((300, 6), np.float32)
    rows[:3, 4] = 0.5
    assert check_detections(detection_outputs(rows, 3)).shape == (3, 6)
    assert check_detections(detection_outputs(rows, 0)).shape == (0, 6)
    # Padding past the count is never read (it may hold anything).
    rows[3:] = np.nan
    assert check_detections(detection_outputs(rows, 3)).shape == (3, 6)
    probability, margin = check_lane_maps(lane_outputs())
    assert probability.shape == margin.shape == (36, 64)


@pytest.mark.parametrize('outputs,message', [
    ({}, 'DETECTIONS is missing'),
    ({'DETECTIONS': np.zeros((3, 6), np.float32)}, 'NUM_DETECTIONS is missing'),
    (detection_outputs(np.zeros((3, 5), np.float32), 1),
     'DETECTIONS has shape (3, 5), expected [R, 6]'),
    (detection_outputs(np.zeros(6, np.float32), 1), 'DETECTIONS has shape (6,), expected [R, 6]'),
    (detection_outputs(np.zeros((1, 6), np.float64), 1),
     'DETECTIONS has dtype float64, expected float32'),
    (detection_outputs(np.zeros((3, 6), np.float32), 4),
     'NUM_DETECTIONS is 4, outside [0, 3] (the rows of DETECTIONS)'),
    (detection_outputs(np.zeros((3, 6), np.float32), -1),
     'NUM_DETECTIONS is -1, outside [0, 3] (the rows of DETECTIONS)'),
    (detection_outputs(np.array([[0, 0, 1, 1, np.nan, 0]], np.float32), 1),
     'DETECTIONS has non-finite values (NaN or inf)'),
    (detection_outputs(np.array([[0, 0, np.inf, 1, 0.5, 0]], np.float32), 1),
     'DETECTIONS has non-finite values (NaN or inf)'),
])
def test_malformed_detections_are_named(outputs: dict, message: str) -> None:
    with pytest.raises(MalformedOutput) as error:
        check_detections(outputs)
    assert str(error.value) == f'malformed output: {message}'


@pytest.mark.parametrize('name,value,message', [
    ('LANE_PROBABILITY', np.zeros((36, 64), np.float32),
     'LANE_PROBABILITY has dtype float32, expected uint8'),
    ('LANE_PROBABILITY', np.zeros((1, 36, 64), np.uint8),
     'LANE_PROBABILITY has shape (1, 36, 64), expected [h, w]'),
    ('DRIVABLE_MARGIN', np.zeros((18, 64), np.uint8),
     'DRIVABLE_MARGIN has shape (18, 64), expected [36, 64] (the size of LANE_PROBABILITY)'),
    ('DRIVABLE_MARGIN', None, 'DRIVABLE_MARGIN is missing'),
])
def test_malformed_lane_outputs_are_named(name: str, value: Any, message: str) -> None:
    outputs = lane_outputs()
    outputs[name] = value
    with pytest.raises(MalformedOutput, match=message.replace('(', r'\(').replace(')', r'\)')
                       .replace('[', r'\[').replace(']', r'\]')):
        check_lane_maps(outputs)


# --- fuzzing the converters without ROS -------------------------------------------------------

def test_image_conversion_survives_fuzzing() -> None:
    """Every damaged Image is either converted to [H, W, 3] uint8 or rejected with a reason,
    and the cheap callback check agrees with the full conversion."""
    rng = random.Random(SEED)
    outcomes: dict[str, int] = {}
    for _ in range(10_000):
        message = SimpleNamespace(**fuzzed_image(rng))
        budget = rng.choice((64 * 64, DEFAULT_MAX_PIXELS))
        try:
            rgb = image_to_rgb(message, budget)
        except ImageRejected as rejection:
            with pytest.raises(ImageRejected) as check:
                check_image(message, budget)
            assert check.value.reason == rejection.reason
            outcomes[rejection.reason] = outcomes.get(rejection.reason, 0) + 1
            continue
        check_image(message, budget)
        assert rgb.dtype == np.uint8 and rgb.shape == (message.height, message.width, 3)
        outcomes['converted'] = outcomes.get('converted', 0) + 1
    assert {'converted', 'unsupported_encoding', 'empty', 'too_large', 'bad_step', 'odd_width',
            'truncated'} <= set(outcomes), outcomes


def test_compressed_conversion_survives_fuzzing() -> None:
    rng = random.Random(SEED)
    outcomes: dict[str, int] = {}
    for _ in range(5_000):
        message = SimpleNamespace(**fuzzed_compressed(rng))
        budget = rng.choice((64 * 64, DEFAULT_MAX_PIXELS))
        try:
            check_compressed(message, budget)
        except ImageRejected as rejection:
            with pytest.raises(ImageRejected) as conversion:
                compressed_to_rgb(message, budget)
            assert conversion.value.reason == rejection.reason
            outcomes[rejection.reason] = outcomes.get(rejection.reason, 0) + 1
            continue
        try:
            rgb = compressed_to_rgb(message, budget)
        except ImageRejected as rejection:
            outcomes[rejection.reason] = outcomes.get(rejection.reason, 0) + 1
            continue
        assert rgb.dtype == np.uint8 and rgb.ndim == 3 and rgb.shape[2] == 3
        assert rgb.shape[0] * rgb.shape[1] <= budget
        outcomes['converted'] = outcomes.get('converted', 0) + 1
    assert {'converted', 'empty', 'too_large', 'truncated', 'unsupported_format',
            'undecodable'} <= set(outcomes), outcomes


def test_a_png_chunk_longer_than_its_data_is_rejected_before_decoding() -> None:
    ok, png = cv2.imencode('.png', np.zeros((4, 49, 3), np.uint8))
    assert ok
    data = bytearray(png.tobytes())
    length_at = data.index(b'IDAT') - 4
    data[length_at:length_at + 4] = (2**31 - 1).to_bytes(4, 'big')
    with pytest.raises(ImageRejected):
        check_compressed(SimpleNamespace(format='png', data=bytes(data)), DEFAULT_MAX_PIXELS)


# --- shared plumbing of the process tests -----------------------------------------------------

Arrivals = list[tuple[float, Any]]  # (time.monotonic() at arrival, message)
StartNode = Callable[..., NodeProcess]  # (executable, namespace, triton_url, **parameters)


def record_arrivals(probe: Probe, message_type: type, topic: str,
                    qos: Any = RELIABLE) -> Arrivals:
    arrivals: Arrivals = []
    probe.node.create_subscription(
        message_type, topic, lambda message: arrivals.append((time.monotonic(), message)), qos)
    return arrivals


def arrived_since(arrivals: Arrivals, since: float) -> float | None:
    """Arrival time of the first message at or after `since`."""
    return next((at for at, _ in list(arrivals) if at >= since), None)


@pytest.fixture
def measured(request: pytest.FixtureRequest) -> Callable[[str, Any], None]:
    """Attach a measured figure to the test's report (user_properties; --junitxml shows them
    with -o junit_family=legacy)."""
    return lambda name, value: request.node.user_properties.append((name, value))


@pytest.fixture(scope='module')
def diagnostics(probe: Probe) -> Arrivals:
    return record_arrivals(probe, DiagnosticArray, '/diagnostics')


def statuses(diagnostics: Arrivals, node: str, since: float = 0.0
             ) -> list[tuple[float, DiagnosticStatus]]:
    """The /diagnostics statuses of one node (its fully qualified name), oldest first."""
    name = status_name(node)
    return [(at, status) for at, array in list(diagnostics) if at >= since
            for status in array.status if status.name == name]


def values(status: DiagnosticStatus) -> dict[str, str]:
    return NodeStatus.from_status(status).values


def latest(diagnostics: Arrivals, node: str) -> dict[str, str] | None:
    found = statuses(diagnostics, node)
    return values(found[-1][1]) if found else None


def wait_settled(diagnostics: Arrivals, node: str, received: int | None = None,
                 timeout_s: float = 30.0) -> dict[str, str]:
    """The node's counts once nothing is pending (and `received` frames have arrived)."""
    def condition() -> dict[str, str] | None:
        current = latest(diagnostics, node)
        if current is None or int(current['pending']) != 0:
            return None
        return current if received is None or int(current['received']) == received else None
    try:
        return wait_until(condition, timeout_s, f'{node} to settle {received or "its"} frames')
    except AssertionError as error:
        raise AssertionError(f'{error}; last counts: {latest(diagnostics, node)}') from None


def primed(diagnostics: Arrivals, publisher: Any, node: str, frame: Any) -> int:
    """Send `frame` until the node has counted one; returns the node's `received` once those
    primers have settled, the baseline of exact counts. A reader can match our writer later
    than our writer matches it, and the samples it misses meanwhile are lost to it: so first
    wait until the node reports our publisher, which leaves the primers little to lose."""
    wait_until(lambda: int((latest(diagnostics, node) or {}).get('image_publishers', 0)) >= 1,
               30.0, f'{node} to see the publisher')

    def counted() -> bool:
        publisher.publish(frame)
        return int((latest(diagnostics, node) or {}).get('received', 0)) > 0
    wait_until(counted, 30.0, f'{node} to receive a first frame')
    # Primers travel in milliseconds: any report from half a second on has counted them all.
    counted_from = time.monotonic() + 0.5
    return int(wait_until(
        lambda: next((values(status)['received'] for _, status in
                      statuses(diagnostics, node, since=counted_from)
                      if values(status)['pending'] == '0'), None),
        30.0, f'{node} to settle its primers'))


def assert_balanced(counts: dict[str, str]) -> None:
    total = sum(int(counts[fate]) for fate in COUNTED) + int(counts['pending'])
    assert int(counts['received']) == total, counts


def proc_status(pid: int, field: str) -> int:
    """An integer field of /proc/<pid>/status (Threads, or VmRSS in kB)."""
    for line in (Path('/proc') / str(pid) / 'status').read_text().splitlines():
        if line.startswith(f'{field}:'):
            return int(line.split()[1])
    raise KeyError(field)


@pytest.fixture
def start_node(tmp_path: Path) -> Iterator[StartNode]:
    """Node processes for one test, with reliable input (every frame sent is accounted for by
    the node) and fast diagnostics; whatever a failed test left running is stopped after it."""
    started: list[NodeProcess] = []

    def start(executable: str, namespace: str, url: str, **parameters: Any) -> NodeProcess:
        started.append(NodeProcess(executable, ros_arguments(
            {'triton_url': url, 'qos_reliability': 'reliable', 'qos_depth': 10,
             'diagnostics_period_s': 0.2, **parameters}, namespace=namespace), tmp_path))
        return started[-1]
    yield start
    for node in started:
        node.stop()


def stop_cleanly(*nodes: NodeProcess) -> None:
    """SIGINT to all at once; each must exit with 0 (its log is the failure message if not)."""
    for node in nodes:
        if node.alive():
            node.process.send_signal(signal.SIGINT)
    for node in nodes:
        code = node.stop()
        assert code == 0, f'exit code {code}\n{node.log_path.read_text(errors="replace")}'


def image(pixels: np.ndarray) -> Image:
    return Image(height=pixels.shape[0], width=pixels.shape[1], encoding='bgr8',
                 step=pixels.shape[1] * 3, data=pixels.tobytes())


def noise_frame(width: int = 64, height: int = 48) -> Image:
    return image(np.random.default_rng(SEED).integers(0, 255, (height, width, 3), np.uint8))


class Replay:
    """Publishes frames at a fixed rate from a thread (a camera); stamps count the frames."""

    def __init__(self, publisher: Any, frames: list[Image], rate_hz: float) -> None:
        self.publisher = publisher
        self.sent = 0
        self._frames = frames
        self._period_s = 1.0 / rate_hz
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True, name='replay')

    def start(self) -> 'Replay':
        self._thread.start()
        return self

    def stop(self) -> int:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5.0)
        return self.sent

    def _run(self) -> None:
        next_at = time.monotonic()
        while not self._stop.is_set():
            message = self._frames[self.sent % len(self._frames)]
            message.header.frame_id = 'fault_camera'
            message.header.stamp.sec = self.sent
            self.publisher.publish(message)
            self.sent += 1
            next_at += self._period_s
            # Keeps the rate, not a synchronisation: nothing waits on this.
            self._stop.wait(max(0.0, next_at - time.monotonic()))


def quiet_server(repository: Path, ports: tuple[int, int, int],
                 models: tuple[str, ...]) -> TritonServer:
    http_port, grpc_port, metrics_port = ports
    return TritonServer(ServerConfig(model_repository=repository, profile='cpu',
                                     http_port=http_port, grpc_port=grpc_port,
                                     metrics_port=metrics_port, models=models,
                                     ready_timeout_s=120),
                        log=lambda _line: None, show_server_log=False)


@pytest.fixture(scope='module')
def detector_repository(shared: Path, tmp_path_factory: Any) -> Path:
    """The real yolov5 ensemble alone (links into the package's repository): starts in ~2 s."""
    install_models(REPO / 'model_repository', shared / 'models', log=lambda _line: None)
    root = tmp_path_factory.mktemp('detector_repository')
    for step in DETECTOR_STEPS:
        (root / step).symlink_to(REPO / 'model_repository' / step)
    return root


@pytest.fixture(scope='module')
def fault_server(tmp_path_factory: Any) -> Iterator[TritonServer]:
    """A real tritonserver serving the misbehaving models of test/fault_model.py."""
    root = write_repository(tmp_path_factory.mktemp('fault_repository'), FAULT_MODELS)
    write_repository(root, {'slow': 'ok'}, delay_s=SLOW_MODEL_DELAY_S, instances=2)
    # 'slow' is left out of the readiness list only so that its warm-up does not cost 2 s.
    with quiet_server(root, tuple(free_ports(3)), tuple(FAULT_MODELS)) as server:
        yield server


@pytest.fixture(scope='module')
def clip(shared: Path) -> list[Image]:
    return [image(bgr) for bgr in clip_frames(shared, 30)]


def children_named(pid: int, name: str) -> list[int]:
    found = []
    for child in set(process_tree(pid)[1:]):
        try:
            if (Path('/proc') / str(child) / 'comm').read_text().strip() == name:
                found.append(child)
        except OSError:
            continue
    return found


def kill_tree(process: subprocess.Popen) -> None:
    """Last resort after a failed test: nothing of the pipeline may outlive it."""
    for pid in [process.pid, *set(process_tree(process.pid)[1:])]:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    process.wait(timeout=10)


def wait_gone(pids: set[int], timeout_s: float) -> None:
    """Wait for every process in `pids` to end; fail naming those still running."""
    def survivors() -> list[str]:
        found = []
        for pid in pids:
            try:
                if alive(pid):
                    found.append((Path('/proc') / str(pid) / 'cmdline').read_text()
                                 .replace('\0', ' ')[:160])
            except OSError:
                continue  # ended meanwhile
        return found
    try:
        wait_until(lambda: not survivors(), timeout_s, 'every process to end')
    except AssertionError as error:
        raise AssertionError(f'{error}; still running: {survivors()}') from None


def kill_survivors(pids: set[int]) -> None:
    """Python-backend stubs of a killed tritonserver can outlive it (see
    test_stopping_a_killed_server_ends_its_stubs): a test removes those it caused."""
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


# --- 1. no server at start-up ------------------------------------------------------------------

@pytest.mark.ros
@pytest.mark.server
@pytest.mark.slow
def test_node_waits_for_an_absent_server_and_recovers(
        probe: Probe, diagnostics: Arrivals, detector_repository: Path, clip: list[Image],
        start_node: StartNode, measured: Callable[[str, Any], None]) -> None:
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


# --- 2. tritonserver killed while frames stream in -------------------------------------------

@pytest.mark.ros
@pytest.mark.server
@pytest.mark.slow
def test_node_survives_a_killed_server_and_resumes(
        probe: Probe, diagnostics: Arrivals, detector_repository: Path, clip: list[Image],
        start_node: StartNode, measured: Callable[[str, Any], None]) -> None:
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
    server = quiet_server(pipeline_repository, tuple(free_ports(3)), ('yolov5',))
    stop_requests = threading.Event()
    completed: list[float] = []

    def request_continuously() -> None:
        with grpcclient.InferenceServerClient(server.grpc_url) as client:
            tensor = grpcclient.InferInput('IMAGE', [48, 64, 3], 'UINT8')
            tensor.set_data_from_numpy(np.zeros((48, 64, 3), np.uint8))
            while not stop_requests.is_set():
                try:
                    client.infer('yolov5', [tensor], client_timeout=5.0)
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
    """Both ensemble names, answered by test models: the detector takes 0.5 s per frame, so
    requests are always in flight when the pipeline is stopped."""
    root = write_repository(tmp_path_factory.mktemp('pipeline_repository'),
                            {'yolov5': 'ok'}, delay_s=BUSY_MODEL_DELAY_S)
    return write_repository(root, {'lane_detection': 'lanes_ok'})


def start_runner(tmp_path: Path, namespace: str, repository: Path,
                 *arguments: str) -> tuple[subprocess.Popen, Path]:
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
    wait_until(lambda: camera.get_subscription_count() >= subscribers or process.poll() is not None,
               120.0, f'{subscribers} node(s) subscribed to the camera')
    assert process.poll() is None, log_path.read_text()


@pytest.mark.ros
@pytest.mark.server
@pytest.mark.slow
def test_runner_respawns_a_killed_server(
        probe: Probe, pipeline_repository: Path, clip: list[Image], tmp_path: Path,
        measured: Callable[[str, Any], None]) -> None:
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


# --- 3. models that fail to load or return malformed output ----------------------------------

@pytest.mark.server
def test_a_model_that_fails_to_load_is_named(tmp_path: Path) -> None:
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
     'DRIVABLE_MARGIN has shape (25, 64), expected [48, 64] (the size of LANE_PROBABILITY)'),
]


@pytest.mark.ros
@pytest.mark.server
@pytest.mark.slow
def test_malformed_outputs_fail_with_a_reason(probe: Probe, diagnostics: Arrivals,
                                              fault_server: TritonServer,
                                              start_node: StartNode) -> None:
    """Each node runs against one broken model; a lane_node on a well-formed one is the control
    (the checks accept what the real ensembles return: see test_nodes.py)."""
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
        key = f'count failed: result handling: MalformedOutput: malformed output: {reason}'
        assert int(counts.get(key, 0)) >= 1, counts
        assert int(counts[key]) == int(counts['failed']), counts
        assert counts['published'] == '0', counts
        assert counts['last_error'].endswith(reason), counts
        assert any(status.level == DiagnosticStatus.WARN
                   for _, status in statuses(diagnostics, fqn)), fqn
        assert f'could not publish the result: malformed output: {reason}' in node.output()
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


# --- 4. requests that outlive their timeout -------------------------------------------------

@pytest.mark.ros
@pytest.mark.server
@pytest.mark.slow
def test_timeouts_keep_requests_threads_and_memory_bounded(
        probe: Probe, diagnostics: Arrivals, fault_server: TritonServer, start_node: StartNode,
        measured: Callable[[str, Any], None]) -> None:
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


# --- 5. fuzzed frames to a running node -----------------------------------------------------

def publish_counted(diagnostics: Arrivals, publisher: Any, fqn: str, messages: Iterator[Any],
                    total: int, baseline: int, batch: int = 50) -> None:
    """Publish in batches, each once the node has counted the previous ones in: a reliable
    reader whose history (qos_depth) overflows would lose samples nobody could account for."""
    sent = 0
    while sent < total:
        for _ in range(min(batch, total - sent)):
            publisher.publish(next(messages))
            sent += 1
        wait_until(lambda: int((latest(diagnostics, fqn) or {}).get('received', -1))
                   == baseline + sent, 30.0, f'{fqn} to receive {sent} fuzzed frames')


def valid_frame(transport: str) -> Image | CompressedImage:
    if transport == 'raw':
        return noise_frame()
    ok, jpeg = cv2.imencode('.jpg', np.zeros((48, 64, 3), np.uint8))
    assert ok
    return CompressedImage(format='jpeg', data=jpeg.tobytes())


def fuzzed_messages(kind: str) -> Iterator[Any]:
    rng = random.Random(SEED)
    while True:
        if kind == 'raw':
            yield Image(**fuzzed_image(rng))
        else:
            yield CompressedImage(**fuzzed_compressed(rng))


@pytest.mark.ros
@pytest.mark.server
@pytest.mark.slow
def test_fuzzed_frames_are_all_accounted_for(
        probe: Probe, diagnostics: Arrivals, triton_server: TritonServer, start_node: StartNode,
        measured: Callable[[str, Any], None]) -> None:
    totals = {'raw': 600, 'compressed': 500}
    nodes = {transport: start_node('detection_node', f'/faults_fuzz_{transport}',
                                   triton_server.grpc_url, input_transport=transport,
                                   qos_depth=100)
             for transport in totals}
    for transport, total in totals.items():
        namespace = f'/faults_fuzz_{transport}'
        fqn = f'{namespace}/detection_node'
        message_type, topic = ((Image, f'{namespace}/image') if transport == 'raw' else
                               (CompressedImage, f'{namespace}/image/compressed'))
        publisher = probe.publisher(message_type, topic)
        probe.wait_for_subscribers(publisher)
        baseline = primed(diagnostics, publisher, fqn, valid_frame(transport))
        publish_counted(diagnostics, publisher, fqn, fuzzed_messages(transport), total,
                        baseline)
        counts = wait_settled(diagnostics, fqn, received=baseline + total, timeout_s=60.0)
        assert_balanced(counts)
        assert int(counts['published']) > 0 and int(counts['rejected']) > 0, counts
        rejections = {key[len('count rejected: '):]: int(value) for key, value in counts.items()
                      if key.startswith('count rejected: ')}
        assert len(rejections) >= 4, rejections
        measured(transport, {**{fate: counts[fate] for fate in COUNTED}, **rejections})
        assert nodes[transport].alive(), nodes[transport].output()
    stop_cleanly(*nodes.values())


# --- 6. overload -------------------------------------------------------------------------------

@pytest.mark.ros
@pytest.mark.server
@pytest.mark.slow
@pytest.mark.timeout(OVERLOAD_S + 180)
def test_overload_keeps_memory_and_latency_bounded(
        probe: Probe, diagnostics: Arrivals, triton_server: TritonServer, clip: list[Image],
        start_node: StartNode, measured: Callable[[str, Any], None]) -> None:
    namespace = '/faults_overload'
    fqn = f'{namespace}/detection_node'
    node = start_node('detection_node', namespace, triton_server.grpc_url)
    replay = Replay(probe.publisher(Image, f'{namespace}/image'), clip, 100.0)
    pid = node.process.pid
    rss_kib: list[int] = []
    try:
        probe.wait_for_subscribers(replay.publisher)
        wait_until(lambda: (latest(diagnostics, fqn) or {}).get('triton_ready') == 'true', 30.0,
                   'the node to find Triton ready')
        replay.start()
        started = time.monotonic()

        def overloaded() -> bool:
            rss_kib.append(proc_status(pid, 'VmRSS'))
            return time.monotonic() - started >= OVERLOAD_S
        wait_until(overloaded, OVERLOAD_S + 30.0, f'{OVERLOAD_S:g} s of 100 Hz input')
        sent = replay.stop()
        elapsed_s = time.monotonic() - started
        counts = wait_settled(diagnostics, fqn)
    finally:
        replay.stop()
    assert_balanced(counts)
    # Frame buffers fill in the first seconds and RSS then swings by ~20 MiB (a 90 s run: 184
    # MiB, 219 at 9 s, then 220-227): compare the peaks of the two halves, so a leak shows as
    # growth (the longer the run, the smaller the leak it catches).
    half = len(rss_kib) // 2
    growth_kib = max(rss_kib[half:]) - max(rss_kib[:half])
    measured('input_rate_hz', round(sent / elapsed_s, 1))
    measured('counts', {fate: counts[fate] for fate in ('received', *COUNTED)})
    measured('latency_p95_ms', counts['latency_p95_ms'])
    measured('rss_mib_by_tenth', [round(rss_kib[len(rss_kib) * tenth // 10] / 1024)
                                  for tenth in range(10)] + [round(rss_kib[-1] / 1024)])
    measured('rss_growth_mib', round(growth_kib / 1024, 1))
    # Behaviour only: every frame the node saw is accounted for, it kept publishing and
    # failed nothing. Input rate, share received, latency and memory growth are measured
    # above; `make soak` judges memory over 30 minutes.
    assert int(counts['received']) > 0 and int(counts['published']) > 0, counts
    assert counts['failed'] == '0', counts
    assert node.alive()
    stop_cleanly(node)


# --- 7. shutdown --------------------------------------------------------------------------------

@pytest.mark.ros
@pytest.mark.server
@pytest.mark.slow
@pytest.mark.parametrize('stop_signal,hang', [(signal.SIGINT, False), (signal.SIGTERM, False),
                                              (signal.SIGTERM, True)],
                         ids=['sigint-busy', 'sigterm-busy', 'sigterm-hung-server'])
def test_runner_stops_everything_in_time(
        probe: Probe, pipeline_repository: Path, clip: list[Image], tmp_path: Path,
        stop_signal: int, hang: bool, measured: Callable[[str, Any], None]) -> None:
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
        wait_for_pipeline(probe, process, log_path, camera, 3)
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


# --- 8. security --------------------------------------------------------------------------------

@pytest.mark.server
def test_models_cannot_be_unloaded_or_loaded_over_the_network(triton_server: TritonServer) -> None:
    for action in ('unload', 'load'):
        request = urllib.request.Request(
            f'{triton_server.http_url}/v2/repository/models/yolov5/{action}', data=b'{}',
            method='POST')
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=10.0)
        assert refused.value.code >= 400
        assert 'not allowed' in json.loads(refused.value.read())['error']
    with grpcclient.InferenceServerClient(triton_server.grpc_url) as client:
        with pytest.raises(InferenceServerException, match='not allowed'):
            client.unload_model('yolov5')
        assert client.is_model_ready('yolov5')


def self_signed_certificate(directory: Path) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1 (and localhost), made by the openssl command line."""
    key, certificate = directory / 'server.key', directory / 'server.pem'
    subprocess.run(['openssl', 'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1',
                    '-subj', '/CN=localhost', '-addext',
                    'subjectAltName=IP:127.0.0.1,DNS:localhost', '-keyout', str(key),
                    '-out', str(certificate)], check=True, capture_output=True, timeout=60)
    return key, certificate


@pytest.mark.ros
@pytest.mark.server
def test_node_connects_to_a_tls_server(probe: Probe, start_node: StartNode, tmp_path: Path,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    key, certificate = self_signed_certificate(tmp_path)
    command = server_module.server_command
    # TritonServer has no TLS option (a local server needs none): add Triton's own flags.
    monkeypatch.setattr(server_module, 'server_command', lambda config, installation: [
        *command(config, installation), '--grpc-use-ssl=true',
        f'--grpc-server-cert={certificate}', f'--grpc-server-key={key}'])
    repository = write_repository(tmp_path / 'repository', {'yolov5': 'ok'})
    namespace = '/faults_tls'
    with quiet_server(repository, tuple(free_ports(3)), ('yolov5',)) as server:
        with grpcclient.InferenceServerClient(server.grpc_url) as plain:
            with pytest.raises(InferenceServerException):
                plain.is_server_live(client_timeout=5.0)
        node = start_node('detection_node', namespace, server.grpc_url,
                          tls_root_certificates=str(certificate))
        detections = record_arrivals(probe, Detection2DArray, f'{namespace}/detections')
        replay = Replay(probe.publisher(Image, f'{namespace}/image'), [noise_frame()], 10.0)
        try:
            probe.wait_for_subscribers(replay.publisher)
            replay.start()
            wait_until(lambda: detections or 'Traceback' in node.output(), 30.0,
                       'detections over TLS')
            assert detections, node.output()
        finally:
            replay.stop()
        stop_cleanly(node)
