"""
Replay a camera bag through the pipeline, record its outputs, and report (or compare) figures.

The regression workflow for users' own drives: `bag evaluate drive/ --output base/` once, then
`bag evaluate drive/ --output new/ --expected base/report.json` after a change; the second run
fails when a figure moved beyond its stated tolerance.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from pathlib import Path
import tempfile
import time
from typing import Callable, TypedDict

from rosbags.highlevel import AnyReader, AnyReaderError
import yaml

from triton_perception.bag import (BagError, BagRecorder, CAMERA_TYPES, DEFAULT_TOPIC,
                                   frames_before_keyframe, Lockstep, play_bag, typestore,
                                   VIDEO_TYPES)
from triton_perception.evaluation.accuracy_report import (accuracy_regressions, ACCURACY_TOLERANCE,
                                                          add_accuracy, Scoring)
from triton_perception.evaluation.comparison import (compare_evaluation, CompareOptions,
                                                     frame_comparison, report_file)
from triton_perception.evaluation.figures import (analyse_outputs, detection_labels, node_figures,
                                                  NODES, regressions)
from triton_perception.evaluation.markdown_report import write_report
from triton_perception.evaluation.metrics import (CameraHealthFigures, read_report, ReplayReport,
                                                  ServedModels)
from triton_perception.evaluation.replay_session import (DiagnosticsWatch, NAMESPACE,
                                                         pipeline_session)
from triton_perception.frames import camera_info_sibling, NodeStatus
from triton_perception.parameters import RAW, TRANSPORTS
from triton_perception.pipeline import pipeline_plan, PipelinePlan
from triton_perception.qos import TF_STATIC_QOS
from triton_perception.system import config_file

TIMINGS = ('lockstep', 'recorded')
# Each node's result topic: a frame is answered once its result, with the frame's stamp, arrived.
RESULT_TOPICS = {'detection_node': f'{NAMESPACE}/detections', 'lane_node': f'{NAMESPACE}/lanes'}
OUTPUT_TYPES = {'detections': 'vision_msgs/msg/Detection2DArray',
                'lanes': 'sensor_msgs/msg/PointCloud2',
                'lanes/ground': 'sensor_msgs/msg/PointCloud2',
                'diagnostics': 'diagnostic_msgs/msg/DiagnosticArray'}
MASK_TYPE = 'sensor_msgs/msg/Image'
SETTLE_TIMEOUT_S = 60.0
# The nodes start only once tritonserver has every model ready (up to its ready_timeout_s,
# 600 s, for engines that load slowly); the rest leaves the node processes time to start.
SUBSCRIBERS_TIMEOUT_S = 900.0


@dataclass(frozen=True, kw_only=True)
class EvaluationSettings:
    """
    What `bag evaluate` replays and against what.

    `topic` is the image topic (None: the bag's only one); `timing` 'lockstep' (each frame once
    the nodes answered the one before: every frame answered, at any load) or 'recorded' (the
    bag's timing scaled by `rate`: drops and latency as on a robot), None for lockstep when
    labels or criteria are given, else recorded;
    `triton_url` a running Triton to use ('' starts one with `profile`), `params_file` the
    nodes' parameters (default config/params.yaml), `record_masks` also records the drivable-area
    masks, and `expected` is an earlier report.json to compare the figures with.
    """

    bag: Path
    output: Path
    topic: str | None = None
    rate: float = 1.0
    timing: str | None = None
    triton_url: str = ''
    profile: str = 'auto'
    precision: str = 'fp'                     # or 'int8': the graphs of `models quantize`
    model_repository: Path | None = None      # None: the package's
    params_file: Path | None = None
    record_masks: bool = False
    expected: Path | None = None
    process_layout: str = 'single'  # or 'per_node': the launch argument of the same name
    # COCO, MOTChallenge, CULane or TuSimple (evaluation/accuracy.py)
    labels: tuple[Path, ...] = ()
    criteria: Path | None = None       # floors and per-frame thresholds (read_criteria)
    lanes_scored: str = 'all'          # or 'ego': the ego lane's two lines only
    lane_rows_from_labels: bool = False
    sparse_tracks: bool = False
    # With `expected`: the runs paired frame by frame (evaluation/comparison/run_comparison.py).
    change_thresholds: tuple[tuple[str, float], ...] = ()  # (figure, threshold) over defaults
    export_changed: tuple[int, Path] | None = None         # the N most changed frames -> DIR

    def timing_mode(self) -> str:
        """Return the timing the replay runs with: 'lockstep' or 'recorded'."""
        if self.timing is not None:
            if self.timing not in TIMINGS:
                raise BagError(f"timing '{self.timing}' is not one of {', '.join(TIMINGS)}")
            return self.timing
        return 'lockstep' if self.labels or self.criteria else 'recorded'

    def scoring(self) -> Scoring:
        """Return what scores this evaluation's outputs: labels, criteria and options."""
        return Scoring(self.labels, self.criteria, self.params_file, self.lanes_scored,
                       self.lane_rows_from_labels, self.sparse_tracks)


class ReplayOptions(TypedDict, total=False):
    """The EvaluationSettings that replay_test takes as keywords: all but its own arguments."""

    topic: str | None
    rate: float
    timing: str | None
    profile: str
    precision: str
    model_repository: Path | None
    params_file: Path | None
    record_masks: bool
    expected: Path | None
    process_layout: str
    lanes_scored: str
    lane_rows_from_labels: bool
    sparse_tracks: bool
    change_thresholds: tuple[tuple[str, float], ...]
    export_changed: tuple[int, Path] | None


def camera_topic(bag: Path, topic: str | None) -> tuple[str, int]:
    """Return the bag's image topic (the only one, unless named) and its message count."""
    try:
        reader = AnyReader([Path(bag)], default_typestore=typestore())
    except (FileNotFoundError, AnyReaderError) as error:
        raise BagError(f'cannot open bag {bag}: {error}') from None
    with reader:
        images = {c.topic: c.msgcount for c in reader.connections if c.msgtype in CAMERA_TYPES}
    if topic:
        if topic not in images:
            raise BagError(f'{bag} has no image topic {topic} (image topics: '
                           f'{", ".join(images) or "none"})')
        return topic, images[topic]
    if len(images) != 1:
        raise BagError(f'{bag} has {len(images)} image topics ({", ".join(images) or "none"}); '
                       'choose one with --topic')
    return next(iter(images.items()))


def default_camera_topic(bag: Path) -> str:
    """Return DEFAULT_TOPIC if the bag has it, else its only camera topic (image or video)."""
    try:
        return camera_topic(bag, DEFAULT_TOPIC)[0]
    except BagError:
        return camera_topic(bag, None)[0]


def camera_input(bag: Path, topic: str) -> tuple[str, str]:
    """
    Return the nodes' image topic and input_transport for the bag's camera `topic`.

    A video topic is image_transport's `<image>/foxglove` or `<image>/ffmpeg`; the nodes take
    `<image>` with that transport. Raises BagError for a video topic named otherwise.
    """
    with AnyReader([Path(bag)], default_typestore=typestore()) as reader:
        msgtype = next(c.msgtype for c in reader.connections if c.topic == topic)
    if msgtype not in VIDEO_TYPES:
        return topic, RAW.name
    video = TRANSPORTS[VIDEO_TYPES[msgtype]]
    image_topic, _separator, name = topic.rpartition('/')
    if name != video.subtopic or not image_topic:
        raise BagError(f'{topic} carries {msgtype}, which the nodes take on '
                       f'<image>/{video.subtopic} (image_transport): rename the topic to end in '
                       f'/{video.subtopic}')
    return image_topic, video.name


def geometry_messages(bag: Path, image_topic: str) -> tuple[str | None, list[bytes]]:
    """
    Find the bag's CameraInfo topic (or None) and its /tf_static messages (serialized).

    The CameraInfo topic is the one beside the image topic; with both, the ground outputs can be
    evaluated when the bag holds the camera's geometry.
    """
    info_topic = camera_info_sibling(image_topic)
    with AnyReader([Path(bag)], default_typestore=typestore()) as reader:
        has_info = any(c.topic == info_topic and c.msgtype == 'sensor_msgs/msg/CameraInfo'
                       for c in reader.connections)
        static = [c for c in reader.connections if c.topic == '/tf_static']
        # An empty connection list would read every message of the bag.
        transforms = ([raw for _c, _stamp, raw in reader.messages(connections=static)]
                      if static else [])
    return (info_topic if has_info else None), transforms


class NoAliasDumper(yaml.SafeDumper):
    """
    A YAML dumper that writes no aliases.

    rcl's parameter-file parser rejects YAML aliases ("Will not support aliasing"), which PyYAML
    writes for values shared between nodes (e.g. one camera_pose list for both).
    """

    def ignore_aliases(self, data: object) -> bool:
        """Write every value out in full, never as an alias."""
        return True


# In lockstep a request may take this long before it counts as failed: a frame's result must be
# the model's, not a verdict on how busy the machine was (the robot's own timeout stays).
LOCKSTEP_REQUEST_TIMEOUT_S = 60.0


def evaluation_params_file(base: Path | None, directory: Path, lockstep: bool = False) -> Path:
    """
    Return the user's parameters, with a reliable, deep image subscription.

    In a replay every recorded frame must reach the nodes, so that each one is accounted for by
    them; in lockstep every request also waits up to LOCKSTEP_REQUEST_TIMEOUT_S for its answer.
    """
    params = yaml.safe_load((base or config_file('params.yaml')).read_text(encoding='utf-8'))
    for node in NODES:
        section = params.setdefault(f'/**/{node}', {}).setdefault('ros__parameters', {})
        section.update(qos_reliability='reliable', qos_depth=20)
        if lockstep:
            section['request_timeout_s'] = max(float(section.get('request_timeout_s', 0.0)),
                                               LOCKSTEP_REQUEST_TIMEOUT_S)
    path = directory / 'evaluation_params.yaml'
    path.write_text(yaml.dump(params, Dumper=NoAliasDumper), encoding='utf-8')
    return path


def recorded_all(watch: DiagnosticsWatch, recorder: BagRecorder) -> bool:
    """Every result a node counted as published has reached the recorder."""
    counts = recorder.counts()
    published = {node: status.count('published') for node, status in watch.snapshot().items()}
    return (counts.get(f'{NAMESPACE}/detections', 0) >= published.get('detection_node', 0)
            and counts.get(f'{NAMESPACE}/lanes', 0) >= published.get('lane_node', 0))


def image_subscriptions(process_layout: str) -> int:
    """Return how many subscriptions the replayed camera gets: one per process that takes it."""
    return len(NODES) if process_layout == 'per_node' else 1


def replay_plan(bag: Path, topic: str, profile: str, triton_url: str,
                params_file: Path | None, scratch: Path,
                process_layout: str = 'single', input_transport: str = RAW.name,
                lockstep: bool = False, precision: str = 'fp',
                model_repository: Path | None = None) -> PipelinePlan:
    """Return the pipeline for a replay: both inference nodes in NAMESPACE, on the bag's topic."""
    return pipeline_plan({
        'camera_topic': topic, 'namespace': NAMESPACE, 'enable_overlay': 'false',
        'input_transport': input_transport,
        'profile': profile, 'start_triton': 'false' if triton_url else 'true',
        'precision': precision, 'model_repository': str(model_repository or ''),
        'triton_url': triton_url, 'process_layout': process_layout,
        'params_file': str(evaluation_params_file(params_file, scratch, lockstep))})


@dataclass(frozen=True)
class Replayed:
    """What one replay gave: the nodes' final accounting, the outputs bag and the timing."""

    topic: str
    frames: int
    nodes: dict[str, NodeStatus]
    outputs_bag: str
    timing: str
    wall_s: float
    camera_health: CameraHealthFigures
    bag_s: float
    domain_id: int


def replay(settings: EvaluationSettings, log: Callable[[str], None]) -> Replayed:
    """Run the pipeline on the bag; returns the nodes' final accounting."""
    topic, frames = camera_topic(settings.bag, settings.topic)
    settings.output.mkdir(parents=True, exist_ok=True)
    outputs_bag = settings.output / 'outputs'
    if outputs_bag.exists():
        raise BagError(f'{outputs_bag} exists; choose a new --output directory')
    topics = {f'{NAMESPACE}/{name}': type_name for name, type_name in OUTPUT_TYPES.items()
              if name != 'diagnostics'}
    if settings.record_masks:
        topics[f'{NAMESPACE}/drivable_area'] = MASK_TYPE
    image_topic, transport = camera_input(settings.bag, topic)
    if transport != RAW.name:
        before = frames_before_keyframe(settings.bag, topic)
        log(f'{topic} is video: {before} of its {frames} frames come before its first keyframe '
            '(the nodes count them as dropped, waiting for a keyframe); the evaluation starts '
            f'at frame {before + 1}')
    with tempfile.TemporaryDirectory(prefix='triton_perception-eval-') as scratch:
        plan = replay_plan(settings.bag, image_topic, settings.profile, settings.triton_url,
                           settings.params_file, Path(scratch), settings.process_layout,
                           transport, lockstep=settings.timing_mode() == 'lockstep',
                           precision=settings.precision,
                           model_repository=settings.model_repository)
        info_topic, static_transforms = geometry_messages(settings.bag, image_topic)
        with pipeline_session(plan, log, 'bag_evaluator') as session, \
                BagRecorder(session.node, outputs_bag, topics) as recorder:
            if static_transforms:  # latched, as robot_state_publisher publishes them
                from tf2_msgs.msg import TFMessage
                tf_static = session.node.create_publisher(TFMessage, '/tf_static',
                                                          TF_STATIC_QOS)
                for raw in static_transforms:
                    tf_static.publish(raw)
            timing = settings.timing_mode()
            log(f'replaying {frames} frames of {topic} ' + (
                'in lockstep' if timing == 'lockstep' else f'at rate {settings.rate:g}')
                + ' once the nodes subscribe')
            lockstep = Lockstep(topic, partial(unanswered, session.watch, recorder)) \
                if timing == 'lockstep' else None
            played = play_bag(settings.bag, session.node, rate=settings.rate,
                              topics=[topic] + ([info_topic] if info_topic else []),
                              wait_for_subscribers=image_subscriptions(settings.process_layout),
                              subscribers_matched=session.watch.publishers_seen,
                              wait_timeout_s=SUBSCRIBERS_TIMEOUT_S,
                              progress=log, stop_event=session.stop, lockstep=lockstep)
            deadline = time.monotonic() + SETTLE_TIMEOUT_S
            while not (session.watch.settled(frames) and recorded_all(session.watch, recorder)) \
                    and time.monotonic() < deadline:
                time.sleep(0.2)
            accounting = session.watch.snapshot()
            camera_health = session.watch.camera_health.summary()
    return Replayed(topic=topic, frames=frames, nodes=accounting, outputs_bag=str(outputs_bag),
                    timing=timing, wall_s=played.wall_s, camera_health=camera_health,
                    bag_s=bag_duration_s(settings.bag), domain_id=session.domain_id)


def compare_options(settings: EvaluationSettings) -> CompareOptions:
    """Return how the runs are compared: thresholds, the export, the detector's classes."""
    return CompareOptions(dict(settings.change_thresholds), settings.export_changed,
                          detection_labels(settings.params_file))


def unanswered(watch: DiagnosticsWatch, recorder: BagRecorder, frame: int,
               stamp_ns: int) -> list[str]:
    """
    Return the nodes that have not answered frame number `frame` (header stamp `stamp_ns`).

    A node answers by publishing its result with the frame's stamp, or by accounting for the
    frame without one (failed or rejected: it has seen `frame` frames and has none pending).
    """
    waiting = []
    for node, topic in RESULT_TOPICS.items():
        if recorder.has_header_stamp(topic, stamp_ns):
            continue
        status = watch.snapshot().get(node)
        if status is None or status.seen < frame or status.count('pending') > 0:
            waiting.append(node)
    return waiting


def bag_duration_s(bag: Path) -> float:
    """Return the bag's recorded duration in s (first to last message)."""
    with AnyReader([Path(bag)], default_typestore=typestore()) as reader:
        return float(reader.end_time - reader.start_time) / 1e9


def served_models(nodes: dict[str, NodeStatus]) -> ServedModels:
    """Return the precision and calibration the nodes' /diagnostics named (each if they differ)."""
    served = {key: dict.fromkeys(status.values.get(key, '') for status in nodes.values())
              for key in ('precision', 'calibration')}
    return {'precision': ', '.join(value or 'not reported' for value in served['precision']),
            'calibration': '; '.join(value for value in served['calibration'] if value)}


def evaluate(settings: EvaluationSettings, log: Callable[[str], None]) -> ReplayReport:
    """Replay, analyse, write report.json and report.md; compare with --expected if given."""
    replayed = replay(settings, log)
    outputs = analyse_outputs(Path(replayed.outputs_bag), detection_labels(settings.params_file))
    report: ReplayReport = {
        'input': {'bag': str(settings.bag), 'topic': replayed.topic, 'frames': replayed.frames,
                  'rate': settings.rate, 'timing': replayed.timing,
                  'replay_s': round(replayed.wall_s, 2), 'bag_s': round(replayed.bag_s, 2),
                  'ros_domain_id': replayed.domain_id},
        'nodes': node_figures(replayed.frames, replayed.nodes),
        **outputs,
        'outputs_bag': replayed.outputs_bag,
    }
    if replayed.camera_health:
        report['camera_health'] = replayed.camera_health
    report['served'] = served_models(replayed.nodes)
    add_accuracy(report, settings.scoring(), log, settings.output)
    if settings.expected:
        expected = read_report(report_file(Path(settings.expected)))
        report['comparison'] = {
            'expected': str(settings.expected),
            'regressions': [*regressions(report, expected),
                            *accuracy_regressions(report, expected)],
            'intervals': frame_comparison(report, expected, ACCURACY_TOLERANCE),
            'runs': compare_evaluation(Path(settings.expected), report, settings.output,
                                       compare_options(settings), log)}
    write_report(report, settings.output)
    return report
