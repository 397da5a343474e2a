"""
Shared plumbing of the fault tests (test_faults_*.py).

What they send, how they read the nodes' /diagnostics counts, the servers and node processes they
start and the processes they must see end. Their fixtures (`fault_server`, `start_node`,
`diagnostics`, ...) are in test/conftest.py and use these helpers.
"""
from __future__ import annotations

import os
from pathlib import Path
import signal
import subprocess
import threading
import time
from typing import Any, Callable

from diagnostic_msgs.msg import DiagnosticStatus
import numpy as np
from sensor_msgs.msg import Image

from support.ros_helpers import Probe, RELIABLE, wait_until
from triton_perception.frames.diagnostics import NodeStatus, status_name
from triton_perception.serving.server.server_config import ServerConfig
from triton_perception.serving.server.triton_server import TritonServer
from triton_perception.system.processes import alive, NodeProcess, process_tree

SEED = 20240801
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
# docs/reliability.md quotes those figures; speed targets live in `make bench` and `make soak`.
CONDITION_LIMIT_S = 60.0
SLOW_MODEL_DELAY_S = 2.0
BUSY_MODEL_DELAY_S = 0.5
# Model name -> behaviour (test/support/fault_model.py). No model may be called 'nan': `-p
# model_name:=nan` would reach the node as a float.
FAULT_MODELS = {'yolov5': 'ok', 'bad_shape': 'bad_shape', 'bad_dtype': 'bad_dtype',
                'nan_detections': 'nan', 'bad_count': 'bad_count', 'lane_detection': 'lanes_ok',
                'lanes_bad_area': 'lanes_bad_area'}
DETECTOR_STEPS = ('yolov5', 'yolov5_model')


Arrivals = list[tuple[float, Any]]  # (time.monotonic() at arrival, message)
StartNode = Callable[..., NodeProcess]  # (executable, namespace, triton_url, **parameters)


def record_arrivals(probe: Probe, message_type: type, topic: str,
                    qos: Any = RELIABLE) -> Arrivals:
    """Record every message on `topic` with its arrival time (time.monotonic())."""
    arrivals: Arrivals = []
    probe.node.create_subscription(
        message_type, topic, lambda message: arrivals.append((time.monotonic(), message)), qos)
    return arrivals


def arrived_since(arrivals: Arrivals, since: float) -> float | None:
    """Arrival time of the first message at or after `since`."""
    return next((at for at, _ in list(arrivals) if at >= since), None)


def statuses(diagnostics: Arrivals, node: str, since: float = 0.0
             ) -> list[tuple[float, DiagnosticStatus]]:
    """Return the /diagnostics statuses of one node (its fully qualified name), oldest first."""
    name = status_name(node)
    return [(at, status) for at, array in list(diagnostics) if at >= since
            for status in array.status if status.name == name]


def values(status: DiagnosticStatus) -> dict[str, str]:
    """Return the key-value pairs (counts, state) of one node's diagnostics status."""
    return NodeStatus.from_status(status).values


def latest(diagnostics: Arrivals, node: str, since: float = 0.0) -> dict[str, str] | None:
    """Return the newest values `node` reported on /diagnostics since `since`; None before."""
    found = statuses(diagnostics, node, since)
    return values(found[-1][1]) if found else None


def wait_settled(diagnostics: Arrivals, node: str, received: int | None = None,
                 timeout_s: float = 30.0, since: float = 0.0) -> dict[str, str]:
    """
    Return the node's counts once nothing is pending (and `received` frames have arrived).

    Only counts reported at or after `since` (monotonic time) are read.
    """
    def condition() -> dict[str, str] | None:
        current = latest(diagnostics, node, since)
        if current is None or int(current['pending']) != 0:
            return None
        return current if received is None or int(current['received']) == received else None
    try:
        return wait_until(condition, timeout_s, f'{node} to settle {received or "its"} frames')
    except AssertionError as error:
        raise AssertionError(f'{error}; last counts: {latest(diagnostics, node)}') from None


def primed(diagnostics: Arrivals, publisher: Any, node: str, frame: Any) -> int:
    """
    Send `frame` until the node has counted one.

    Returns the node's `received` once those primers have settled, the baseline of exact counts. A
    reader can match our writer later than our writer matches it, and the samples it misses
    meanwhile are lost to it: so first wait until the node reports our publisher, which leaves the
    primers little to lose.
    """
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
    """
    Assert that every received frame is published, dropped, rejected, failed or pending.

    A frame that falls out of that identity is one the node lost without saying so.
    """
    total = sum(int(counts[fate]) for fate in COUNTED) + int(counts['pending'])
    assert int(counts['received']) == total, counts


def proc_status(pid: int, field: str) -> int:
    """Return an integer field of /proc/<pid>/status (Threads, or VmRSS in kB)."""
    for line in (Path('/proc') / str(pid) / 'status').read_text().splitlines():
        if line.startswith(f'{field}:'):
            return int(line.split()[1])
    raise KeyError(field)


def stop_cleanly(*nodes: NodeProcess) -> None:
    """SIGINT to all at once; each must exit with 0 (its log is the failure message if not)."""
    for node in nodes:
        if node.alive():
            node.process.send_signal(signal.SIGINT)
    for node in nodes:
        code = node.stop()
        assert code == 0, f'exit code {code}\n{node.log_path.read_text(errors="replace")}'


def image(pixels: np.ndarray) -> Image:
    """Return `pixels` (height x width x 3, BGR) as a bgr8 Image message."""
    return Image(height=pixels.shape[0], width=pixels.shape[1], encoding='bgr8',
                 step=pixels.shape[1] * 3, data=pixels.tobytes())


def noise_frame(width: int = 64, height: int = 48) -> Image:
    """Return a seeded random bgr8 frame: the same pixels in every run."""
    return image(np.random.default_rng(SEED).integers(0, 255, (height, width, 3), np.uint8))


class Replay:
    """Publishes frames at a fixed rate from a thread (a camera); stamps count the frames."""

    def __init__(self, publisher: Any, frames: list[Image], rate_hz: float) -> None:
        """Send `frames` in turn through `publisher` at `rate_hz` once started."""
        self.publisher = publisher
        self.sent = 0
        self._frames = frames
        self._period_s = 1.0 / rate_hz
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True, name='replay')

    def start(self) -> 'Replay':
        """Start sending in the background; return the replay itself."""
        self._thread.start()
        return self

    def stop(self) -> int:
        """Stop sending; return how many frames were sent."""
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
    """
    Return a CPU tritonserver for `models` of `repository`, its log kept out of the output.

    `ports` are its HTTP, gRPC and metrics ports.
    """
    http_port, grpc_port, metrics_port = ports
    return TritonServer(ServerConfig(model_repository=repository, profile='cpu',
                                     http_port=http_port, grpc_port=grpc_port,
                                     metrics_port=metrics_port, models=models,
                                     ready_timeout_s=120),
                        log=lambda _line: None, show_server_log=False)


def children_named(pid: int, name: str) -> list[int]:
    """Return the pids below `pid` (not `pid` itself) whose command is `name`."""
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
    """
    Remove the Python-backend stubs a test's killed tritonserver left behind.

    They can outlive it (see test_stopping_a_killed_server_ends_its_stubs).
    """
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
