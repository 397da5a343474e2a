"""
What the glue bench runs: its cases, their processes, the frame, and the frame accounting.

A case is a layout (the floor node, the floor node taking frames serialized, one process per
node, one perception_process, or one perception_process per group of cameras) serving some
cameras with some models. The package's layouts come from the pipeline plan, as `ros2 launch`
starts them; the floor is the bench's own node, one process per camera.
"""
from __future__ import annotations

import array
from dataclasses import dataclass, replace
from pathlib import Path
import time
from typing import Callable, Sequence

import cv2
import numpy as np
from sensor_msgs.msg import Image, PointCloud2

from triton_perception.bench.bench_schema import NodeAccounting
from triton_perception.bench.floor_node import MODULE as FLOOR_MODULE, NODE_NAME as FLOOR_NODE
from triton_perception.bench.measures import check_alive
from triton_perception.bench.ros_side import CaseWiring
from triton_perception.bench.settings import (BenchError, NodeKind, NODES, READY_TIMEOUT_S,
                                              Stamp)
from triton_perception.frames import FATES, NodeStatus
from triton_perception.nodes import EVENTS, EXECUTOR_ENV
from triton_perception.pipeline import pipeline_plan
from triton_perception.serving import MAX_BATCH
from triton_perception.system import NodeProcess, ros_arguments

FRAME_SIZE = (960, 540)  # width, height, as the issue measures
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


def glue_cases(camera_counts: Sequence[int]) -> list[GlueCase]:
    """
    Return the cases for each camera count, the floor first (the others are set against it).

    One camera also runs detections alone in each layout: the floor serves detections only,
    so that is the like-for-like comparison; with more cameras only the floor runs
    detections alone. The floor with a serialized take runs with one camera. The grouped
    layouts run where they differ from one process: a process per camera from 2 cameras, per
    group of 2 from 3.
    """
    cases = []
    for cameras in camera_counts:
        cases.append(GlueCase('floor', DETECTIONS, cameras))
        if cameras == 1:
            cases += [GlueCase(layout, DETECTIONS, 1)
                      for layout in ('floor_serialized', 'per_node', 'single')]
        cases += [GlueCase(layout, BOTH, cameras)
                  for layout in ('per_node', *CAMERAS_PER_PROCESS)
                  if CAMERAS_PER_PROCESS.get(layout, 0) < cameras]
        if cameras == 1:
            cases.append(GlueCase(EVENTS_LAYOUT, BOTH, 1))
    return cases


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


def bgr_frame(video: Path, log: Callable[[str], None],
              size: tuple[int, int] = FRAME_SIZE) -> Image:
    """
    Return a bgr8 Image of `size` (width, height): the clip's first frame, or a synthetic road.

    The graphs are constant, so the pixels matter only for what the nodes copy and convert,
    and one frame serves every camera (each publish gets its own stamp).
    """
    capture = cv2.VideoCapture(str(video))
    ok, bgr = capture.read()
    capture.release()
    if ok:
        log(f'frames: the first frame of {video}, as bgr8 {size[0]}x{size[1]}')
        bgr = cv2.resize(bgr, size, interpolation=cv2.INTER_AREA)
    else:
        log(f'frames: {video} not readable; a synthetic bgr8 frame instead')
        width, height = size
        bgr = np.zeros((height, width, 3), np.uint8)
        bgr[:, :, 0] = np.linspace(0, 255, width, dtype=np.uint8)[None, :]
        bgr[:, :, 1] = np.linspace(0, 255, height, dtype=np.uint8)[:, None]
        bgr[height // 2:, :, 2] = 96
    message = Image(height=bgr.shape[0], width=bgr.shape[1], encoding='bgr8', is_bigendian=0,
                    step=bgr.shape[1] * 3, data=array.array('B', bgr.tobytes()))
    message.header.frame_id = 'camera'
    return message


def node_accounting(status: NodeStatus | None, sent: int) -> NodeAccounting:
    """
    One node's frame accounting from its last /diagnostics status, against the frames sent.

    `lost` = lost before the node (publication sequence gaps) + frames the node never saw or
    counted (`unseen`); `without_result` = frames the node settled without publishing
    (dropped from its latest-frame slot, rejected, failed) or still holds (pending).
    `stage_ms_mean`: the node's own stage times (wall ms per published frame, /diagnostics).
    """
    if status is None:
        return {'sent': sent, 'status': None, 'lost': None, 'without_result': None,
                'balanced': False}
    counts = status.counts
    unseen = sent - status.seen
    stages = ({stage: round(total / status.timed, 2) for stage, total in
               status.stage_ms_sums.items()} if status.timed else {})
    return {'sent': sent, 'received': counts['received'], 'published': counts['published'],
            'dropped': counts['dropped'], 'rejected': counts['rejected'],
            'failed': counts['failed'], 'pending': counts['pending'],
            'lost_before_node': counts['lost_before_node'], 'unseen': unseen,
            'stage_ms_mean': stages,
            'lost': counts['lost_before_node'] + max(unseen, 0),
            'without_result': sum(counts[fate] for fate in FATES if fate != 'published')
            + counts['pending'],
            'balanced': status.balanced}


def served_per_camera(accounting: dict[str, dict[str, NodeAccounting]]) -> dict[str, float]:
    """Return each camera's share of its frames sent that its detection node published."""
    shares = {}
    for camera, nodes in accounting.items():
        entry = nodes.get('detection_node')
        if entry is not None and entry.get('published') is not None and entry['sent']:
            shares[camera] = round(float(entry['published']) / entry['sent'], 3)
    return shares


def settled(statuses: dict[str, NodeStatus], kinds: Sequence[NodeKind], sent: int) -> bool:
    """Say whether every node's status counts every frame sent and holds none pending."""
    return all((status := statuses.get(kind.executable)) is not None and status.seen >= sent
               and status.count('pending') == 0 for kind in kinds)


def results_missing(wiring: CaseWiring, kind: NodeKind, stamps: Sequence[Stamp]) -> int:
    """Return how many of the frames `stamps` brought no result of `kind` to the bench."""
    return sum(wiring.tracker.latency_ms(stamp, (kind.executable,)) is None for stamp in stamps)
