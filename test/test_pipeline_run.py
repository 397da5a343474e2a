"""`triton-perception run`: server + nodes as one process tree, end to end, clean shutdown."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Iterator

import cv2
import pytest
from sensor_msgs.msg import Image, PointCloud2
from vision_msgs.msg import Detection2DArray

from ros_helpers import BEST_EFFORT, Probe, wait_until
from triton_perception.messages import read_lane_points
from triton_perception.processes import alive, free_ports, process_tree

pytestmark = [pytest.mark.ros, pytest.mark.server, pytest.mark.slow]


def start_pipeline(tmp_path: Path, namespace: str) -> tuple[subprocess.Popen, Path]:
    http_port, grpc_port, metrics_port = free_ports(3)
    log_path = tmp_path / f'run{namespace.replace("/", "_")}.log'
    with open(log_path, 'w', encoding='utf-8') as log:
        process = subprocess.Popen(
            [str(Path(sys.executable).parent / 'triton-perception'), 'run', 'profile:=cpu',
             f'namespace:={namespace}', f'camera_topic:={namespace}/cam/image_raw',
             f'grpc_port:={grpc_port}', f'http_port:={http_port}',
             f'metrics_port:={metrics_port}'],
            stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    return process, log_path


def clip_frames(shared: Path, count: int) -> list:
    capture = cv2.VideoCapture(str(shared / 'data' / 'videos' / 'solidWhiteRight.mp4'))
    frames = []
    while len(frames) < count:
        ok, bgr = capture.read()
        assert ok
        frames.append(bgr)
    capture.release()
    return frames


@pytest.fixture
def probe() -> Iterator[Probe]:
    probe = Probe('pipeline_probe')
    yield probe
    probe.close()


@pytest.mark.parametrize('stop_signal', [signal.SIGINT, signal.SIGTERM])
def test_run_end_to_end_and_stop(probe: Probe, shared: Path, tmp_path: Path,
                                 stop_signal: int) -> None:
    namespace = f'/run{stop_signal}'
    process, log_path = start_pipeline(tmp_path, namespace)
    try:
        detections = probe.record(Detection2DArray, f'{namespace}/detections')
        lanes = probe.record(PointCloud2, f'{namespace}/lanes')
        overlays = probe.record(Image, f'{namespace}/overlay', BEST_EFFORT)
        camera = probe.publisher(Image, f'{namespace}/cam/image_raw')
        wait_until(lambda: camera.get_subscription_count() >= 3 or process.poll() is not None,
                   240.0, 'the three nodes to subscribe to the camera')
        assert process.poll() is None, log_path.read_text()
        for index, bgr in enumerate(clip_frames(shared, 40)):
            message = Image(height=bgr.shape[0], width=bgr.shape[1], encoding='bgr8',
                            step=bgr.shape[1] * 3, data=bgr.tobytes())
            message.header.frame_id = 'front_camera'
            message.header.stamp.sec = 1_700_000_000 + index
            camera.publish(message)
            time.sleep(0.1)  # publishing rate (10 Hz), not a wait for a condition
        wait_until(lambda: detections and lanes and overlays, 60.0,
                   'detections, lanes and the combined overlay')
        assert any(d.results[0].hypothesis.class_id == 'car'
                   for message in detections for d in message.detections)
        assert any({-1, 1} <= set(read_lane_points(cloud)['side'].tolist()) for cloud in lanes)
        assert overlays[0].header.frame_id == 'front_camera'
        tree = process_tree(process.pid)[1:]
        assert len(tree) >= 4, 'runner should have started tritonserver and three nodes'
    finally:
        tree = process_tree(process.pid)[1:] if process.poll() is None else []
        process.send_signal(stop_signal)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            raise
    assert process.returncode == 0, log_path.read_text()
    wait_until(lambda: not any(alive(pid) for pid in tree), 5.0,
               f'no process of the pipeline left ({[pid for pid in tree if alive(pid)]})')
