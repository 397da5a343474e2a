"""`triton-perception bench`: what Triton and ROS cost on top of the bare processing, measured here.

Per case (detection, lanes, both nodes at once) on the frames of a road clip:
- reference_ms: the model repository's own pre/postprocess modules and ONNX runner, loaded by
  file path and run in this process (no ROS, no Triton) with the CPU profile's thread settings;
- triton_ms: the node's ensemble request over gRPC, one frame at a time;
- ros_e2e_ms: an rgb8 Image published here -> the node's result received here, the node running
  as its own process, one frame at a time;
  each frame goes through the three in turn, so load from other work weighs on all three alike;
- a throughput phase at camera rate (the clip looped) giving delivered results per second,
  latency early and late in the run, and CPU time and peak memory of the node and the server.
Writes JSON and prints a Markdown table; every process it starts is stopped on exit or Ctrl-C.
"""
from __future__ import annotations

import array
import importlib.util
import json
import os
import platform
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, Callable, Sequence

import cv2
import numpy as np
import onnxruntime
import rclpy
import tritonclient.grpc as grpcclient
from diagnostic_msgs.msg import DiagnosticArray
from google.protobuf import text_format
from rclpy.context import Context
from rclpy.executors import SingleThreadedExecutor
from triton_perception.qos import DIAGNOSTICS_QOS, stream_qos
from triton_perception.bench_transfers import transfer_bytes
from triton_perception.lane_geometry import NUM_POINTS
from triton_perception.lane_geometry import postprocess as lane_postprocess
from triton_perception.validation import check_detections
from rclpy.signals import SignalHandlerOptions
from sensor_msgs.msg import Image, PointCloud2
from tritonclient.grpc import model_config_pb2
from vision_msgs.msg import Detection2DArray

from triton_perception.models import check_models
from triton_perception.diagnostics import NodeStatus, status_name
from triton_perception.nodes.lane_node import LANE_OUTPUTS
from triton_perception.parameters import DETECTION, LANES, specs_by_name
from triton_perception.paths import SOURCE_ROOT, dds_profile_environment, default_model_repository
from triton_perception.runner import wait_for_remote_models
from triton_perception.triton.client import Tensors, infer_inputs, is_loopback
from triton_perception.processes import (NodeProcess, free_ports, process_tree, ros_arguments,
                                         status_kib, tree_cpu_s)
from triton_perception.triton.server import ServerConfig, TritonServer

DEFAULT_VIDEO = SOURCE_ROOT.parent / 'shared' / 'data' / 'videos' / 'solidWhiteRight.mp4'
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
# Reliable publisher: it matches the nodes' best-effort subscription (their default QoS).
FRAME_QOS = stream_qos('reliable', 1)
RESULTS_READER_QOS = stream_qos('reliable', 50)
METHOD = {
    'reference_ms': 'model repository modules by file path + onnxruntime CPU with '
                    'configs/cpu.pbtxt thread settings, one process, median after warm-up '
                    '(also with --profile tensorrt: ratio then sets GPU serving against CPU)',
    'triton_ms': 'tritonclient.grpc request as the node sends it, frames one at a time; '
                 'both: the two requests concurrently, until both returned',
    'latency_order': 'per frame: reference, then Triton, then ROS (paired under the same load)',
    'ros_e2e_ms': 'publish (rgb8, reliable publisher) -> result callback in this process, '
                  'frames one at a time; lanes: lanes and drivable_area both received',
    'throughput_fps': f'clip looped at {RATE_HZ:g} Hz; results received / duration; both: the '
                      'slower node\'s (the nodes drop frames independently)',
    'p95_first_10s_ms': 'publish -> result received, frames published in the first 10 s of the '
                        'throughput phase (last 10 s likewise); both: each node\'s results',
    'cpu_ms_per_frame': 'utime+stime of the process and its children over the throughput '
                        'phase (including the drain) / results; both: node = sum of each '
                        'node\'s per result, server = per (results of both nodes / 2)',
    'reference_cpu_ms_per_frame': 'process CPU time of the reference loop / frames (onnxruntime '
                                  'uses 2 threads, so it exceeds reference_ms)',
    'bytes_per_frame': 'per ensemble, bytes one frame moves across process boundaries: client '
                       '-> server (frame + request inputs), into the model step (between steps), '
                       'server -> client (the ensemble outputs), from the configs\' shapes',
    'triton_steps_ms': 'Triton statistics over the latency phase (the bench\'s and the node\'s '
                       'requests): mean ms per request of each timer, for the ensemble and each '
                       'of its steps; where Triton\'s share of the time goes',
    'node_peak_rss_mb': 'VmHWM of each node process, summed for both',
    'server_peak_rss_mb': f'max over {RSS_SAMPLE_PERIOD_S:g} s samples of the summed VmRSS of '
                          'tritonserver and its children (Python backend stubs), during the case; '
                          'shared-memory regions count once per process mapping them',
}
Stamp = tuple[int, int]
# Triton's own per-model timers (the statistics extension), in the order a request meets them.
STEP_TIMERS = ('queue', 'compute_input', 'compute_infer', 'compute_output')


class BenchError(RuntimeError):
    """The benchmark could not run; the message says what is missing or what died."""


@dataclass(frozen=True)
class NodeKind:
    """What one node executable asks Triton and what it publishes per frame."""

    executable: str
    model: str
    outputs: tuple[str, ...]
    topics: tuple[tuple[str, type], ...]
    request_inputs: Callable[[], Tensors]


def _detection_inputs() -> Tensors:
    specs = specs_by_name(DETECTION)
    return {'SCORE_THRESHOLD': np.array([specs['score_threshold'].default], np.float32),
            'IOU_THRESHOLD': np.array([specs['iou_threshold'].default], np.float32),
            'MAX_DETECTIONS': np.array([specs['max_detections'].default], np.int32)}


def _lane_inputs() -> Tensors:
    return {}


NODES = {
    'detection_node': NodeKind('detection_node',
                               str(specs_by_name(DETECTION)['model_name'].default),
                               ('DETECTIONS', 'NUM_DETECTIONS'),
                               (('detections', Detection2DArray),),
                               _detection_inputs),
    'lane_node': NodeKind('lane_node', str(specs_by_name(LANES)['model_name'].default),
                          LANE_OUTPUTS, (('lanes', PointCloud2), ('drivable_area', Image)),
                          _lane_inputs),
}


@dataclass(frozen=True)
class BenchSettings:
    frames: int = 60
    duration_s: float = 60.0
    cases: tuple[str, ...] = tuple(CASES)
    json_path: Path | None = None
    profile: str | None = None
    triton_url: str | None = None
    model_repository: Path | None = None
    video: Path = DEFAULT_VIDEO

    def __post_init__(self) -> None:
        if self.frames < 1 or self.duration_s <= 0:
            raise BenchError(f'need --frames >= 1 and --duration > 0, got {self.frames} and '
                             f'{self.duration_s:g}')


def parse_cases(text: str) -> tuple[str, ...]:
    """'detection,both' -> ('detection', 'both'); unknown names are an error naming the known."""
    cases = tuple(dict.fromkeys(name.strip() for name in text.split(',') if name.strip()))
    unknown = [name for name in cases if name not in CASES]
    if unknown or not cases:
        raise BenchError(f'unknown cases {unknown or [text]}; choose from {", ".join(CASES)}')
    return cases


# --- statistics -----------------------------------------------------------------------------

def summary(values_ms: Sequence[float]) -> dict[str, float | int | None]:
    if not values_ms:
        return {'median': None, 'p95': None, 'frames': 0}
    return {'median': round(float(np.median(values_ms)), 2),
            'p95': round(float(np.percentile(values_ms, 95)), 2), 'frames': len(values_ms)}


def p95(values_ms: Sequence[float]) -> float | None:
    return round(float(np.percentile(values_ms, 95)), 2) if values_ms else None


def ratio(numerator: float | None, denominator: float | None) -> float | None:
    return round(numerator / denominator, 3) if numerator and denominator else None


# --- processes: CPU time and memory from /proc ----------------------------------------------

class TreeRssPeak:
    """Peak summed VmRSS of a process tree: a tree has no VmHWM, so sample it periodically."""

    def __init__(self, root: int | None) -> None:
        self._root = root
        self.peak_kib = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, name='rss-sampler', daemon=True)

    def _sample(self) -> None:
        while self._root is not None:
            total = sum(status_kib(pid, 'VmRSS') for pid in process_tree(self._root))
            self.peak_kib = max(self.peak_kib, total)
            if self._stop.wait(RSS_SAMPLE_PERIOD_S):
                return

    def __enter__(self) -> 'TreeRssPeak':
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._stop.set()
        self._thread.join()

    @property
    def peak_mb(self) -> float | None:
        return round(self.peak_kib / 1024, 1) if self._root is not None else None


def listening_pid(port: int) -> int | None:
    """The local tritonserver listening on `port`, for --triton-url (its CPU and memory)."""
    inodes = set()
    for table in ('/proc/net/tcp', '/proc/net/tcp6'):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if fields[3] == '0A' and int(fields[1].rsplit(':', 1)[1], 16) == port:
                inodes.add(f'socket:[{fields[9]}]')
    for entry in os.scandir('/proc'):
        if not entry.name.isdigit():
            continue
        try:
            if Path(f'/proc/{entry.name}/comm').read_text().strip() != 'tritonserver':
                continue
            if any(os.readlink(fd.path) in inodes for fd in os.scandir(f'/proc/{entry.name}/fd')):
                return int(entry.name)
        except OSError:
            continue
    return None


def check_alive(node: NodeProcess) -> None:
    if not node.alive():
        raise BenchError(f'{node.name} exited with code {node.process.returncode}:\n'
                         f'{node.output_tail()}')


# --- reference: the repository's processing in this process ---------------------------------

def load_step_module(repository: Path, step: str, module: str) -> ModuleType:
    """Import <step>/1/<module>.py by path: exactly the code Triton's Python backend runs."""
    name = f'triton_perception_bench_{step}_{module}'
    spec = importlib.util.spec_from_file_location(name, repository / step / '1' / f'{module}.py')
    if spec is None or spec.loader is None:
        raise BenchError(f'cannot load {repository / step / "1" / module}.py')
    loaded = importlib.util.module_from_spec(spec)
    sys.modules[name] = loaded
    spec.loader.exec_module(loaded)
    return loaded


def step_config(repository: Path, step: str, config_name: str | None = None) -> Any:
    """A step's config as Triton picks it: configs/<name>.pbtxt if present, else config.pbtxt."""
    path = repository / step / 'configs' / f'{config_name}.pbtxt'
    if config_name is None or not path.is_file():
        path = repository / step / 'config.pbtxt'
    return text_format.Parse(path.read_text(encoding='utf-8'), model_config_pb2.ModelConfig())


def parameters_of(config: Any) -> dict[str, str]:
    return {key: value.string_value for key, value in config.parameters.items()}


def onnx_model(repository: Path,
               step: str) -> Callable[[dict[str, np.ndarray]], dict[str, np.ndarray]]:
    """The CPU profile's model step: its ONNX runner with the configs/cpu.pbtxt settings."""
    config = step_config(repository, step, 'cpu')
    parameters = parameters_of(config)
    runner = load_step_module(repository, step, 'onnx_runner').OnnxRunner(
        str(repository / step / '1' / parameters['onnx_file']),
        intra_op_threads=int(parameters['intra_op_threads']),
        inter_op_threads=int(parameters['inter_op_threads']),
        allow_spinning=parameters['allow_spinning'].lower() == 'true')
    runner.warm_up()
    output_names = [tensor.name for tensor in config.output]

    def run(inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        return dict(zip(output_names, runner.run(inputs, output_names)))
    return run


def detection_reference(repository: Path) -> Callable[[np.ndarray], Any]:
    """yolov5_preprocess -> yolov5_model (the served graph), with the node's default thresholds."""
    detection_inputs = load_step_module(repository, 'yolov5_preprocess',
                                        'preprocessing').detection_inputs
    parameters = parameters_of(step_config(repository, 'yolov5_preprocess'))
    width, height = int(parameters['input_width']), int(parameters['input_height'])
    model = onnx_model(repository, 'yolov5_model')
    thresholds = [value.item() for value in _detection_inputs().values()]
    names = ('images', 'letterbox', 'score_threshold', 'iou_threshold', 'max_detections')

    def detect(rgb: np.ndarray) -> Any:
        inputs = detection_inputs(rgb, width, height, *thresholds,
                                  parameters['arg_most_detections'])
        outputs = model(dict(zip(names, inputs)))
        return check_detections({'DETECTIONS': outputs['detections'],
                                 'NUM_DETECTIONS': outputs['num_detections']})
    return detect


def lane_reference(repository: Path) -> Callable[[np.ndarray], Any]:
    """lane_preprocess -> lane_model (the served graph) -> the package's lane geometry, as
    lane_node runs it, with the node's default lane length."""
    resize_frame = load_step_module(repository, 'lane_preprocess', 'preprocessing').resize_frame
    size = parameters_of(step_config(repository, 'lane_preprocess'))
    width, height = int(size['input_width']), int(size['input_height'])
    model = onnx_model(repository, 'lane_model')
    min_lane_length = float(specs_by_name(LANES)['min_lane_length'].default)

    def detect(rgb: np.ndarray) -> Any:
        (tensor,) = resize_frame(rgb, width, height)
        maps = model({'images': tensor})
        return lane_postprocess(maps['lane_probability'], maps['drivable_margin'],
                                rgb.shape[:2], NUM_POINTS, min_lane_length)
    return detect


REFERENCES = {'detection_node': detection_reference, 'lane_node': lane_reference}


# --- Triton: the node's requests, and Triton's own timers -----------------------------------

def inference_statistics(url: str) -> dict[str, dict[str, int]]:
    """Per model: requests so far and the nanoseconds summed in each of STEP_TIMERS."""
    with grpcclient.InferenceServerClient(url) as client:
        statistics = client.get_inference_statistics(as_json=True)
    return {model['name']: {
        'requests': int(model.get('inference_count', 0)),
        **{timer: int(model.get('inference_stats', {}).get(timer, {}).get('ns', 0))
           for timer in STEP_TIMERS}} for model in statistics.get('model_stats', [])}


def step_breakdown(before: dict[str, dict[str, int]],
                   after: dict[str, dict[str, int]]) -> dict[str, dict[str, float | int]]:
    """Mean ms per request of each timer, for every model that served requests in between."""
    steps: dict[str, dict[str, float | int]] = {}
    for name, totals in sorted(after.items()):
        earlier = before.get(name, {})
        requests = totals['requests'] - earlier.get('requests', 0)
        if requests > 0:
            steps[name] = {'requests': requests, **{
                f'{timer}_ms': round((totals[timer] - earlier.get(timer, 0)) / requests / 1e6, 2)
                for timer in STEP_TIMERS}}
    return steps


class EnsembleRequests:
    """The nodes' requests for one frame, concurrently as separate node processes send them."""

    def __init__(self, url: str, kinds: Sequence[NodeKind]) -> None:
        self._kinds = kinds
        self._clients = [grpcclient.InferenceServerClient(url) for _ in kinds]
        self._pool = ThreadPoolExecutor(max_workers=len(kinds), thread_name_prefix='bench-grpc')

    def _request(self, client: grpcclient.InferenceServerClient, kind: NodeKind,
                 rgb: np.ndarray) -> dict[str, np.ndarray]:
        result = client.infer(kind.model, infer_inputs({'IMAGE': rgb, **kind.request_inputs()}),
                              outputs=[grpcclient.InferRequestedOutput(name)
                                       for name in kind.outputs],
                              client_timeout=REQUEST_TIMEOUT_S)
        return {name: result.as_numpy(name) for name in kind.outputs}

    def __call__(self, rgb: np.ndarray) -> None:
        if len(self._kinds) == 1:
            self._request(self._clients[0], self._kinds[0], rgb)
            return
        for future in [self._pool.submit(self._request, client, kind, rgb)
                       for client, kind in zip(self._clients, self._kinds)]:
            future.result()

    def close(self) -> None:
        self._pool.shutdown()
        for client in self._clients:
            client.close()


# --- ROS: frames out, results in ------------------------------------------------------------

def stamp_of(message: Any) -> Stamp:
    return message.header.stamp.sec, message.header.stamp.nanosec


class ResultTracker:
    """Send and arrival times per frame stamp; a frame is complete once every output arrived."""

    def __init__(self, outputs: dict[str, tuple[str, ...]]) -> None:
        self._outputs = outputs  # node -> its result topics
        self._condition = threading.Condition()
        self.sent: dict[Stamp, float] = {}
        self._arrived: dict[Stamp, dict[str, float]] = defaultdict(dict)

    def send(self, stamp: Stamp) -> None:
        with self._condition:
            self.sent[stamp] = time.monotonic()

    def arrive(self, topic: str, stamp: Stamp) -> None:
        now = time.monotonic()
        with self._condition:
            if stamp in self.sent:
                self._arrived[stamp][topic] = now
                self._condition.notify_all()

    def _done_at(self, stamp: Stamp, nodes: Sequence[str]) -> float | None:
        arrived = self._arrived.get(stamp, {})
        topics = [topic for node in nodes for topic in self._outputs[node]]
        return max(arrived[topic] for topic in topics) if all(
            topic in arrived for topic in topics) else None

    def latency_ms(self, stamp: Stamp, nodes: Sequence[str] | None = None) -> float | None:
        """Send -> last output of `nodes` (default all), or None while incomplete."""
        with self._condition:
            done = self._done_at(stamp, nodes or tuple(self._outputs))
            return (done - self.sent[stamp]) * 1e3 if done is not None else None

    def wait(self, stamp: Stamp, timeout_s: float) -> float | None:
        deadline = time.monotonic() + timeout_s
        with self._condition:
            while (latency := self.latency_ms(stamp)) is None:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return None
                self._condition.wait(remaining)
            return latency


class RosSide:
    """The benchmark's participant in a context of its own, spinning in a background thread."""

    def __init__(self) -> None:
        self.context = Context()
        rclpy.init(context=self.context, signal_handler_options=SignalHandlerOptions.NO)
        self.node = rclpy.create_node('triton_perception_bench', context=self.context)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self._thread = threading.Thread(target=self._spin, name='bench-executor', daemon=True)
        self._thread.start()

    def _spin(self) -> None:
        try:
            self.executor.spin()
        except Exception:  # noqa: BLE001 (the context was shut down under the executor)
            pass

    def close(self) -> None:
        self.executor.shutdown(timeout_sec=1.0)
        self.node.destroy_node()
        rclpy.try_shutdown(context=self.context)
        self._thread.join(timeout=2.0)


class CaseWiring:
    """One case's frame publisher, result subscriptions and readiness, in its own namespace."""

    def __init__(self, ros: RosSide, namespace: str, kinds: Sequence[NodeKind]) -> None:
        self._node = ros.node
        self.kinds = kinds
        self.tracker = ResultTracker({kind.executable: tuple(topic for topic, _ in kind.topics)
                                      for kind in kinds})
        self.publisher = ros.node.create_publisher(Image, f'{namespace}/image', FRAME_QOS)
        self.subscriptions = [
            ros.node.create_subscription(
                message_type, f'{namespace}/{topic}',
                lambda message, topic=topic: self.tracker.arrive(topic, stamp_of(message)),
                RESULTS_READER_QOS)
            for kind in kinds for topic, message_type in kind.topics]
        self._status_names = {status_name(f'{namespace}/{kind.executable}'): kind.executable
                              for kind in kinds}
        self._ready: set[str] = set()
        self.statuses: dict[str, NodeStatus] = {}
        self.subscriptions.append(ros.node.create_subscription(
            DiagnosticArray, '/diagnostics', self._on_diagnostics, DIAGNOSTICS_QOS))
        self._last_stamp_ns = 0

    def _on_diagnostics(self, message: DiagnosticArray) -> None:
        for status in message.status:
            if status.name in self._status_names:
                node_status = NodeStatus.from_status(status)
                self.statuses[self._status_names[status.name]] = node_status
                if node_status.triton_ready:
                    self._ready.add(status.name)

    def ready(self) -> bool:
        """Every node matched our publisher and its results reach us, and says Triton is ready."""
        return (self.publisher.get_subscription_count() >= len(self.kinds)
                and all(subscription.get_publisher_count() >= 1
                        for subscription in self.subscriptions)
                and self._ready == set(self._status_names))

    def publish(self, message: Image) -> Stamp:
        """Stamp the frame uniquely (wall clock, like a camera) and send it."""
        stamp_ns = max(time.time_ns(), self._last_stamp_ns + 1)
        self._last_stamp_ns = stamp_ns
        message.header.stamp.sec, message.header.stamp.nanosec = divmod(stamp_ns, 1_000_000_000)
        stamp = stamp_of(message)
        self.tracker.send(stamp)
        self.publisher.publish(message)
        return stamp

    def close(self) -> None:
        for subscription in self.subscriptions:
            self._node.destroy_subscription(subscription)
        self._node.destroy_publisher(self.publisher)


# --- the run --------------------------------------------------------------------------------

def ros_environment(ros_home: Path) -> dict[str, str]:
    """Like the tests: ROS traffic on this host only, a domain of our own, logs in a temp dir."""
    environment = {
        'ROS_DOMAIN_ID': os.environ.get('ROS_DOMAIN_ID') or str(random.randint(150, 199)),
        'ROS_AUTOMATIC_DISCOVERY_RANGE': 'LOCALHOST',
        'ROS_HOME': str(ros_home), 'ROS_LOG_DIR': str(ros_home / 'log'),
    }
    environment.update(dds_profile_environment())
    return environment


def read_clip(video: Path) -> list[Image]:
    """Every frame of the clip as an rgb8 Image, built once so publishing costs no conversion."""
    capture = cv2.VideoCapture(str(video))
    messages = []
    while True:
        ok, bgr = capture.read()
        if not ok:
            break
        rgb = cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB)
        message = Image(height=rgb.shape[0], width=rgb.shape[1], encoding='rgb8',
                        is_bigendian=0, step=rgb.shape[1] * 3, data=array.array('B', rgb.tobytes()))
        message.header.frame_id = 'camera'
        messages.append(message)
    capture.release()
    if not messages:
        raise BenchError(f'no frames could be decoded from {video}; pass --video with a road clip')
    return messages


def rgb_view(message: Image) -> np.ndarray:
    return np.frombuffer(message.data, dtype=np.uint8).reshape(message.height, message.width, 3)


def cpu_model() -> str:
    """x86 names the CPU in /proc/cpuinfo; a Jetson names the board in the device tree."""
    try:
        for line in Path('/proc/cpuinfo').read_text().splitlines():
            if line.startswith('model name'):
                return line.split(':', 1)[1].strip()
        return Path('/proc/device-tree/model').read_text().strip('\0\n ')
    except OSError:
        return platform.processor() or platform.machine()


def source_version() -> str | None:
    """The checkout's commit, '-dirty' with local changes: the figures belong to that code."""
    if not (SOURCE_ROOT / '.git').exists():
        return None
    try:
        completed = subprocess.run(['git', '-C', str(SOURCE_ROOT), 'describe', '--always',
                                    '--dirty'], capture_output=True, text=True, check=False)
    except OSError:
        return None
    return completed.stdout.strip() or None


def machine_description(profile: str, triton_version: str) -> dict[str, Any]:
    memory_kib = next((int(line.split()[1]) for line in
                       Path('/proc/meminfo').read_text().splitlines()
                       if line.startswith('MemTotal:')), 0)
    return {
        'cpu_model': cpu_model(), 'architecture': platform.machine(),
        'cores': os.cpu_count(), 'usable_cores': len(os.sched_getaffinity(0)),
        'memory_gb': round(memory_kib / 1024 ** 2, 1), 'kernel': platform.release(),
        'python': platform.python_version(), 'onnxruntime': onnxruntime.__version__,
        'triton': triton_version, 'profile': profile,
        'load_average_start': [round(value, 2) for value in os.getloadavg()],
    }


class Benchmark:
    """One run: the server (started or found), the clip, the ROS side and the cases."""

    def __init__(self, settings: BenchSettings, repository: Path, triton_url: str,
                 server_pid: int | None, ros: RosSide, messages: list[Image], log_directory: Path,
                 log: Callable[[str], None]) -> None:
        self.settings = settings
        self.repository = repository
        self.triton_url = triton_url
        self.server_pid = server_pid
        self.ros = ros
        self.messages = messages
        self.log_directory = log_directory
        self.log = log
        count = WARMUP_FRAMES + settings.frames
        self.measured = [messages[index % len(messages)] for index in range(count)]

    def run_case(self, case: str) -> dict[str, Any]:
        kinds = [NODES[name] for name in CASES[case]]
        load_before = os.getloadavg()[0]
        with TreeRssPeak(self.server_pid) as server_rss:
            figures = self.ros_phases(case, kinds)
        reference = figures['reference_ms']
        capacity = 1000.0 / reference['median'] if reference['median'] else None
        return {
            'nodes_run': [kind.executable for kind in kinds],
            'reference_ms': reference,
            'reference_cpu_ms_per_frame': figures['reference_cpu_ms_per_frame'],
            'triton_ms': figures['triton_ms'],
            'ros_e2e_ms': figures['ros_e2e_ms'],
            'triton_steps_ms': figures['triton_steps_ms'],
            'bytes_per_frame': {kind.model: transfer_bytes(
                self.repository, kind.model, rgb_view(self.measured[0]),
                sum(tensor.nbytes for tensor in kind.request_inputs().values()), step_config)
                for kind in kinds},
            'ratio': ratio(figures['ros_e2e_ms']['median'], reference['median']),
            'capacity_fps': round(capacity, 2) if capacity else None,
            'throughput_fps': figures['throughput_fps'],
            'throughput_ratio': ratio(figures['throughput_fps'], capacity),
            'p95_first_10s_ms': figures['p95_first_10s_ms'],
            'p95_last_10s_ms': figures['p95_last_10s_ms'],
            'node_cpu_ms_per_frame': figures['node_cpu_ms_per_frame'],
            'server_cpu_ms_per_frame': figures['server_cpu_ms_per_frame'],
            'node_peak_rss_mb': figures['node_peak_rss_mb'],
            'server_peak_rss_mb': server_rss.peak_mb,
            'throughput': figures['throughput'],
            'per_node': figures['per_node'],
            'load_average_1min': [round(load_before, 2), round(os.getloadavg()[0], 2)],
        }

    def ros_phases(self, case: str, kinds: Sequence[NodeKind]) -> dict[str, Any]:
        namespace = f'/triton_perception_bench_{os.getpid()}/{case}'
        nodes: list[NodeProcess] = []
        wiring = CaseWiring(self.ros, namespace, kinds)
        try:
            for kind in kinds:
                nodes.append(NodeProcess(
                    kind.executable, ros_arguments({'triton_url': self.triton_url},
                                                   namespace=namespace), self.log_directory))
            self.log(f'{case}: started {", ".join(node.name for node in nodes)} in {namespace}; '
                     'waiting for discovery and Triton readiness')
            self.wait_until_ready(wiring, nodes)
            figures = self.latencies(case, kinds, wiring, nodes)
            figures.update(self.throughput(case, wiring, nodes))
            figures['node_peak_rss_mb'] = round(sum(
                figures['per_node'][node.name]['peak_rss_mb'] for node in nodes), 1)
            return figures
        finally:
            for node in nodes:
                code = node.stop()
                if code not in (0, None):
                    self.log(f'{node.name} exited with code {code}:\n{node.output_tail()}')
            wiring.close()

    def latencies(self, case: str, kinds: Sequence[NodeKind], wiring: CaseWiring,
                  nodes: Sequence[NodeProcess]) -> dict[str, Any]:
        """Each frame through the reference, Triton and ROS in turn, one at a time: on a
        shared machine, load that comes and goes then weighs on all three alike."""
        self.log(f'{case}: latency, {self.settings.frames} frames (after {WARMUP_FRAMES} '
                 'warm-up), each through the reference (in-process, no ROS, no Triton), '
                 'Triton gRPC and ROS in turn')
        pipelines = [REFERENCES[kind.executable](self.repository) for kind in kinds]

        def reference(rgb: np.ndarray) -> None:
            """For `both`, both sessions live at once, as in the server, and run in turn."""
            for pipeline in pipelines:
                pipeline(rgb)
        requests = EnsembleRequests(self.triton_url, kinds)
        statistics_before = inference_statistics(self.triton_url)
        times: dict[str, list[float]] = defaultdict(list)
        cpu_ms: dict[str, float] = defaultdict(float)
        lost = 0
        try:
            for index, message in enumerate(self.measured):
                rgb = rgb_view(message)
                for name, process in (('reference', reference), ('triton', requests)):
                    cpu_start, start = time.process_time(), time.perf_counter()
                    process(rgb)
                    if index >= WARMUP_FRAMES:
                        times[name].append((time.perf_counter() - start) * 1e3)
                        cpu_ms[name] += (time.process_time() - cpu_start) * 1e3
                latency = wiring.tracker.wait(wiring.publish(message), FRAME_TIMEOUT_S)
                if latency is None:
                    for node in nodes:
                        check_alive(node)
                    lost += index >= WARMUP_FRAMES
                elif index >= WARMUP_FRAMES:
                    times['ros'].append(latency)
        finally:
            requests.close()
        frames = self.settings.frames
        figures = {
            'reference_ms': summary(times['reference']),
            'reference_cpu_ms_per_frame': round(cpu_ms['reference'] / frames, 2),
            'triton_ms': {**summary(times['triton']),
                          'client_cpu_ms_per_frame': round(cpu_ms['triton'] / frames, 2)},
            'ros_e2e_ms': {**summary(times['ros']), 'lost': lost},
            'triton_steps_ms': step_breakdown(statistics_before,
                                              inference_statistics(self.triton_url)),
        }
        self.log(f'{case}: median (p95) reference {figures["reference_ms"]["median"]} '
                 f'({figures["reference_ms"]["p95"]}) ms, Triton {figures["triton_ms"]["median"]} '
                 f'({figures["triton_ms"]["p95"]}) ms, ROS {figures["ros_e2e_ms"]["median"]} '
                 f'({figures["ros_e2e_ms"]["p95"]}) ms'
                 + (f', {lost} frame(s) without a result' if lost else ''))
        return figures

    def wait_until_ready(self, wiring: CaseWiring, nodes: Sequence[NodeProcess]) -> None:
        """Poll matching and /diagnostics (never a fixed sleep); fail early if a node died."""
        deadline = time.monotonic() + READY_TIMEOUT_S
        while not wiring.ready():
            for node in nodes:
                check_alive(node)
            if time.monotonic() > deadline:
                raise BenchError(f'nodes not ready within {READY_TIMEOUT_S:g} s (discovery or '
                                 'Triton):\n' + '\n'.join(node.output_tail() for node in nodes))
            time.sleep(0.02)

    def throughput(self, case: str, wiring: CaseWiring,
                   nodes: Sequence[NodeProcess]) -> dict[str, Any]:
        duration_s = self.settings.duration_s
        self.log(f'{case}: throughput, clip looped at {RATE_HZ:g} Hz for {duration_s:g} s')
        node_cpu_before = {node.name: tree_cpu_s(node.pid) for node in nodes}
        server_cpu_before = tree_cpu_s(self.server_pid) if self.server_pid else None
        bench_cpu_before = time.process_time()
        stamps: list[Stamp] = []
        start = time.monotonic()
        next_progress = start + PROGRESS_PERIOD_S
        while (target := start + len(stamps) / RATE_HZ) < start + duration_s:
            if (delay := target - time.monotonic()) > 0:
                time.sleep(delay)  # pacing at camera rate
            stamps.append(wiring.publish(self.messages[len(stamps) % len(self.messages)]))
            if time.monotonic() >= next_progress:
                done = sum(wiring.tracker.latency_ms(stamp) is not None for stamp in stamps)
                self.log(f'{case}: {time.monotonic() - start:.0f}/{duration_s:g} s, '
                         f'{len(stamps)} published, {done} with every result')
                next_progress += PROGRESS_PERIOD_S
            for node in nodes:
                check_alive(node)
        wiring.tracker.wait(stamps[-1], DRAIN_TIMEOUT_S)
        node_cpu = {node.name: tree_cpu_s(node.pid) - node_cpu_before[node.name]
                    for node in nodes}
        server_cpu = (tree_cpu_s(self.server_pid) - server_cpu_before
                      if server_cpu_before is not None else None)
        bench_cpu = time.process_time() - bench_cpu_before

        tracker = wiring.tracker
        # The nodes drop frames independently (latest-frame slots), so with both nodes few
        # frames get both results even when both keep up: count and time each node's results.
        latencies = {node.name: [(tracker.sent[stamp] - start, latency) for stamp in stamps
                                 if (latency := tracker.latency_ms(stamp, (node.name,)))
                                 is not None] for node in nodes}
        counts = {name: len(pairs) for name, pairs in latencies.items()}
        pooled = [pair for pairs in latencies.values() for pair in pairs]
        frame_equivalents = sum(counts.values()) / len(nodes)
        per_node = {node.name: {
            'results': counts[node.name],
            'throughput_fps': round(counts[node.name] / duration_s, 2),
            'cpu_ms_per_frame': (round(node_cpu[node.name] * 1e3 / counts[node.name], 2)
                                 if counts[node.name] else None),
            'peak_rss_mb': round(status_kib(node.pid, 'VmHWM') / 1024, 1),
            # From the node's own /diagnostics (cumulative over the case's phases).
            'lost_before_node': wiring.statuses.get(node.name, NodeStatus({})).count(
                'lost_before_node'),
        } for node in nodes}
        figures = {
            'throughput_fps': round(min(counts.values()) / duration_s, 2),
            'p95_first_10s_ms': p95([latency for offset, latency in pooled if offset < WINDOW_S]),
            'p95_last_10s_ms': p95([latency for offset, latency in pooled
                                    if offset >= duration_s - WINDOW_S]),
            'node_cpu_ms_per_frame': (round(sum(node['cpu_ms_per_frame']
                                                for node in per_node.values()), 2)
                                      if all(counts.values()) else None),
            'server_cpu_ms_per_frame': (round(server_cpu * 1e3 / frame_equivalents, 2)
                                        if frame_equivalents and server_cpu is not None
                                        else None),
            'throughput': {
                'duration_s': duration_s, 'rate_hz': RATE_HZ, 'published': len(stamps),
                'results_per_node': counts,
                'frames_with_every_result': sum(tracker.latency_ms(stamp) is not None
                                                for stamp in stamps),
                'latency_ms': summary([latency for _, latency in pooled]),
                'bench_process_cpu_ms_per_frame': round(bench_cpu * 1e3 / len(stamps), 2),
            },
            'per_node': per_node,
        }
        self.log(f'{case}: results {counts} of {len(stamps)} frames '
                 f'({figures["throughput_fps"]} fps), p95 first/last {WINDOW_S:g} s '
                 f'{figures["p95_first_10s_ms"]}/{figures["p95_last_10s_ms"]} ms')
        return figures


def markdown_table(report: dict[str, Any]) -> str:
    def cell(value: Any) -> str:
        return '–' if value is None else f'{value:g}' if isinstance(value, float) else str(value)

    header = ('| case | reference ms | Triton ms (median / p95) | ROS e2e ms (median / p95) | '
              'ratio | capacity fps | throughput fps | throughput ratio | '
              'p95 first / last 10 s ms | node CPU ms/frame | server CPU ms/frame | '
              'node peak RSS MB | server peak RSS MB |')
    rows = [header, '|' + ' --- |' * header.count(' | ') + ' --- |']
    for case in CASES:
        if case not in report:
            continue
        figures = report[case]
        rows.append(' | '.join([
            f'| {case}', cell(figures['reference_ms']['median']),
            f"{cell(figures['triton_ms']['median'])} / {cell(figures['triton_ms']['p95'])}",
            f"{cell(figures['ros_e2e_ms']['median'])} / {cell(figures['ros_e2e_ms']['p95'])}",
            cell(figures['ratio']), cell(figures['capacity_fps']), cell(figures['throughput_fps']),
            cell(figures['throughput_ratio']),
            f"{cell(figures['p95_first_10s_ms'])} / {cell(figures['p95_last_10s_ms'])}",
            cell(figures['node_cpu_ms_per_frame']), cell(figures['server_cpu_ms_per_frame']),
            cell(figures['node_peak_rss_mb']), cell(figures['server_peak_rss_mb'])]) + ' |')
    return '\n'.join(rows)


def steps_table(report: dict[str, Any]) -> str:
    """Where Triton's share goes: each ensemble and step, mean ms per request per timer."""
    header = ('| case | model | requests | '
              + ' | '.join(f'{timer} ms' for timer in STEP_TIMERS) + ' |')
    rows = [header, '|' + ' --- |' * (len(STEP_TIMERS) + 3)]
    for case in CASES:
        for model, figures in report.get(case, {}).get('triton_steps_ms', {}).items():
            rows.append(f'| {case} | {model} | {figures["requests"]} | ' + ' | '.join(
                f'{figures[f"{timer}_ms"]:g}' for timer in STEP_TIMERS) + ' |')
    return '\n'.join(rows)


def write_report(report: dict[str, Any], path: Path | None) -> None:
    if path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(report, indent=2) + '\n', encoding='utf-8')


def run_bench(settings: BenchSettings, log: Callable[[str], None]) -> dict[str, Any]:
    """Measure every case; the JSON is rewritten after each case so an interrupted run keeps
    what it measured. Every process started here is stopped before returning or raising."""
    repository = (settings.model_repository or default_model_repository()).resolve()
    problems = check_models(repository)
    if problems:
        raise BenchError('; '.join(problems))
    if not settings.video.is_file():
        raise BenchError(f'video {settings.video} not found; pass --video')
    temporary = Path(tempfile.mkdtemp(prefix='triton_perception-bench-'))
    os.environ.update(ros_environment(temporary / 'ros'))
    server: TritonServer | None = None
    ros: RosSide | None = None
    try:
        log(f'reading {settings.video}')
        messages = read_clip(settings.video)
        if settings.triton_url:
            url = settings.triton_url
            if not wait_for_remote_models(url, tuple(kind.model for kind in NODES.values()),
                                          threading.Event(), log, READY_TIMEOUT_S):
                raise BenchError(f'Triton at {url} does not serve the models')
            host, port = url.rsplit(':', 1)
            server_pid = listening_pid(int(port)) if is_loopback(host.strip('[]')) else None
            log(f'Triton at {url}: ' + (f'tritonserver pid {server_pid}' if server_pid else
                                        'not a local tritonserver; no server CPU/memory figures'))
            profile = settings.profile or 'unknown (external server)'
        else:
            http_port, grpc_port, metrics_port = free_ports(3)
            server = TritonServer(ServerConfig(
                model_repository=repository, profile=settings.profile or 'cpu',
                http_port=http_port, grpc_port=grpc_port, metrics_port=metrics_port),
                log=log, show_server_log=False)
            server.start()
            server.wait_until_ready()
            url, server_pid, profile = server.grpc_url, server.pid, server.profile
        with grpcclient.InferenceServerClient(url) as client:
            triton_version = client.get_server_metadata().version
        ros = RosSide()
        log(f'ROS_DOMAIN_ID {os.environ["ROS_DOMAIN_ID"]}, load average '
            f'{" ".join(f"{value:.2f}" for value in os.getloadavg())}')
        report: dict[str, Any] = {
            'machine': machine_description(profile, triton_version),
            'source': source_version(),
            'settings': {'frames': settings.frames, 'warmup_frames': WARMUP_FRAMES,
                         'duration_s': settings.duration_s, 'rate_hz': RATE_HZ,
                         'video': str(settings.video), 'frame_size': [messages[0].width,
                                                                      messages[0].height],
                         'cases': list(settings.cases), 'triton_url': url,
                         'triton_started_by_bench': server is not None},
            'method': METHOD,
        }
        benchmark = Benchmark(settings, repository, url, server_pid, ros, messages,
                              temporary, log)
        for case in settings.cases:
            report[case] = benchmark.run_case(case)
            report['machine']['load_average_end'] = [round(value, 2)
                                                     for value in os.getloadavg()]
            write_report(report, settings.json_path)
        return report
    finally:
        if ros:
            ros.close()
        if server:
            server.stop()
        shutil.rmtree(temporary, ignore_errors=True)
