"""
The cases `bench --glue` runs, the frame it publishes, and each node's frame accounting.

The layouts and what a case starts are the session's (session/cases.py); which cases a run
holds, the one frame every camera is fed, and how the frames sent are set against each node's
/diagnostics accounting are the glue measurement's own.
"""
from __future__ import annotations

import array
from pathlib import Path
from typing import Callable, Sequence

import cv2
import numpy as np
from sensor_msgs.msg import Image

from triton_perception.bench.glue.glue_schema import NodeAccounting
from triton_perception.bench.session import (BOTH, CAMERAS_PER_PROCESS, CaseWiring, DETECTIONS,
                                             EVENTS_LAYOUT, GlueCase, NodeKind, Stamp)
from triton_perception.frames import FATES, NodeStatus

FRAME_SIZE = (960, 540)  # width, height, as the issue measures


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
