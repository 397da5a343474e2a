"""
The launch arguments: one table for `ros2 launch` and `triton-perception run` alike.

Each argument says which launch files declare it beside pipeline.launch.py (`parts`), so that
triton_server.launch.py and perception_nodes.launch.py take their share from the same table.
A launch file refuses, before it starts anything, an argument it does not declare: `ros2
launch` itself would take it without a word. The refusal names the nearest declared names, or,
for a node parameter, how to set it.
"""
from __future__ import annotations

from dataclasses import dataclass
import difflib
from typing import Iterable

from triton_perception.errors import TritonPerceptionError
from triton_perception.parameters import (argument_description, COMMON, DETECTION, GROUND,
                                          HEALTH, LANES, OVERLAY, RAW, TRACKING, TRANSPORTS)
from triton_perception.serving import MAX_BATCH, PRECISIONS, PROFILES

SERVER = 'server'  # declared by triton_server.launch.py
NODES = 'nodes'    # declared by perception_nodes.launch.py
# The launch configuration pipeline.launch.py gives the files it includes: their arguments
# come from the pipeline's, which checked what the user gave.
INCLUDED = 'triton_perception_included'
# The readiness gate's default limit (`wait-ready`, the launch files' gate, `run` against a
# remote Triton): a server that has not loaded the models by then is named with the models it
# could not load, and the gate exits non-zero.
READY_TIMEOUT_S = 600.0


class PlanError(TritonPerceptionError, ValueError):
    """The launch arguments do not describe a pipeline; the message says which and why."""


@dataclass(frozen=True)
class Argument:
    """A launch argument: its name, default, description, and accepted values (empty: any)."""

    name: str
    default: str
    description: str
    choices: tuple[str, ...] = ()


BOOLEAN = ('true', 'false')
ARGUMENTS = (
    Argument('camera_topic', '/camera/image_raw',
             'sensor_msgs/Image topic of the camera (for compressed input, its '
             '<camera_topic>/compressed is used)'),
    Argument('camera_info_topic', '', 'sensor_msgs/CameraInfo topic of the camera (default: the '
             'image_transport sibling <namespace of camera_topic>/camera_info; with cameras, '
             "each camera's sibling)"),
    Argument('cameras', '', 'several cameras served by the same Triton: NAME=TOPIC pairs '
             'separated by commas, e.g. front=/front/image_raw,rear=/rear/image_raw; each camera '
             'gets its own nodes in <namespace>/<NAME> (instead of camera_topic)'),
    Argument('input_transport', RAW.name, f'{argument_description()}; docs/topics.md',
             tuple(TRANSPORTS)),
    Argument('start_triton', 'true', 'start a local tritonserver (false: use triton_url)',
             BOOLEAN),
    Argument('triton_url', '', 'gRPC HOST:PORT of an existing Triton (required when '
             'start_triton is false; default 127.0.0.1:<grpc_port>)'),
    Argument('tritonserver', '', 'path of the tritonserver binary (default: PATH, '
             '/opt/tritonserver, the nvidia-pytriton wheel)'),
    Argument('model_repository', '', "Triton model repository (default: the package's)"),
    Argument('profile', 'auto', 'tensorrt (Orin engines), cpu (ONNX in the Python backend) or '
             'auto (tensorrt when engines exist)', PROFILES),
    Argument('precision', 'fp', 'fp (the float graphs) or int8 (those of `triton-perception '
             'models quantize`, served beside them; docs/models.md)', PRECISIONS),
    Argument('grpc_port', '8001', 'gRPC port of the local tritonserver'),
    Argument('http_port', '8000', 'HTTP port of the local tritonserver (readiness checks)'),
    Argument('metrics_port', '8002', 'metrics port of the local tritonserver'),
    Argument('respawn_triton', 'true', 'restart tritonserver after a crash', BOOLEAN),
    Argument('respawn_delay', '3.0', 'seconds before tritonserver is restarted'),
    Argument('params_file', '', 'node parameters YAML (default: config/params.yaml)'),
    Argument('enable_detections', 'true', 'run detection_node', BOOLEAN),
    Argument('enable_lanes', 'true', 'run lane_node', BOOLEAN),
    Argument('enable_overlay', 'true', 'run overlay_node (one combined annotated image)',
             BOOLEAN),
    Argument('rviz', 'false', 'start rviz2 with config/pipeline.rviz', BOOLEAN),
    Argument('namespace', '', 'namespace of the nodes and their topics, e.g. /perception'),
    Argument('process_layout', 'single', "single: every camera's nodes in one "
             'perception_process (each frame taken from DDS once); per_node: one process per node',
             ('single', 'per_node')),
    Argument('cameras_per_process', '2', 'with process_layout:=single and several cameras: '
             'at most this many cameras per perception_process, each camera still taken once '
             'for all its nodes, every process against one Triton (0: all cameras in one '
             'process; 1: a process per camera, past one core; the default 2 served 4 '
             'cameras best within 1 GB on 2 cores, docs/launch.md)'),
    Argument('camera_priorities', '', 'with process_layout:=single: which cameras a '
             'perception_process serves first when it has more frames than it can serve, '
             'CAMERA_NAMESPACE=always|MIN_HZ pairs, e.g. /front=always,/left=10 (other cameras '
             'round-robin; docs/launch.md)'),
    Argument('max_batch', str(MAX_BATCH), 'with process_layout:=single: at most this many '
             'cameras of a perception_process in one request (every camera with a frame '
             'waiting when a request goes; 1: one request per camera; docs/launch.md)'),
    Argument('autostart', '', 'true: the lifecycle nodes configure and activate at start-up; '
             "false: they wait for a lifecycle manager; '' (default): the params file's "
             '`autostart`', ('', 'true', 'false')),
    Argument('use_sim_time', 'false', 'the nodes take their time from /clock, which ros2 bag '
             'play --clock publishes (triton-perception bag play publishes none); the results '
             'carry their input stamps either way', BOOLEAN),
)
ARGUMENT_NAMES = tuple(argument.name for argument in ARGUMENTS)
# What the two launch files pipeline.launch.py includes declare (it declares them all).
SERVER_ARGUMENTS = ('tritonserver', 'model_repository', 'profile', 'precision', 'grpc_port',
                    'http_port', 'metrics_port', 'respawn_triton', 'respawn_delay')
NODE_ARGUMENTS = ('camera_topic', 'camera_info_topic', 'cameras', 'input_transport',
                  'triton_url', 'params_file', 'enable_detections', 'enable_lanes',
                  'enable_overlay', 'namespace', 'process_layout', 'cameras_per_process',
                  'camera_priorities', 'max_batch', 'autostart', 'use_sim_time')
DECLARED = {'pipeline.launch.py': ARGUMENT_NAMES, 'triton_server.launch.py': SERVER_ARGUMENTS,
            'perception_nodes.launch.py': NODE_ARGUMENTS}

# Every node parameter's name: given as a launch argument, it is pointed to the params file.
_NODE_TABLES = (COMMON, DETECTION, LANES, OVERLAY, GROUND, TRACKING, HEALTH)
NODE_PARAMETERS = frozenset(spec.name for table in _NODE_TABLES for spec in table)


def parse_launch_arguments(tokens: list[str]) -> dict[str, str]:
    """`name:=value` tokens as `ros2 launch` takes them; refused as pipeline.launch.py refuses."""
    values = {}
    for token in tokens:
        name, separator, value = token.partition(':=')
        if not separator:
            raise PlanError(f"'{token}' is not of the form name:=value")
        values[name] = value
    refuse_undeclared('pipeline.launch.py', values)
    return values


def validated(values: dict[str, str]) -> dict[str, str]:
    """Return every argument's value, the defaults where `values` has none; refuse bad ones."""
    refuse_undeclared('pipeline.launch.py', values)
    merged = {argument.name: values.get(argument.name, argument.default) for argument in ARGUMENTS}
    for argument in ARGUMENTS:
        if argument.choices and merged[argument.name] not in argument.choices:
            raise PlanError(f"argument '{argument.name}': '{merged[argument.name]}' is not one of "
                            f"{', '.join(argument.choices)}")
    return merged


def refuse_undeclared(file_name: str, given: Iterable[str]) -> None:
    """
    Raise PlanError, in one line, for each name in `given` that `file_name` does not declare.

    The line names the nearest declared names, or for a node parameter the params file and,
    where one carries it, the launch argument that does.
    """
    declared = DECLARED[file_name]
    problems = []
    for name in sorted(set(given) - set(declared) - {INCLUDED}):
        if name in ARGUMENT_NAMES:
            problems.append(f"'{name}' is an argument of pipeline.launch.py, not of this file")
        elif name in NODE_PARAMETERS:
            problems.append(f"'{name}' is a node parameter, not a launch argument: set it in a "
                            'params file and give params_file:=FILE (docs/parameters.md)')
        else:
            near = difflib.get_close_matches(name, declared, n=3, cutoff=0.6)
            problems.append(f"unknown argument '{name}'" + (
                f" (did you mean {', '.join(repr(other) for other in near)}?)" if near else
                f'; `ros2 launch triton_perception {file_name} -s` lists them'))
    if problems:
        raise PlanError(f'{file_name}: ' + '; '.join(problems))
