"""What the benchmark runs: its cases, rates and limits, and what each node asks and publishes."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np
from sensor_msgs.msg import Image, PointCloud2
from vision_msgs.msg import Detection2DArray

from triton_perception.errors import TritonPerceptionError
from triton_perception.lanes import SEGMENTATION_OUTPUTS as LANE_OUTPUTS
from triton_perception.parameters import DETECTION, LANES, specs_by_name
from triton_perception.qos import stream_qos
from triton_perception.serving import Tensors
from triton_perception.system import DEFAULT_CLIP as DEFAULT_VIDEO

CASES = {'detection': ('detection_node',), 'lanes': ('lane_node',),
         'both': ('detection_node', 'lane_node')}
RATE_HZ = 30.0
WARMUP_FRAMES = 5
# Throughput latency is compared between the first and the last this many seconds.
WINDOW_S = 10.0
RSS_SAMPLE_PERIOD_S = 0.5
FRAME_TIMEOUT_S = 10.0
READY_TIMEOUT_S = 120.0
DRAIN_TIMEOUT_S = 5.0
PROGRESS_PERIOD_S = 10.0
REQUEST_TIMEOUT_S = 30.0
# The nodes' /diagnostics period during the bench: after each one-at-a-time frame the bench waits
# for the status that counts it (the node's stage times), so the default 1 s would cost ~0.5 s
# per frame.
DIAGNOSTICS_PERIOD_S = 0.1
STATUS_TIMEOUT_S = 2.0
# Reliable publisher: it matches the nodes' best-effort subscription (their default QoS).
FRAME_QOS = stream_qos('reliable', 1)
RESULTS_READER_QOS = stream_qos('reliable', 50)
Stamp = tuple[int, int]
# Triton's own per-model timers (the statistics extension), in the order a request meets them.
STEP_TIMERS = ('queue', 'compute_input', 'compute_infer', 'compute_output')


class BenchError(TritonPerceptionError, RuntimeError):
    """The benchmark could not run; the message says what is missing or what died."""


@dataclass(frozen=True)
class NodeKind:
    """What one node executable asks Triton and what it publishes per frame."""

    executable: str
    model: str
    outputs: tuple[str, ...]
    topics: tuple[tuple[str, type], ...]
    request_inputs: Callable[[], Tensors]


def detection_request_inputs() -> Tensors:
    """Return the request inputs detection_node sends with each frame, at their defaults."""
    specs = specs_by_name(DETECTION)
    return {'SCORE_THRESHOLD': np.array([specs['score_threshold'].default], np.float32),
            'IOU_THRESHOLD': np.array([specs['iou_threshold'].default], np.float32),
            'MAX_DETECTIONS': np.array([specs['max_detections'].default], np.int32)}


def lane_request_inputs() -> Tensors:
    """Return the request inputs lane_node sends besides the frame: none."""
    return {}


NODES = {
    'detection_node': NodeKind('detection_node',
                               str(specs_by_name(DETECTION)['model_name'].default),
                               ('DETECTIONS', 'NUM_DETECTIONS'),
                               (('detections', Detection2DArray),),
                               detection_request_inputs),
    'lane_node': NodeKind('lane_node', str(specs_by_name(LANES)['model_name'].default),
                          LANE_OUTPUTS, (('lanes', PointCloud2), ('drivable_area', Image)),
                          lane_request_inputs),
}


@dataclass(frozen=True)
class BenchSettings:
    """
    What `bench` measures and how long.

    `frames` are timed one at a time for latency, after warm-up; `duration_s` is the length
    of the throughput phase, in s. `profile` and `triton_url` choose the server (a running
    one at `triton_url`, else one started with `profile`).
    """

    frames: int = 60
    duration_s: float = 60.0
    cases: tuple[str, ...] = tuple(CASES)
    json_path: Path | None = None
    profile: str | None = None
    precision: str = 'fp'  # or 'int8' (`models quantize`): the server's and the references'
    triton_url: str | None = None
    model_repository: Path | None = None
    video: Path = DEFAULT_VIDEO
    max_in_flight: int | None = None  # the nodes' parameter; None: its default

    def __post_init__(self) -> None:
        """Raise BenchError for no frames, no duration, or max_in_flight outside 1-8."""
        if self.frames < 1 or self.duration_s <= 0:
            raise BenchError(f'need --frames >= 1 and --duration > 0, got {self.frames} and '
                             f'{self.duration_s:g}')
        if self.max_in_flight is not None and not 1 <= self.max_in_flight <= 8:
            raise BenchError(f'need 1 <= --max-in-flight <= 8, got {self.max_in_flight}')

    def node_parameters(self) -> dict[str, int | float]:
        """Return the parameters the bench gives every node, besides triton_url."""
        parameters: dict[str, int | float] = {'diagnostics_period_s': DIAGNOSTICS_PERIOD_S}
        if self.max_in_flight is not None:
            parameters['max_in_flight'] = self.max_in_flight
        return parameters


def parse_cases(text: str) -> tuple[str, ...]:
    """'detection,both' -> ('detection', 'both'); unknown names are an error naming the known."""
    cases = tuple(dict.fromkeys(name.strip() for name in text.split(',') if name.strip()))
    unknown = [name for name in cases if name not in CASES]
    if unknown or not cases:
        raise BenchError(f'unknown cases {unknown or [text]}; choose from {", ".join(CASES)}')
    return cases
