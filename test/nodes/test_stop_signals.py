"""
A node process stops with exit code 0 wherever SIGINT or SIGTERM lands.

Real node processes, real Fast DDS, the session's real tritonserver. The signal is sent from
inside the reading of a received frame (test/support/signal_in_take.py), and at random moments
while large frames stream beside a process that keeps a core busy.
"""
from __future__ import annotations

from pathlib import Path
import random
import signal
import subprocess
import sys
import time
from typing import Any, Iterator

import numpy as np
import pytest
from sensor_msgs.msg import Image, PointCloud2
from vision_msgs.msg import Detection2DArray

from support.fault_plumbing import image, Replay
from support.ros_helpers import BEST_EFFORT, Probe, RELIABLE, REPO, wait_until
from triton_perception.nodes.executors import EVENTS, EXECUTOR_ENV
from triton_perception.system.processes import node_command, ros_arguments, with_parent_pid

pytestmark = [pytest.mark.ros, pytest.mark.server]

WRAPPER = REPO / 'test' / 'support' / 'signal_in_take.py'
# The frame on which the signal lands: the first, and one once the node is in its stride.
LATER_TAKE = 5
EXIT_LIMIT_S = 60.0  # generous: a failure means the node did not stop, not that it was slow
STRESS_SEED = 32
STRESS_TRIALS = (('lane_node', signal.SIGTERM), ('detection_node', signal.SIGTERM),
                 ('lane_node', signal.SIGINT), ('detection_node', signal.SIGINT))
STRESS_RATE_HZ = 30.0
OUTPUTS = {'detection_node': ('detections', Detection2DArray),
           'lane_node': ('lanes', PointCloud2)}


class Started:
    """A node process with its output in a file, stopped (SIGKILL) if a test leaves it running."""

    def __init__(self, command: list[str], log_path: Path) -> None:
        """Start `command`, its output in `log_path`; it dies with the test process (run_nodes)."""
        self.log_path = log_path
        with open(log_path, 'w', encoding='utf-8') as log:
            self.process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT,
                                            stdin=subprocess.DEVNULL, env=with_parent_pid())

    def output(self) -> str:
        """Return what the process has written so far."""
        return self.log_path.read_text(encoding='utf-8', errors='replace')

    def exit_code(self) -> int:
        """Wait for the process to end by itself (it was sent a signal)."""
        try:
            return self.process.wait(timeout=EXIT_LIMIT_S)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            raise AssertionError(f'did not stop within {EXIT_LIMIT_S:g} s\n{self.output()}')

    def assert_clean_stop(self) -> None:
        """Assert the process ends by itself with exit code 0 and no traceback."""
        code = self.exit_code()
        output = self.output()
        assert code == 0 and 'Traceback' not in output, f'exit code {code}\n{output}'


@pytest.fixture
def started(tmp_path: Path) -> Iterator[Any]:
    """Yield a function that starts node processes for one test; any still running are killed."""
    processes: list[Started] = []

    def start(command: list[str]) -> Started:
        processes.append(Started(command, tmp_path / f'node-{len(processes)}.log'))
        return processes[-1]
    yield start
    for process in processes:
        if process.process.poll() is None:
            process.process.kill()
            process.process.wait()


def node_parameters(executable: str, triton_server: Any) -> dict[str, Any]:
    """
    Return the parameters that make `executable` take frames reliably from the session's server.

    overlay_node needs no server and expects no results, so that it draws every frame at once.
    """
    if executable == 'overlay_node':  # draws each frame at once; needs no Triton
        return {'expect_detections': False, 'expect_lanes': False,
                'qos_reliability': 'reliable'}
    return {'triton_url': triton_server.grpc_url, 'qos_reliability': 'reliable',
            'qos_depth': 10}


def noise_frames(width: int, height: int, count: int) -> list[Image]:
    """Return `count` seeded random frames of `width` x `height`."""
    rng = np.random.default_rng(STRESS_SEED)
    return [image(rng.integers(0, 255, (height, width, 3), np.uint8)) for _ in range(count)]


@pytest.mark.parametrize('stop_signal', [signal.SIGINT, signal.SIGTERM], ids=['sigint', 'sigterm'])
@pytest.mark.parametrize('executable', ['detection_node', 'lane_node', 'overlay_node',
                                        'perception_process'])
def test_a_signal_during_a_take_stops_the_node_cleanly(
        executable: str, stop_signal: signal.Signals, probe: Probe, triton_server: Any,
        started: Any) -> None:
    """Two nodes side by side: the signal lands in the conversion of the 1st and a later frame."""
    signal_during_take(executable, stop_signal, probe, triton_server, started)


@pytest.mark.parametrize('stop_signal', [signal.SIGINT, signal.SIGTERM], ids=['sigint', 'sigterm'])
def test_a_signal_during_a_take_stops_the_events_executor_cleanly(
        stop_signal: signal.Signals, probe: Probe, triton_server: Any, started: Any,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The same with the hot path on rclpy's EventsExecutor (the default is the classic one)."""
    monkeypatch.setenv(EXECUTOR_ENV, EVENTS)
    signal_during_take('perception_process', stop_signal, probe, triton_server, started,
                       'events_')


def signal_during_take(executable: str, stop_signal: signal.Signals, probe: Probe,
                       triton_server: Any, started: Any, label: str = '') -> None:
    """Signal two processes of `executable` in their 1st and a later take; both stop cleanly."""
    namespaces = {take: f'/take_{label}{executable}_{stop_signal.name.lower()}_{take}'
                  for take in (1, LATER_TAKE)}
    nodes = {take: started([sys.executable, str(WRAPPER), executable, stop_signal.name[3:],
                            str(take), *ros_arguments(node_parameters(executable, triton_server),
                                                      namespace=namespace)])
             for take, namespace in namespaces.items()}
    cameras = [probe.publisher(Image, f'{namespace}/image') for namespace in namespaces.values()]
    if executable == 'overlay_node':  # it subscribes to the camera only while watched
        for namespace in namespaces.values():
            probe.record(Image, f'{namespace}/overlay', BEST_EFFORT)
    for camera in cameras:
        probe.wait_for_subscribers(camera, timeout_s=EXIT_LIMIT_S)
    replays = [Replay(camera, noise_frames(64, 48, 3), 20.0).start() for camera in cameras]
    try:
        for take, node in nodes.items():
            node.assert_clean_stop()
            for sent in (f'in take {take}', 'again during the shutdown'):
                assert f'sending {stop_signal.name} {sent}' in node.output(), node.output()
    finally:
        for replay in replays:
            replay.stop()


@pytest.fixture
def cpu_hog() -> Iterator[None]:
    """Keep one core busy, as the rest of a loaded machine would."""
    hog = subprocess.Popen(['sh', '-c', 'while :; do :; done'])
    try:
        yield
    finally:
        hog.kill()
        hog.wait()


def test_stops_at_random_moments_while_large_frames_stream_are_clean(
        probe: Probe, triton_server: Any, started: Any, cpu_hog: None) -> None:
    """
    SIGINT or SIGTERM at a random moment while Full HD frames stream ends each node cleanly.

    A process keeps a core busy meanwhile, as on a loaded machine.
    """
    rng = random.Random(STRESS_SEED)
    frames = noise_frames(1920, 1080, 2)
    unclean = []
    for trial, (executable, stop_signal) in enumerate(STRESS_TRIALS):
        namespace = f'/random_stop_{trial}'
        node = started([*node_command(executable), *ros_arguments(
            node_parameters(executable, triton_server), namespace=namespace)])
        topic, message_type = OUTPUTS[executable]
        results = probe.record(message_type, f'{namespace}/{topic}', RELIABLE)
        camera = probe.publisher(Image, f'{namespace}/image')
        probe.wait_for_subscribers(camera, timeout_s=EXIT_LIMIT_S)
        replay = Replay(camera, frames, STRESS_RATE_HZ).start()
        try:
            wait_until(lambda: results, EXIT_LIMIT_S, f'{executable} to answer a frame')
            delay_s = rng.uniform(0.0, 1.0)
            time.sleep(delay_s)  # a random moment, not a synchronisation
            node.process.send_signal(stop_signal)
            try:
                node.assert_clean_stop()
            except AssertionError as error:
                unclean.append(f'trial {trial}: {executable}, {stop_signal.name} {delay_s:.3f} s '
                               f'after its first answer: {error}')
        finally:
            replay.stop()
    assert not unclean, f'{len(unclean)} of {len(STRESS_TRIALS)} stops unclean:\n' + '\n'.join(
        unclean)
