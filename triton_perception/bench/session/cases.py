"""
What a bench case launches: a layout's processes, its readiness, and frames paced to it.

A case is a layout (the floor node, the floor node taking frames serialized, one process per
node, one perception_process, or one perception_process per group of cameras) serving some
cameras with some models. The package's layouts come from the pipeline plan, as `ros2 launch`
starts them; the floor is the bench's own node, one process per camera. `bench --glue` runs
its cases (glue/glue_cases.py), `bench --rate-search` the pipeline as launched, both from here.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
import time
from typing import Sequence

from sensor_msgs.msg import Image, PointCloud2

from triton_perception.bench.session.floor_node import MODULE as FLOOR_MODULE
from triton_perception.bench.session.floor_node import NODE_NAME as FLOOR_NODE
from triton_perception.bench.session.measures import check_alive
from triton_perception.bench.session.ros_side import CaseWiring
from triton_perception.bench.session.settings import (BenchError, NodeKind, NODES,
                                                      READY_TIMEOUT_S, Stamp)
from triton_perception.nodes import EVENTS, EXECUTOR_ENV
from triton_perception.pipeline import pipeline_plan
from triton_perception.serving import MAX_BATCH
from triton_perception.system import NodeProcess, ros_arguments

CHECK_PERIOD_S = 1.0  # how often the publishing loop checks that every process lives
FLOORS = ('floor', 'floor_serialized')
# The layouts between one perception_process and one process per node: the plan's
# cameras_per_process (0: every camera in one process).
CAMERAS_PER_PROCESS = {'single': 0, 'groups_of_2': 2, 'per_camera': 1}
# One perception_process whose hot path runs rclpy's EventsExecutor, where the default is a
# SingleThreadedExecutor holding only the camera subscriptions (nodes.executors): both measured.
EVENTS_LAYOUT = 'single_events'
LAYOUTS = (*FLOORS, 'per_node', *CAMERAS_PER_PROCESS, EVENTS_LAYOUT)
DETECTIONS = 'detections'
LANES = 'lanes'  # lane_node alone (bench --rate-search)
BOTH = 'detections+lanes'
# The bench listens to the results a consumer of detections and lanes takes; drivable_area is
# published all the same (the overlay node takes it), so its cost is in the nodes' figures.
LANES_KIND = replace(NODES['lane_node'], topics=(('lanes', PointCloud2),))
FLOOR_KIND = replace(NODES['detection_node'], executable=FLOOR_NODE)


@dataclass(frozen=True)
class GlueCase:
    """
    One measurement: `layout` serving `cameras` cameras with `models`.

    `models` is DETECTIONS, LANES or BOTH; BOTH also runs the overlay node, ready but unwatched
    (it subscribes to neither the camera nor the results until someone watches its output).
    """

    layout: str
    models: str
    cameras: int

    @property
    def name(self) -> str:
        """Return e.g. 'single_both_4cam', unique per case: namespaces and JSON keys."""
        short = {BOTH: 'both', LANES: 'lanes'}.get(self.models, 'det')
        return f'{self.layout}_{short}_{self.cameras}cam'

    @property
    def floor(self) -> bool:
        """Say whether the case runs floor nodes (the bench's own, without accounting)."""
        return self.layout in FLOORS

    @property
    def kinds(self) -> tuple[NodeKind, ...]:
        """Return what each camera's results come from, as the bench listens to them."""
        if self.floor:
            return (FLOOR_KIND,)
        return {BOTH: (NODES['detection_node'], LANES_KIND),
                LANES: (LANES_KIND,)}.get(self.models, (NODES['detection_node'],))

    @property
    def image_readers(self) -> int:
        """Return the subscriptions one camera's frames have once the case is ready."""
        return len(self.kinds) if self.layout == 'per_node' else 1

    @property
    def overlay(self) -> bool:
        """Say whether the overlay node runs (with both models)."""
        return not self.floor and self.models == BOTH


def camera_namespaces(namespace: str, cameras: int) -> list[str]:
    """Return the namespace of each camera's nodes; camera i's frames are on <it>/image."""
    return [f'{namespace}/cam{index}' for index in range(cameras)]


def start_processes(case: GlueCase, triton_url: str, namespace: str, log_directory: Path,
                    started: list[NodeProcess], priorities: str = '',
                    max_batch: int = MAX_BATCH) -> None:
    """
    Start the case's processes into `started`: the plan's, or one floor node per camera.

    `priorities`: camera_priorities with the cameras named `cam0`, `cam1`, ... (their
    namespaces are the case's). `max_batch`: cameras of a process one request serves.

    The caller stops what is in `started`, also when this raises after starting some.
    """
    cameras = camera_namespaces(namespace, case.cameras)
    if case.floor:
        parameters = {'triton_url': triton_url,
                      'serialized_take': case.layout == 'floor_serialized'}
        for camera in cameras:
            started.append(NodeProcess(FLOOR_NODE, ros_arguments(parameters, namespace=camera),
                                       log_directory, module=FLOOR_MODULE))
        return
    plan = pipeline_plan({
        'start_triton': 'false', 'triton_url': triton_url, 'namespace': namespace,
        'cameras': ','.join(f'{camera.rsplit("/", 1)[1]}={camera}/image' for camera in cameras),
        'process_layout': 'per_node' if case.layout == 'per_node' else 'single',
        'cameras_per_process': str(CAMERAS_PER_PROCESS.get(case.layout, 0)),
        'enable_detections': str(case.models != LANES).lower(),
        'enable_lanes': str(case.models in (BOTH, LANES)).lower(),
        'enable_overlay': str(case.overlay).lower(),
        'camera_priorities': ','.join(f'{namespace}/{entry.strip()}'
                                      for entry in priorities.split(',') if entry.strip()),
        'max_batch': str(max_batch)})
    environment = {EXECUTOR_ENV: EVENTS} if case.layout == EVENTS_LAYOUT else {}
    for node in plan.nodes:
        started.append(NodeProcess(node.executable, node.ros_arguments(), log_directory,
                                   environment=environment))


def wait_ready(case: GlueCase, wirings: Sequence[CaseWiring], cameras: Sequence[str],
               processes: Sequence[NodeProcess]) -> None:
    """
    Poll matching, /diagnostics and the overlay's subscriptions until the case serves frames.

    Raises BenchError if a process died or the case is not ready within READY_TIMEOUT_S.
    """
    deadline = time.monotonic() + READY_TIMEOUT_S
    while not all(wiring.ready() and overlay_listening(case, wiring, camera)
                  for wiring, camera in zip(wirings, cameras)):
        for process in processes:
            check_alive(process)
        if time.monotonic() > deadline:
            raise BenchError(f'{case.name} not ready within {READY_TIMEOUT_S:g} s:\n'
                             + '\n'.join(process.output_tail() for process in processes))
        time.sleep(0.05)


def publish_paced(wirings: Sequence[CaseWiring], frames: Sequence[Image], rate_hz: float,
                  duration_s: float, processes: Sequence[NodeProcess]) -> list[list[Stamp]]:
    """
    Publish `frames` (looped) to every camera at `rate_hz` for `duration_s`; return the stamps.

    Cameras take turns, evenly spaced, as free-running cameras would; a late tick is sent
    at once, so the count per camera is exactly duration x rate. Every CHECK_PERIOD_S the
    processes are checked (BenchError when one exited).
    """
    stamps: list[list[Stamp]] = [[] for _ in wirings]
    period_s = 1.0 / (rate_hz * len(wirings))
    start = time.monotonic()
    next_check = start + CHECK_PERIOD_S
    tick = 0
    while (target := start + tick * period_s) < start + duration_s:
        if (delay := target - time.monotonic()) > 0:
            time.sleep(delay)  # pacing at camera rate
        camera = tick % len(wirings)
        frame = frames[(tick // len(wirings)) % len(frames)]
        stamps[camera].append(wirings[camera].publish(frame))
        tick += 1
        if time.monotonic() >= next_check:
            for process in processes:
                check_alive(process)
            next_check += CHECK_PERIOD_S
    return stamps


def overlay_listening(case: GlueCase, wiring: CaseWiring, namespace: str) -> bool:
    """
    Say whether the camera's overlay node, when the case has one, is up: it offers `overlay`.

    Readiness waits for this so that the overlay node runs, as in a pipeline, before anything is
    measured. Unwatched, it takes neither the camera nor the results.
    """
    if not case.overlay:
        return True
    return wiring.publisher_count(f'{namespace}/overlay') >= 1
