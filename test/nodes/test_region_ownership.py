"""
Two perception processes with the same pid, in two pid namespaces, against one tritonserver.

Containers started with `--ipc=host` share /dev/shm and number their processes alike, so two
node processes on one host may both be pid 1. Each must still have its own frames served: one
camera sees only black frames, the other a road with cars; the black camera's detections stay
empty and the road's do not. `unshare --pid --fork` (util-linux; the suite runs as root) gives
each process a pid namespace of its own while /dev/shm and the network stay shared.
"""
from __future__ import annotations

import os
from pathlib import Path
import shutil
import signal
import subprocess
import time
from typing import Any, Iterator

import numpy as np
import pytest
from sensor_msgs.msg import Image
from vision_msgs.msg import Detection2DArray

from support.perception_nodes import image_message
from support.ros_helpers import Probe, wait_until
from triton_perception.system.processes import (live_children, node_command, PARENT_PID_ENV,
                                                ros_arguments)

pytestmark = [pytest.mark.ros, pytest.mark.server]
CAMERAS = ('black', 'road')
PERIOD_S = 0.2
FRAMES = 8  # per camera, sent while both processes run


def namespace_pid(host_pid: int) -> int:
    """Return the pid a process has in its own (innermost) pid namespace (NSpid in status)."""
    for line in Path(f'/proc/{host_pid}/status').read_text().splitlines():
        if line.startswith('NSpid:'):
            return int(line.split()[-1])
    raise AssertionError(f'no NSpid for {host_pid}')


class NamespacedProcess:
    """A perception_process for one camera, pid 1 of a pid namespace of its own."""

    def __init__(self, camera: str, url: str, log_directory: Path) -> None:
        """Start it through `unshare --pid --fork --kill-child`, its output in a log file."""
        self.log_path = log_directory / f'{camera}.log'
        self._log = open(self.log_path, 'w', encoding='utf-8')  # noqa: SIM115 (closed in stop)
        environment = {name: value for name, value in os.environ.items()
                       if name != PARENT_PID_ENV}  # its parent is unshare, pid 0 in there
        self.unshare = subprocess.Popen(
            ['unshare', '--pid', '--fork', '--kill-child',
             *node_command('perception_process'), f'--camera=/{camera}=/{camera}/image_raw',
             '--no-overlay', *ros_arguments({'triton_url': url, 'qos_reliability': 'reliable',
                                             'tracking': False})],
            stdout=self._log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            env=environment)

    def node_pid(self) -> int:
        """Return the node process's pid as this test sees it (unshare's one child)."""
        children = wait_until(lambda: live_children(self.unshare.pid), 20.0,
                              'unshare to start the node process')
        return int(children[0])

    def stop(self) -> str:
        """SIGINT the node (it has a handler, as a namespace's init must), then end unshare."""
        if self.unshare.poll() is None:
            for child in live_children(self.unshare.pid):
                os.kill(child, signal.SIGINT)
            try:
                self.unshare.wait(timeout=15.0)
            except subprocess.TimeoutExpired:
                self.unshare.kill()  # --kill-child takes the node with it
                self.unshare.wait()
        self._log.close()
        return self.log_path.read_text(encoding='utf-8', errors='replace')


@pytest.fixture
def two_namespaces(triton_server: Any, tmp_path: Path) -> Iterator[dict[str, NamespacedProcess]]:
    """One perception_process per camera, each pid 1 of its own pid namespace."""
    if shutil.which('unshare') is None or os.geteuid() != 0:
        pytest.fail('this test needs util-linux unshare and root (pid namespaces)')
    processes = {camera: NamespacedProcess(camera, triton_server.grpc_url, tmp_path)
                 for camera in CAMERAS}
    try:
        yield processes
    finally:
        for process in processes.values():
            process.stop()


def test_same_pid_in_two_namespaces_each_gets_its_own_pixels(
        probe: Probe, two_namespaces: dict[str, NamespacedProcess],
        road_rgb: np.ndarray) -> None:
    """
    The black camera detects nothing and the road camera its cars, frame after frame.

    The black camera's process makes its regions first; the road camera's then makes regions
    of the same pid, which must neither take the black camera's names nor their registrations.
    """
    pids = {camera: namespace_pid(process.node_pid())
            for camera, process in two_namespaces.items()}
    assert pids['black'] == pids['road'], pids
    frames = {'black': np.zeros_like(road_rgb), 'road': road_rgb}
    publishers = {camera: probe.publisher(Image, f'/{camera}/image_raw') for camera in CAMERAS}
    results = {camera: probe.record(Detection2DArray, f'/{camera}/detections')
               for camera in CAMERAS}
    for camera in CAMERAS:
        probe.wait_for_subscribers(publishers[camera], 1, timeout_s=120.0)
    stamp = 1000
    # The black camera's process first: its regions exist when the road's are made.
    deadline = time.monotonic() + 60.0
    while not results['black']:
        assert time.monotonic() < deadline, two_namespaces['black'].stop()
        stamp += 1
        publishers['black'].publish(image_message(frames['black'], 'rgb8', 'black', stamp))
        time.sleep(PERIOD_S)
    first_stamp = stamp + 1
    for _ in range(FRAMES):  # each frame of both cameras answered before the next is sent
        stamp += 1
        for camera in CAMERAS:
            publishers[camera].publish(image_message(frames[camera], 'rgb8', camera, stamp))
        wait_until(lambda: all(any(message.header.stamp.sec == stamp
                                   for message in list(results[camera])) for camera in CAMERAS),
                   60.0, f'both cameras to answer frame {stamp}')
    answered = {camera: [message for message in list(results[camera])
                         if message.header.stamp.sec >= first_stamp] for camera in CAMERAS}
    assert all(len(answered[camera]) == FRAMES for camera in CAMERAS), answered
    black_boxes = [len(message.detections) for message in answered['black']]
    road_boxes = [len(message.detections) for message in answered['road']]
    assert not any(black_boxes), f'the black camera detected the road: {black_boxes}'
    assert all(road_boxes), f'the road camera lost its cars: {road_boxes}'
