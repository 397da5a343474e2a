"""
Launch arguments -> the processes, parameters and remappings of a pipeline.

launch/*.launch.py and `triton-perception run` both build their processes from this plan, so
the launch files stay thin and everything they do is tested without ROS launch installed.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
import re

import yaml

from triton_perception.frames import camera_info_sibling, transport_remappings
from triton_perception.parameters import DETECTION, IMAGE_TRANSPORTS, LANES, specs_by_name
from triton_perception.pipeline.arguments import (ARGUMENT_NAMES, ARGUMENTS, BOOLEAN,
                                                  parse_launch_arguments, PlanError, validated)
from triton_perception.serving import MAX_BATCH, ServerConfig, ServerError
from triton_perception.system import config_file, dds_profile_environment, default_model_repository

PACKAGE = 'triton_perception'
MODEL_DEFAULTS = {'detection_node': str(specs_by_name(DETECTION)['model_name'].default),
                  'lane_node': str(specs_by_name(LANES)['model_name'].default)}


@dataclass(frozen=True)
class NodePlan:
    """
    One node process of a pipeline: executable, name, namespace, parameters and remappings.

    `params_file` comes first on the command line; `parameters` override it.
    """

    executable: str
    name: str
    namespace: str
    params_file: Path
    parameters: dict[str, object]
    remappings: tuple[tuple[str, str], ...]
    arguments: tuple[str, ...] = ()  # the executable's own, before --ros-args

    @property
    def hosts_nodes(self) -> bool:
        """
        Say whether the process holds several nodes (perception_process).

        Then its name and namespace are its own arguments: `__node` and `__ns` would rename
        every node of the process.
        """
        return self.executable == 'perception_process'

    @property
    def fqn(self) -> str:
        """Return the fully qualified node name: unique in a plan, also with several cameras."""
        return f'{self.namespace}/{self.name}'

    def ros_arguments(self) -> list[str]:
        """Return the `--ros-args` a process needs for this node, as `ros2 run` would pass them."""
        if self.hosts_nodes:
            arguments = [*self.arguments, '--ros-args', '--params-file', str(self.params_file)]
        else:
            arguments = ['--ros-args', '-r', f'__node:={self.name}', '--params-file',
                         str(self.params_file)]
            if self.namespace:
                arguments += ['-r', f'__ns:={self.namespace}']
        for name, value in self.parameters.items():
            text = str(value).lower() if isinstance(value, bool) else str(value)
            arguments += ['-p', f'{name}:={text}']
        for source, target in self.remappings:
            arguments += ['-r', f'{source}:={target}']
        return arguments


@dataclass(frozen=True)
class PipelinePlan:
    """
    What a pipeline starts: the server (None to use a running one), the nodes, rviz.

    `triton_url` is where the nodes find Triton; `respawn_delay_s` is the wait in s before a
    crashed server is restarted (when `respawn_triton`); `ready_models` are the models the
    readiness gate waits for before the nodes start; `environment` holds variables the
    processes get unless already set (the Fast DDS profile).
    """

    server: ServerConfig | None
    triton_url: str
    respawn_triton: bool
    respawn_delay_s: float
    nodes: tuple[NodePlan, ...]
    rviz_config: Path | None
    ready_models: tuple[str, ...] = ()
    environment: dict[str, str] = field(default_factory=dict)


def model_name(params_file: Path, node: str) -> str:
    """Return the Triton model a node will ask for: its `model_name` in the parameters file."""
    try:
        params = yaml.safe_load(params_file.read_text(encoding='utf-8')) or {}
    except yaml.YAMLError as error:
        raise PlanError(f"argument 'params_file': {params_file} is not valid YAML: {error}") \
            from None
    for key in (f'/**/{node}', node, f'/{node}'):
        name = (params.get(key) or {}).get('ros__parameters', {}).get('model_name')
        if name:
            return str(name)
    return MODEL_DEFAULTS[node]


def _port(values: dict[str, str], name: str) -> int:
    try:
        port = int(values[name])
    except ValueError:
        raise PlanError(f"argument '{name}': '{values[name]}' is not a port number") from None
    if not 0 < port < 65536:
        raise PlanError(f"argument '{name}': {port} is not a TCP port (1-65535)")
    return port


def _cameras(arguments: dict[str, str], namespace: str) -> list[tuple[str, str]]:
    """(namespace of the camera's nodes, camera topic) for every camera."""
    default_topic = next(a.default for a in ARGUMENTS if a.name == 'camera_topic')
    if not arguments['cameras'].strip():
        if not arguments['camera_topic'].strip():
            raise PlanError("argument 'camera_topic' is empty; give the camera's Image topic")
        return [(namespace, arguments['camera_topic'])]
    if arguments['camera_topic'] != default_topic:
        raise PlanError('give either camera_topic (one camera) or cameras (NAME=TOPIC pairs), '
                        'not both')
    cameras: dict[str, str] = {}
    for entry in arguments['cameras'].split(','):
        name, separator, topic = (part.strip() for part in entry.partition('='))
        if not (separator and re.fullmatch(r'[A-Za-z][A-Za-z0-9_]*', name) and topic):
            raise PlanError(f"argument 'cameras': '{entry.strip()}' is not NAME=TOPIC (NAME: "
                            'letters, digits and _, starting with a letter), e.g. '
                            'front=/front/image_raw')
        if name in cameras:
            raise PlanError(f"argument 'cameras': the name '{name}' is given twice")
        cameras[name] = topic
    return [(f'{namespace}/{name}', topic) for name, topic in cameras.items()]


def _namespace(value: str) -> str:
    value = value.strip()
    if value and not value.startswith('/'):
        value = '/' + value
    return value.rstrip('/')


def _priorities_of(priorities: str, nodes: list[NodePlan]) -> list[str]:
    """Return the `--camera-priorities` of the cameras among `nodes` ([] if none has one)."""
    cameras = {node.namespace or '/' for node in nodes}
    entries = [entry.strip() for entry in priorities.split(',') if entry.strip()]
    own = [entry for entry in entries if entry.split('=', 1)[0].rstrip('/') in cameras
           or entry.split('=', 1)[0] in cameras]
    return [f'--camera-priorities={",".join(own)}'] if own else []


def _max_batch(arguments: dict[str, str]) -> int:
    """Return the max_batch argument as a number of cameras, 1 to MAX_BATCH."""
    text = arguments['max_batch'].strip()
    if not (text.isdigit() and 1 <= int(text) <= MAX_BATCH):
        raise PlanError(f"argument 'max_batch': '{text}' is not a number of cameras from 1 to "
                        f'{MAX_BATCH} (1: each camera its own requests)')
    return int(text)


def _single_process(nodes: list[NodePlan], cameras: list[tuple[str, str]], namespace: str,
                    params_file: Path, common: dict[str, object],
                    priorities: str = '', max_batch: int = MAX_BATCH) -> NodePlan:
    """
    Return the one perception_process that runs `nodes` (the per-node plan) for every camera.

    One camera keeps the per-node plan's namespace and remappings, which then apply to every
    node of the process; several cameras are given as `--camera NAMESPACE=IMAGE=INFO`, each
    camera's nodes getting their own remappings.
    """
    kinds = {node.executable for node in nodes}
    flags = [flag for kind, flag in (('detection_node', '--no-detections'),
                                     ('lane_node', '--no-lanes'),
                                     ('overlay_node', '--no-overlay')) if kind not in kinds]
    overlay = next((node.parameters for node in nodes if node.executable == 'overlay_node'), {})
    parameters = {**common, **{key: value for key, value in overlay.items()
                               if key.startswith('expect_')}}
    if len(cameras) == 1:
        return NodePlan('perception_process', 'perception_process', nodes[0].namespace,
                        params_file, parameters, nodes[0].remappings,
                        (*_namespace_argument(nodes[0].namespace), *flags,
                         *_priorities_of(priorities, nodes)))
    specs = []
    for node in nodes:
        camera = f'--camera={node.namespace}=' + '='.join(
            target for source, target in node.remappings if source in ('image', 'camera_info'))
        if camera not in specs:
            specs.append(camera)
    batch = [f'--max-batch={max_batch}'] if max_batch != MAX_BATCH else []
    return NodePlan('perception_process', 'perception_process', namespace, params_file,
                    parameters, (), (*_namespace_argument(namespace), *specs, *flags,
                                     *_priorities_of(priorities, nodes), *batch))


def _cameras_per_process(arguments: dict[str, str]) -> int:
    """Return the cameras_per_process argument as a whole number (0: all in one process)."""
    text = arguments['cameras_per_process'].strip()
    if not text.isdigit():
        raise PlanError(f"argument 'cameras_per_process': '{text}' is not a whole number of at "
                        'least 0 (0: every camera in one perception_process)')
    return int(text)


def _perception_processes(nodes: list[NodePlan], cameras: list[tuple[str, str]],
                          namespace: str, params_file: Path, common: dict[str, object],
                          per_process: int, priorities: str = '',
                          max_batch: int = MAX_BATCH) -> list[NodePlan]:
    """
    Return the perception_processes that run `nodes`: the cameras in groups of `per_process`.

    One Python process gets about one core (the GIL); groups spread the cameras over cores.
    A group's own node lives in the namespace of its first camera, so that the processes'
    names differ; all cameras in one group keep the plan's namespace as before.
    """
    size = per_process or len(cameras)
    groups = [cameras[start:start + size] for start in range(0, len(cameras), size)]
    processes = []
    for group in groups:
        names = {camera_namespace for camera_namespace, _topic in group}
        processes.append(_single_process(
            [node for node in nodes if node.namespace in names], group,
            namespace if len(groups) == 1 else group[0][0], params_file, common, priorities,
            max_batch))
    return processes


def _namespace_argument(namespace: str) -> list[str]:
    return [f'--namespace={namespace}'] if namespace else []


def _triton(arguments: dict[str, str], start_triton: bool) -> tuple[ServerConfig | None, str]:
    """
    Return the server to start (None with start_triton:=false) and the gRPC URL the nodes use.

    triton_url overrides the started server's URL; without a server to start it is required.
    """
    server = None
    if start_triton:
        try:
            server = ServerConfig(
                model_repository=Path(arguments['model_repository'] or default_model_repository()),
                profile=arguments['profile'], precision=arguments['precision'],
                tritonserver=arguments['tritonserver'] or None,
                grpc_port=_port(arguments, 'grpc_port'), http_port=_port(arguments, 'http_port'),
                metrics_port=_port(arguments, 'metrics_port'))
        except ServerError as error:
            raise PlanError(str(error)) from None
        triton_url = arguments['triton_url'] or server.grpc_url
    else:
        if not arguments['triton_url']:
            raise PlanError('start_triton:=false needs triton_url:=HOST:PORT (the gRPC endpoint '
                            'of the Triton to use)')
        triton_url = arguments['triton_url']
    return server, triton_url


def _camera_nodes(arguments: dict[str, str], is_true: dict[str, bool],
                  cameras: list[tuple[str, str]], params_file: Path,
                  common: dict[str, object]) -> list[NodePlan]:
    """Return the enabled nodes of each camera, in its namespace, remapped to its topics."""
    nodes = []
    for namespace, camera in cameras:
        info_topic = arguments['camera_info_topic'] or camera_info_sibling(camera)
        camera_remaps = (*transport_remappings(camera), ('camera_info', info_topic))
        if is_true['enable_detections']:
            nodes.append(NodePlan('detection_node', 'detection_node', namespace, params_file,
                                  dict(common), camera_remaps))
        if is_true['enable_lanes']:
            nodes.append(NodePlan('lane_node', 'lane_node', namespace, params_file, dict(common),
                                  camera_remaps))
        if is_true['enable_overlay']:
            nodes.append(NodePlan(
                'overlay_node', 'overlay_node', namespace, params_file,
                {'use_sim_time': is_true['use_sim_time'],
                 'input_transport': arguments['input_transport'],
                 'expect_detections': is_true['enable_detections'],
                 'expect_lanes': is_true['enable_lanes']},
                camera_remaps))
    return nodes


def pipeline_plan(values: dict[str, str]) -> PipelinePlan:
    """Validate the arguments and say which processes to start with what."""
    arguments = validated(values)
    is_true = {argument.name: arguments[argument.name] == 'true' for argument in ARGUMENTS
               if argument.choices == BOOLEAN}
    server, triton_url = _triton(arguments, is_true['start_triton'])
    try:
        respawn_delay_s = float(arguments['respawn_delay'])
    except ValueError:
        raise PlanError(f"argument 'respawn_delay': '{arguments['respawn_delay']}' is not a "
                        'number of seconds') from None
    params_file = Path(arguments['params_file'] or config_file('params.yaml'))
    if not params_file.is_file():
        raise PlanError(f"argument 'params_file': {params_file} does not exist")
    if not (is_true['enable_detections'] or is_true['enable_lanes']):
        raise PlanError('enable_detections and enable_lanes are both false: nothing to run')
    if is_true['enable_overlay'] and arguments['input_transport'] not in IMAGE_TRANSPORTS:
        raise PlanError(f"input_transport {arguments['input_transport']}: overlay_node draws on "
                        f"{' or '.join(IMAGE_TRANSPORTS)} images only; set enable_overlay:=false "
                        '(Foxglove draws detections/annotations and lanes/annotations on the '
                        'video)')

    common: dict[str, object] = {'triton_url': triton_url,
                                 'input_transport': arguments['input_transport'],
                                 'use_sim_time': is_true['use_sim_time']}
    if arguments['autostart']:  # '' leaves the parameters file's value
        common['autostart'] = arguments['autostart'] == 'true'

    cameras = _cameras(arguments, _namespace(arguments['namespace']))
    if arguments['camera_info_topic'] and len(cameras) > 1:
        raise PlanError("camera_info_topic names one camera's CameraInfo; with cameras, each "
                        "camera uses its image topic's sibling camera_info")
    nodes = _camera_nodes(arguments, is_true, cameras, params_file, common)
    # The parameters file is read once per kind of node, not once per camera.
    enabled = [name for name in MODEL_DEFAULTS if any(node.name == name for node in nodes)]
    ready_models = tuple(dict.fromkeys(model_name(params_file, name) for name in enabled))
    if arguments['process_layout'] != 'single' and arguments['camera_priorities'].strip():
        raise PlanError('camera_priorities needs process_layout:=single: with per_node each '
                        'node is a process of its own and no process decides between cameras')
    if arguments['process_layout'] == 'single':
        nodes = _perception_processes(nodes, cameras, _namespace(arguments['namespace']),
                                      params_file, common, _cameras_per_process(arguments),
                                      arguments['camera_priorities'], _max_batch(arguments))
    return PipelinePlan(
        ready_models=ready_models,
        server=replace(server, models=ready_models) if server else None, triton_url=triton_url,
        respawn_triton=is_true['respawn_triton'],
        respawn_delay_s=respawn_delay_s, nodes=tuple(nodes),
        rviz_config=config_file('pipeline.rviz') if is_true['rviz'] else None,
        environment=dds_profile_environment())


__all__ = ['ARGUMENT_NAMES', 'ARGUMENTS', 'BOOLEAN', 'parse_launch_arguments', 'PlanError']
