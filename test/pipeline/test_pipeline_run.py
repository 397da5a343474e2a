"""`triton-perception run`: server + nodes as one process tree, end to end, clean shutdown."""
from __future__ import annotations

import os
from pathlib import Path
import signal
import subprocess
import sys
import time
from typing import Any, Iterator

from builtin_interfaces.msg import Time
import pytest
from sensor_msgs.msg import Image, PointCloud2
from std_msgs.msg import Header
from vision_msgs.msg import Detection2DArray

from support.highway_clip import clip_frames
from support.published_messages import image_message
from support.ros_helpers import BEST_EFFORT, Probe, wait_until
from triton_perception.outputs.result_messages import load_labels, read_lane_points
from triton_perception.system.processes import alive, free_ports, process_tree

pytestmark = [pytest.mark.ros, pytest.mark.server, pytest.mark.slow]
CAR = str(load_labels().index('car'))  # class_id is the id; LabelInfo has the name


def start_pipeline(tmp_path: Path, namespace: str,
                   *arguments: str) -> tuple[subprocess.Popen, Path]:
    """
    Start `triton-perception run` in `namespace`.

    The camera is on <namespace>/cam/image_raw unless `arguments` say otherwise.
    """
    http_port, grpc_port, metrics_port = free_ports(3)
    log_path = tmp_path / f'run{namespace.replace("/", "_")}.log'
    with open(log_path, 'w', encoding='utf-8') as log:
        process = subprocess.Popen(
            [str(Path(sys.executable).parent / 'triton-perception'), 'run', 'profile:=cpu',
             f'namespace:={namespace}', f'grpc_port:={grpc_port}', f'http_port:={http_port}',
             f'metrics_port:={metrics_port}',
             *(arguments or [f'camera_topic:={namespace}/cam/image_raw'])],
            stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    return process, log_path


def stop_pipeline(process: subprocess.Popen, stop_signal: int) -> list[int]:
    """Signal the runner; the pids of its tree, to check that none outlives it."""
    tree = process_tree(process.pid)[1:] if process.poll() is None else []
    process.send_signal(stop_signal)
    try:
        process.wait(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        raise
    return tree


def image_of(bgr: Any, frame_id: str, stamp_s: int) -> Image:
    """Return a BGR frame as a bgr8 Image in `frame_id`, stamped `stamp_s` s."""
    return image_message(bgr, Header(frame_id=frame_id, stamp=Time(sec=stamp_s)), 'bgr8')


def feed_cameras(probe: Probe, topics: dict[str, str], process: subprocess.Popen,
                 log_path: Path, shared: Path) -> None:
    """Once each camera topic has a subscriber, publish 30 clip frames on each, at 5 Hz."""
    cameras = {name: probe.publisher(Image, topic) for name, topic in topics.items()}
    wait_until(lambda: all(camera.get_subscription_count() >= 1
                           for camera in cameras.values()) or process.poll() is not None,
               240.0, 'a subscriber on each camera')
    assert process.poll() is None, log_path.read_text()
    for index, bgr in enumerate(clip_frames(shared, 30)):
        for name, camera in cameras.items():
            camera.publish(image_of(bgr, name, 1_700_000_000 + index))
        time.sleep(0.2)  # publishing rate (5 Hz per camera), not a wait for a condition


@pytest.fixture
def probe() -> Iterator[Probe]:
    """Yield a probe node for one test: each pipeline run starts from a fresh graph."""
    probe = Probe('pipeline_probe')
    yield probe
    probe.close()


@pytest.mark.parametrize('stop_signal', [signal.SIGINT, signal.SIGTERM])
def test_run_end_to_end_and_stop(probe: Probe, shared: Path, tmp_path: Path,
                                 stop_signal: int) -> None:
    """
    `triton-perception run` answers camera frames with cars, ego lanes and the overlay.

    SIGINT or SIGTERM then ends it with 0, and no process it started outlives it.
    """
    namespace = f'/run{stop_signal}'
    process, log_path = start_pipeline(tmp_path, namespace)
    try:
        detections = probe.record(Detection2DArray, f'{namespace}/detections')
        lanes = probe.record(PointCloud2, f'{namespace}/lanes')
        overlays = probe.record(Image, f'{namespace}/overlay', BEST_EFFORT)
        camera = probe.publisher(Image, f'{namespace}/cam/image_raw')
        # One perception_process: detection and lanes share its subscription, the overlay (being
        # watched) has its own.
        wait_until(lambda: camera.get_subscription_count() >= 2 or process.poll() is not None,
                   240.0, 'the perception process to subscribe to the camera')
        assert process.poll() is None, log_path.read_text()
        for index, bgr in enumerate(clip_frames(shared, 40)):
            camera.publish(image_of(bgr, 'front_camera', 1_700_000_000 + index))
            time.sleep(0.1)  # publishing rate (10 Hz), not a wait for a condition
        wait_until(lambda: detections and lanes and overlays, 60.0,
                   'detections, lanes and the combined overlay')
        assert any(d.results[0].hypothesis.class_id == CAR
                   for message in detections for d in message.detections)
        assert any({-1, 1} <= set(read_lane_points(cloud)['side'].tolist()) for cloud in lanes)
        assert overlays[0].header.frame_id == 'front_camera'
        tree = process_tree(process.pid)[1:]
        assert len(tree) >= 2, 'runner should have started tritonserver and perception_process'
    finally:
        tree = stop_pipeline(process, stop_signal)
    assert process.returncode == 0, log_path.read_text()
    wait_until(lambda: not any(alive(pid) for pid in tree), 60.0,
               f'no process of the pipeline left ({[pid for pid in tree if alive(pid)]})')


def start_two_cameras(tmp_path: Path, namespace: str,
                      *arguments: str) -> tuple[dict[str, str], subprocess.Popen, Path]:
    """Start the pipeline with a left and a right camera; return their topics, it, its log."""
    topics = {name: f'{namespace}/{name}_camera/image_raw' for name in ('left', 'right')}
    process, log_path = start_pipeline(
        tmp_path, namespace, 'cameras:=' + ','.join(f'{name}={topic}'
                                                    for name, topic in topics.items()),
        *arguments)
    return topics, process, log_path


def test_two_cameras_share_one_server(probe: Probe, shared: Path, tmp_path: Path) -> None:
    """cameras:=: one tritonserver, a detection_node per camera; results never cross cameras."""
    namespace = '/two_cameras'
    topics, process, log_path = start_two_cameras(tmp_path, namespace, 'enable_lanes:=false',
                                                  'enable_overlay:=false')
    try:
        results = {name: probe.record(Detection2DArray, f'{namespace}/{name}/detections')
                   for name in topics}
        feed_cameras(probe, topics, process, log_path, shared)
        wait_until(lambda: all(len(received) >= 3 for received in results.values()), 60.0,
                   'detections from both cameras')
        for name, received in results.items():
            assert {message.header.frame_id for message in received} == {name}
            assert any(d.results[0].hypothesis.class_id == CAR
                       for message in received for d in message.detections)
        assert len(process_tree(process.pid)[1:]) >= 3, 'tritonserver and two nodes'
    finally:
        stop_pipeline(process, signal.SIGINT)
    assert process.returncode == 0, log_path.read_text()


def test_nothing_outlives_a_killed_runner(probe: Probe, tmp_path: Path) -> None:
    """
    SIGKILL gives the runner no chance to stop anything.

    tritonserver (with its stubs) and the node end by themselves, through the parent-death signal.
    """
    namespace = '/killed'
    process, log_path = start_pipeline(tmp_path, namespace, 'enable_lanes:=false',
                                       'enable_overlay:=false',
                                       f'camera_topic:={namespace}/cam/image_raw')
    try:
        camera = probe.publisher(Image, f'{namespace}/cam/image_raw')
        wait_until(lambda: camera.get_subscription_count() >= 1 or process.poll() is not None,
                   240.0, 'detection_node to subscribe to the camera')
        assert process.poll() is None, log_path.read_text()
        started = process_tree(process.pid)[1:]
        assert len(started) >= 3, 'tritonserver, its stubs and the node'
    finally:
        process.kill()
        process.wait()
    wait_until(lambda: not any(alive(pid) for pid in started), 10.0,
               f'the processes the runner started ({started}) to end')


def test_a_perception_process_per_camera(probe: Probe, shared: Path, tmp_path: Path) -> None:
    """
    cameras_per_process:=1: a perception_process per camera against one tritonserver.

    Each camera's detections and lanes answer its own frames only; a stop ends every process.
    """
    namespace = '/per_camera'
    topics, process, log_path = start_two_cameras(tmp_path, namespace, 'enable_overlay:=false',
                                                  'cameras_per_process:=1')
    try:
        kinds = (('detections', Detection2DArray), ('lanes', PointCloud2))
        results = {(name, kind): probe.record(message_type, f'{namespace}/{name}/{kind}')
                   for name in topics for kind, message_type in kinds}
        feed_cameras(probe, topics, process, log_path, shared)
        wait_until(lambda: all(len(received) >= 2 for received in results.values()), 90.0,
                   'detections and lanes from both cameras')
        for (name, _kind), received in results.items():
            assert {message.header.frame_id for message in received} == {name}
        tree = process_tree(process.pid)[1:]
        commands = [Path(f'/proc/{pid}/cmdline').read_bytes() for pid in tree if alive(pid)]
        assert sum(b'perception_process' in command and b'--namespace=' in command
                   for command in commands) == 2, commands
    finally:
        tree = stop_pipeline(process, signal.SIGINT)
    assert process.returncode == 0, log_path.read_text()
    wait_until(lambda: not any(alive(pid) for pid in tree), 60.0,
               f'no process of the pipeline left ({[pid for pid in tree if alive(pid)]})')
