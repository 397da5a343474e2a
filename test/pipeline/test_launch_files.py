"""
The launch files under real ROS 2 launch/launch_ros.

Declared arguments and the concrete processes they start, checked against the plan without starting
anything (test_ros2_cli.py starts them for real). `make setup` installs ROS launch from
../shared/ros-python.
"""
from __future__ import annotations

import json
import os
from pathlib import Path
import shutil
import stat
import sys

from launch import LaunchContext
from launch.actions import ExecuteProcess, RegisterEventHandler, Shutdown
from launch.events.process import ProcessExited
from launch.launch_description_sources import get_launch_description_from_python_launch_file
from launch.utilities import perform_substitutions
from launch_ros.actions import Node
import pytest
import yaml

from support.checkout import REPO
from support.ros_cli import stand_in_rviz2
from support.stand_in_tritonserver import stand_in_release
from triton_perception.pipeline.plan import (ARGUMENT_NAMES, ARGUMENTS, parse_launch_arguments,
                                             pipeline_plan, PlanError)
from triton_perception.serving import ServerError
from triton_perception.serving.server.server_installation import find_tritonserver, server_command
from triton_perception.system import sha256_of
from triton_perception.system.stops_last import DEFAULT_GRACE_S

LAUNCH_DIR = REPO / 'launch'
PACKAGE = 'triton_perception'
DECLARED = {
    'pipeline.launch.py': ARGUMENT_NAMES,
    'triton_server.launch.py': ('tritonserver', 'model_repository', 'profile', 'precision',
                                'grpc_port', 'http_port', 'metrics_port', 'respawn_triton',
                                'respawn_delay'),
    'perception_nodes.launch.py': ('camera_topic', 'camera_info_topic', 'cameras',
                                   'input_transport', 'triton_url',
                                   'params_file', 'enable_detections', 'enable_lanes',
                                   'enable_overlay', 'namespace', 'process_layout',
                                   'cameras_per_process', 'camera_priorities',
                                   'max_batch', 'autostart', 'use_sim_time'),
}
PORTS = {'grpc_port': '18601', 'http_port': '18600', 'metrics_port': '18602'}


@pytest.fixture(autouse=True)
def restore_environment():
    """Keep other tests unaffected by SetEnvironmentVariable actions (they change os.environ)."""
    saved = dict(os.environ)
    yield
    os.environ.clear()
    os.environ.update(saved)


@pytest.fixture
def ament_prefix(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Make a prefix where launch_ros finds lib/triton_perception/<executable> (as after colcon)."""
    prefix = tmp_path / 'prefix'
    marker = prefix / 'share' / 'ament_index' / 'resource_index' / 'packages' / PACKAGE
    marker.parent.mkdir(parents=True)
    marker.write_text('')
    (prefix / 'lib' / PACKAGE).mkdir(parents=True)
    # share/triton_perception as colcon installs it (the files of the checkout)
    (prefix / 'share' / PACKAGE).mkdir(parents=True)
    for entry in ('package.xml', 'config', 'launch', 'model_repository'):
        (prefix / 'share' / PACKAGE / entry).symlink_to(REPO / entry)
    for executable in ('detection_node', 'lane_node', 'overlay_node', 'perception_process'):
        launcher = prefix / 'lib' / PACKAGE / executable
        launcher.write_text('#!/bin/sh\n')
        launcher.chmod(launcher.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv('AMENT_PREFIX_PATH',
                       os.pathsep.join(filter(None, [str(prefix),
                                                     os.environ.get('AMENT_PREFIX_PATH')])))
    return prefix


@pytest.fixture
def tritonserver(tmp_path: Path) -> Path:
    """Return a stand-in of Triton 2.44.0 (r24.03) in a release layout, never served."""
    return stand_in_release(tmp_path / 'triton')


def expand(entity, context: LaunchContext, found: list) -> None:
    """Visit entities as LaunchService does, but collect processes instead of starting them."""
    if isinstance(entity, ExecuteProcess):  # launch_ros Node included
        found.append(entity)
        return
    if isinstance(entity, RegisterEventHandler):
        found.append(entity)
    for sub_entity in entity.visit(context) or []:
        expand(sub_entity, context, found)


def visit(file_name: str, arguments: dict[str, str]) -> tuple[LaunchContext, list]:
    """
    Visit the launch file `file_name` with `arguments`, starting nothing.

    Returns the launch context and the processes and event handlers found.
    """
    context = LaunchContext()
    context.launch_configurations.update(arguments)
    found: list = []
    expand(get_launch_description_from_python_launch_file(str(LAUNCH_DIR / file_name)),
           context, found)
    return context, found


def processes(found: list, context: LaunchContext) -> dict[str, ExecuteProcess]:
    """Return the plain processes by name (no nodes), with command and environment resolved."""
    named = {}
    for action in found:
        if isinstance(action, ExecuteProcess) and not isinstance(action, Node):
            action.prepare(context)
            named[action.process_details['name'].rsplit('-', 1)[0]] = action
    return named


def node_command(node: Node, context: LaunchContext) -> list[str]:
    """Return the command line launch_ros runs for `node` (what Node.execute prepares)."""
    node._perform_substitutions(context)  # private, but the same from Humble to Rolling
    ros_arguments = {}
    if node.is_node_name_fully_specified():  # what Node.execute adds; not for perception_process
        ros_arguments['name'] = f'__node:={node.node_name.rsplit("/", 1)[-1]}'
        if node.expanded_node_namespace != '':
            ros_arguments['ns'] = f'__ns:={node.expanded_node_namespace}'
    context.extend_locals({'ros_specific_arguments': ros_arguments})
    node.prepare(context)
    return node.process_details['cmd']


def ros_arguments(command: list[str]) -> tuple[list[str], list[str]]:
    """(-r rules, --params-file paths) in order."""
    rules, params_files = [], []
    for flag, value in zip(command, command[1:]):
        if flag == '-r':
            rules.append(value)
        elif flag == '--params-file':
            params_files.append(value)
    return rules, params_files


def check_nodes(nodes: list, plan, context: LaunchContext, prefix: Path) -> None:
    """
    Check that the launched `nodes` are the plan's, as launch_ros would run them from `prefix`.

    Executable, name, namespace, remappings, and the package's params.yaml followed by the
    plan's values.
    """
    assert all(isinstance(node, Node) for node in nodes), nodes
    assert len(nodes) == len(plan.nodes)
    for node, expected in zip(nodes, plan.nodes):
        command = node_command(node, context)
        assert node.node_package == PACKAGE and node.node_executable == expected.executable
        assert command[0] == str(prefix / 'lib' / PACKAGE / expected.executable)
        rules, params_files = ros_arguments(command)
        if expected.hosts_nodes:  # a name or namespace would rename every node of the process
            assert not any(rule.startswith(('__node:=', '__ns:=')) for rule in rules), rules
            assert list(expected.arguments) == command[1:1 + len(expected.arguments)], command
        else:
            assert f'__node:={expected.name}' in rules
            assert (f'__ns:={expected.namespace}' in rules) == bool(expected.namespace)
        for source, target in expected.remappings:
            assert f'{source}:={target}' in rules
        # The package's params.yaml first, then the plan's values, which override it.
        assert params_files[0] == str(expected.params_file) and len(params_files) == 2
        generated = yaml.safe_load(Path(params_files[1]).read_text())
        # Keyed by the node's full name when launch_ros knows it, else by /**.
        [(key, values)] = generated.items()
        assert key in ('/**', f'{expected.namespace}/{expected.name}'), key
        assert values == {'ros__parameters': expected.parameters}


@pytest.mark.parametrize('file_name', sorted(DECLARED))
def test_declared_arguments_are_the_plans(file_name: str) -> None:
    """What `ros2 launch -s` shows: the plan's names, defaults, descriptions and choices."""
    description = get_launch_description_from_python_launch_file(str(LAUNCH_DIR / file_name))
    declared = description.get_launch_arguments()
    assert [argument.name for argument in declared] == list(DECLARED[file_name])
    plan_arguments = {argument.name: argument for argument in ARGUMENTS}
    for argument in declared:
        expected = plan_arguments[argument.name]
        assert perform_substitutions(LaunchContext(), argument.default_value) == expected.default
        assert argument.description.startswith(expected.description)
        assert list(argument.choices or []) == list(expected.choices)


def test_pipeline_cpu_starts_server_then_gate_then_nodes(ament_prefix: Path,
                                                         tritonserver: Path) -> None:
    """
    The CPU pipeline starts tritonserver and the readiness gate, the nodes once the gate exits 0.

    A failed gate shuts the launch down instead, and a gate ended by Ctrl-C starts nothing.
    """
    arguments = {'profile': 'cpu', 'tritonserver': str(tritonserver), **PORTS}
    plan = pipeline_plan(arguments)
    context, found = visit('pipeline.launch.py', arguments)

    named = processes(found, context)
    assert sorted(named) == ['tritonserver', 'wait_for_triton']
    server = named['tritonserver'].process_details
    # Through stops_last: it stops after the nodes, and ends when launch does, even by SIGKILL.
    assert server['cmd'] == [sys.executable, '-m', 'triton_perception.system.stops_last',
                             '--kill-after=4',
                             *server_command(plan.server, find_tritonserver(str(tritonserver)))]
    assert '--exit-timeout-secs=3' in server['cmd']
    assert not any(argument.startswith('--model-config-name') for argument in server['cmd'])
    assert '--grpc-port=18601' in server['cmd'] and '--grpc-address=127.0.0.1' in server['cmd']
    assert server['env']['PATH'].split(os.pathsep)[0] == str(Path(sys.executable).parent)
    gate = named['wait_for_triton']
    assert gate.process_details['cmd'] == [sys.executable, '-m', 'triton_perception.cli',
                                           'wait-ready', '--url', '127.0.0.1:18601',
                                           '--models', 'yolov5', 'lane_detection']
    assert not any(isinstance(action, Node) for action in found), 'nodes start after the gate'

    handlers = [action.event_handler for action in found
                if isinstance(action, RegisterEventHandler)]
    assert len(handlers) == 1
    gate_exit = handlers[0]

    def exited(process: ExecuteProcess, returncode: int) -> ProcessExited:
        return ProcessExited(returncode=returncode, pid=1, **process.process_details)

    assert gate_exit.matches(exited(gate, 0))
    assert not gate_exit.matches(exited(named['tritonserver'], 0))
    check_nodes(list(gate_exit.handle(exited(gate, 0), context)), plan, context, ament_prefix)
    # A failed gate stops the launch instead of starting the nodes against a Triton not ready.
    after_failure = list(gate_exit.handle(exited(gate, 1), context) or [])
    assert any(isinstance(action, Shutdown) for action in after_failure)
    assert not any(isinstance(action, Node) for action in after_failure)
    # Ctrl-C while waiting ends the gate too: then nothing more starts.
    context._set_is_shutdown(True)
    assert not gate_exit.handle(exited(gate, -2), context)


def nodes_after_gate(found: list, context: LaunchContext, gate: ExecuteProcess) -> list:
    """Return the node actions the launch starts once the readiness gate `gate` exits 0."""
    gate_exit = next(action.event_handler for action in found
                     if isinstance(action, RegisterEventHandler))
    return list(gate_exit.handle(
        ProcessExited(returncode=0, pid=1, **gate.process_details), context))


def test_pipeline_with_remote_triton(ament_prefix: Path) -> None:
    """
    With start_triton false the pipeline starts no server and gates the nodes on the remote URL.

    Only the enabled nodes start, in the namespace given.
    """
    arguments = {'start_triton': 'false', 'triton_url': 'jetson.local:8001',
                 'enable_lanes': 'false', 'namespace': 'perception', 'use_sim_time': 'true',
                 'process_layout': 'per_node'}
    plan = pipeline_plan(arguments)
    context, found = visit('pipeline.launch.py', arguments)
    named = processes(found, context)
    assert sorted(named) == ['wait_for_triton']
    gate = named['wait_for_triton']
    assert gate.process_details['cmd'][-4:] == ['--url', 'jetson.local:8001', '--models',
                                                'yolov5']
    nodes = nodes_after_gate(found, context, gate)
    assert [node.node_executable for node in nodes] == ['detection_node', 'overlay_node']
    check_nodes(nodes, plan, context, ament_prefix)


def test_pipeline_with_two_cameras(ament_prefix: Path) -> None:
    """Two cameras in the per_node layout start a detection_node and a lane_node for each."""
    arguments = {'start_triton': 'false', 'triton_url': 'jetson.local:8001',
                 'cameras': 'front=/front/image_raw,rear=/rear/image_raw',
                 'enable_overlay': 'false', 'process_layout': 'per_node'}
    plan = pipeline_plan(arguments)
    context, found = visit('pipeline.launch.py', arguments)
    gate = processes(found, context)['wait_for_triton']
    assert gate.process_details['cmd'][-3:] == ['--models', 'yolov5', 'lane_detection']
    nodes = nodes_after_gate(found, context, gate)
    assert [node.node_executable for node in nodes] == ['detection_node', 'lane_node'] * 2
    check_nodes(nodes, plan, context, ament_prefix)


def test_two_cameras_in_one_perception_process(ament_prefix: Path) -> None:
    """Two cameras in the default layout start one perception_process that hosts every node."""
    arguments = {'start_triton': 'false', 'triton_url': 'jetson.local:8001',
                 'cameras': 'front=/front/image_raw,rear=/rear/image_raw', 'namespace': 'car'}
    plan = pipeline_plan(arguments)
    context, found = visit('pipeline.launch.py', arguments)
    gate = processes(found, context)['wait_for_triton']
    nodes = nodes_after_gate(found, context, gate)
    assert [node.node_executable for node in nodes] == ['perception_process']
    check_nodes(nodes, plan, context, ament_prefix)
    assert '--camera=/car/rear=/rear/image_raw=/rear/camera_info' in node_command(nodes[0],
                                                                                  context)


@pytest.mark.parametrize('per_process, expected', [('', 2), ('1', 3), ('0', 1)])
def test_cameras_per_process_reaches_the_nodes(ament_prefix: Path, per_process: str,
                                               expected: int) -> None:
    """
    Three cameras: by default two perception_processes (groups of 2), as cameras_per_process says.

    The argument goes through pipeline.launch.py to perception_nodes.launch.py.
    """
    arguments = {'start_triton': 'false', 'triton_url': 'jetson.local:8001',
                 'cameras': 'a=/a/image,b=/b/image,c=/c/image', 'enable_overlay': 'false',
                 **({'cameras_per_process': per_process} if per_process else {})}
    plan = pipeline_plan(arguments)
    context, found = visit('pipeline.launch.py', arguments)
    gate = processes(found, context)['wait_for_triton']
    nodes = nodes_after_gate(found, context, gate)
    assert [node.node_executable for node in nodes] == ['perception_process'] * expected
    check_nodes(nodes, plan, context, ament_prefix)


def test_camera_priorities_reach_each_process_for_its_own_cameras(ament_prefix: Path) -> None:
    """
    camera_priorities goes to each perception_process with the entries of its own cameras.

    A process refuses a policy that names a camera it does not serve, so the groups split it.
    """
    arguments = {'start_triton': 'false', 'triton_url': 'jetson.local:8001',
                 'cameras': 'a=/a/image,b=/b/image,c=/c/image', 'enable_overlay': 'false',
                 'camera_priorities': '/a=always,/c=10'}
    plan = pipeline_plan(arguments)
    context, found = visit('pipeline.launch.py', arguments)
    nodes = nodes_after_gate(found, context, processes(found, context)['wait_for_triton'])
    check_nodes(nodes, plan, context, ament_prefix)
    commands = [node_command(node, context) for node in nodes]
    assert '--camera-priorities=/a=always' in commands[0]
    assert '--camera-priorities=/c=10' in commands[1]


def test_max_batch_reaches_the_processes_and_a_bad_one_is_refused(ament_prefix: Path) -> None:
    """max_batch:=1 gives each multi-camera perception_process --max-batch=1; 9 is refused."""
    arguments = {'start_triton': 'false', 'triton_url': 'jetson.local:8001',
                 'cameras': 'a=/a/image,b=/b/image', 'enable_overlay': 'false',
                 'cameras_per_process': '0', 'max_batch': '1'}
    plan = pipeline_plan(arguments)
    context, found = visit('pipeline.launch.py', arguments)
    nodes = nodes_after_gate(found, context, processes(found, context)['wait_for_triton'])
    check_nodes(nodes, plan, context, ament_prefix)
    assert '--max-batch=1' in node_command(nodes[0], context)
    with pytest.raises(PlanError, match="'max_batch': '9' is not a number of cameras"):
        pipeline_plan({**arguments, 'max_batch': '9'})


def test_camera_priorities_with_one_process_per_node_are_refused() -> None:
    """No process decides between cameras in the per-node layout: a policy there is an error."""
    with pytest.raises(PlanError, match='camera_priorities needs process_layout:=single'):
        pipeline_plan({'start_triton': 'false', 'triton_url': 'jetson.local:8001',
                       'cameras': 'a=/a/image,b=/b/image', 'process_layout': 'per_node',
                       'camera_priorities': '/a=always'})


def test_triton_server_alone(tritonserver: Path) -> None:
    """triton_server.launch.py starts tritonserver alone, through stops_last, as the plan says."""
    arguments = {'profile': 'cpu', 'tritonserver': str(tritonserver), **PORTS}
    context, found = visit('triton_server.launch.py', arguments)
    named = processes(found, context)
    assert sorted(named) == ['tritonserver'] and len(found) == 1
    server = named['tritonserver']
    assert server.process_details['cmd'] == [
        sys.executable, '-m', 'triton_perception.system.stops_last', '--kill-after=4',
        *server_command(pipeline_plan(arguments).server, find_tritonserver(str(tritonserver)))]


def test_the_server_is_killed_before_launch_kills_its_wrapper(tritonserver: Path) -> None:
    """
    Triton's drain, then the wrapper's kill, come before launch's SIGKILL however it is stopped.

    Launch SIGTERMs the wrapper sigterm_timeout after the shutdown began and SIGKILLs it
    sigkill_timeout later; the server's first signal comes at the latest with that SIGTERM or
    when the wrapper's grace for the nodes ran out, and the wrapper kills it kill_after_s later.
    """
    arguments = {'profile': 'cpu', 'tritonserver': str(tritonserver), **PORTS}
    context, found = visit('triton_server.launch.py', arguments)
    server = processes(found, context)['tritonserver']
    sigterm_s = float(perform_substitutions(context, server.sigterm_timeout))
    sigkill_s = float(perform_substitutions(context, server.sigkill_timeout))
    command = server.process_details['cmd']
    kill_after_s = float(next(arg.split('=')[1] for arg in command
                              if arg.startswith('--kill-after=')))
    exit_timeout_s = float(next(arg.split('=')[1] for arg in command
                                if arg.startswith('--exit-timeout-secs=')))
    first_signal_s = max(sigterm_s, DEFAULT_GRACE_S)
    assert exit_timeout_s < kill_after_s
    assert first_signal_s + kill_after_s < sigterm_s + sigkill_s


def test_invalid_combination_fails_before_anything_starts() -> None:
    """An invalid argument combination is a PlanError before any process starts."""
    with pytest.raises(PlanError, match='needs triton_url'):
        visit('pipeline.launch.py', {'start_triton': 'false'})


def server_repository(file_name: str, arguments: dict[str, str]) -> str:
    """Return the --model-repository tritonserver is started with, or the ServerError's words."""
    try:
        context, found = visit(file_name, arguments)
    except ServerError as error:
        return f'refused: {error}'
    command = processes(found, context)['tritonserver'].process_details['cmd']
    return next(arg for arg in command if arg.startswith('--model-repository='))


@pytest.mark.parametrize('file_name', ['pipeline.launch.py', 'triton_server.launch.py'])
def test_precision_reaches_the_server(file_name: str, tritonserver: Path) -> None:
    """precision:=int8 serves (or refuses, naming the INT8 graphs) what `run` would, not fp."""
    arguments = {'profile': 'cpu', 'tritonserver': str(tritonserver), **PORTS}
    float_repository = server_repository(file_name, arguments)
    int8 = server_repository(file_name, {**arguments, 'precision': 'int8'})
    assert int8 != float_repository
    try:
        expected = server_command(pipeline_plan({**arguments, 'precision': 'int8'}).server,
                                  find_tritonserver(str(tritonserver)))
    except ServerError as error:
        assert int8 == f'refused: {error}'
    else:
        assert int8 in expected


@pytest.mark.parametrize(('file_name', 'given', 'words'), [
    ('pipeline.launch.py', {'precison': 'int8'}, "unknown argument 'precison' (did you mean "
                                                 "'precision'?)"),
    ('pipeline.launch.py', {'ground_outputs': 'false'}, "'ground_outputs' is a node parameter"),
    ('pipeline.launch.py', {'model_name': 'mine'}, 'params_file:=FILE'),
    ('perception_nodes.launch.py', {'profile': 'cpu'},
     "'profile' is an argument of pipeline.launch.py, not of this file"),
    ('triton_server.launch.py', {'camera_topic': '/a'},
     "'camera_topic' is an argument of pipeline.launch.py"),
])
def test_an_undeclared_argument_is_refused_in_one_line(file_name: str, given: dict[str, str],
                                                       words: str) -> None:
    """Before anything starts; `run` refuses the same words for pipeline.launch.py."""
    with pytest.raises(PlanError) as refused:
        visit(file_name, given)
    assert words in str(refused.value) and '\n' not in str(refused.value)
    assert str(refused.value).startswith(f'{file_name}: ')
    if file_name == 'pipeline.launch.py':
        with pytest.raises(PlanError) as by_run:
            parse_launch_arguments([f'{name}:={value}' for name, value in given.items()])
        assert str(by_run.value) == str(refused.value)


def test_autostart_reaches_the_nodes(ament_prefix: Path) -> None:
    """autostart:=false is a parameter of the nodes; the default leaves the params file's."""
    arguments = {'start_triton': 'false', 'triton_url': 'jetson.local:8001'}
    for value, expected in (('false', {'autostart': False}), ('', {})):
        context, found = visit('pipeline.launch.py', {**arguments, 'autostart': value})
        handler = next(action for action in found if isinstance(action, RegisterEventHandler))
        plan = pipeline_plan({**arguments, 'autostart': value})
        assert all(expected.items() <= node.parameters.items() for node in plan.nodes
                   if node.executable != 'overlay_node')
        assert all('autostart' not in node.parameters for node in plan.nodes) == (not expected)
        assert handler is not None and context is not None


# A value other than the default for every argument, with what it needs beside it.
ANOTHER_VALUE: dict[str, dict[str, str]] = {
    'camera_topic': {'camera_topic': '/other/image_raw'},
    'camera_info_topic': {'camera_info_topic': '/other/camera_info'},
    'cameras': {'cameras': 'front=/front/image_raw,rear=/rear/image_raw'},
    'input_transport': {'input_transport': 'compressed'},
    'start_triton': {'start_triton': 'false', 'triton_url': 'jetson.local:8001'},
    'triton_url': {'start_triton': 'false', 'triton_url': 'jetson.local:9001'},
    'tritonserver': {'tritonserver': 'SECOND_RELEASE'},
    'model_repository': {'model_repository': 'REPOSITORY_COPY'},
    'profile': {'profile': 'tensorrt'},
    'precision': {'precision': 'int8'},
    'grpc_port': {'grpc_port': '18611'},
    'http_port': {'http_port': '18610'},
    'metrics_port': {'metrics_port': '18612'},
    'respawn_triton': {'respawn_triton': 'false'},
    'respawn_delay': {'respawn_delay': '7.5'},
    'params_file': {'params_file': 'PARAMS_COPY'},
    'enable_detections': {'enable_detections': 'false'},
    'enable_lanes': {'enable_lanes': 'false'},
    'enable_overlay': {'enable_overlay': 'false'},
    'rviz': {'rviz': 'true'},
    'namespace': {'namespace': '/perception'},
    'process_layout': {'process_layout': 'per_node'},
    'cameras_per_process': {'cameras': 'a=/a/image,b=/b/image', 'cameras_per_process': '1'},
    'camera_priorities': {'camera_priorities': '/=always'},
    'max_batch': {'cameras': 'a=/a/image,b=/b/image', 'max_batch': '1'},
    'autostart': {'autostart': 'false'},
    'use_sim_time': {'use_sim_time': 'true'},
}


def launched(arguments: dict[str, str]) -> list[str]:
    """
    Return what pipeline.launch.py starts for `arguments`, as text.

    Its processes (server, gate, rviz2) as launch prepares them, and the nodes it starts after
    the gate as the plan gives them (check_nodes holds the launched nodes to the plan).
    """
    context, found = visit('pipeline.launch.py', arguments)
    seen = [str(node) for node in pipeline_plan(arguments).nodes]
    for action in found:
        if isinstance(action, ExecuteProcess) and not isinstance(action, Node):
            action.prepare(context)
            details = action.process_details
            # respawn and its delay are private to launch's ExecuteLocal: read them by name.
            respawn = sorted((key, str(value)) for key, value in vars(action).items()
                             if 'respawn' in key)
            seen.append(f"{details['name'].rsplit('-', 1)[0]}: {details['cmd']} {respawn}")
    return seen


def test_every_argument_has_an_effect_through_the_launch_file(
        ament_prefix: Path, tritonserver: Path, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Each declared argument, set to another value, changes what the launch file starts."""
    assert sorted(ANOTHER_VALUE) == sorted(ARGUMENT_NAMES)
    viewer = stand_in_rviz2(tmp_path / 'bin')
    monkeypatch.setenv('PATH', f"{viewer.parent}{os.pathsep}{os.environ['PATH']}")
    repository = tmp_path / 'repository'
    shutil.copytree(REPO / 'model_repository', repository, symlinks=True,
                    ignore=shutil.ignore_patterns('*.onnx', '*.plan'))
    for step in ('yolov5_model', 'lane_model'):  # what precision int8 serves, as stand-ins
        version = repository / step / '1'
        version.mkdir(parents=True, exist_ok=True)
        for name in ('model_int8.onnx', 'model_int8_tensorrt.onnx'):
            (version / name).write_bytes(name.encode())
        (version / 'model_int8.onnx.json').write_text(json.dumps({
            'calibration': {'summary': 'stand-in'},
            'int8_sha256': sha256_of(version / 'model_int8.onnx'),
            'tensorrt_graph_sha256': sha256_of(version / 'model_int8_tensorrt.onnx')}))
    params = tmp_path / 'params.yaml'
    shutil.copy(REPO / 'config' / 'params.yaml', params)
    places = {'SECOND_RELEASE': str(stand_in_release(tmp_path / 'second')),
              'REPOSITORY_COPY': str(repository), 'PARAMS_COPY': str(params)}
    base = {'profile': 'cpu', 'tritonserver': str(tritonserver), 'model_repository':
            str(repository), **PORTS}
    default = launched(base)
    for name, values in ANOTHER_VALUE.items():
        arguments = {**base, **{key: places.get(value, value) for key, value in values.items()}}
        if name == 'model_repository':
            arguments['model_repository'] = str(shutil.copytree(
                repository, tmp_path / 'repository_2', symlinks=True))
        assert launched(arguments) != default, f'{name} changed nothing the launch starts'


def test_rviz_runs_through_the_parent_death_wrapper_or_is_refused(
        ament_prefix: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """rviz:=true starts rviz2 as every other process (ending with launch), or refuses in a line."""
    arguments = {'start_triton': 'false', 'triton_url': 'jetson.local:8001', 'rviz': 'true'}
    monkeypatch.setenv('PATH', str(tmp_path / 'empty'))
    with pytest.raises(PlanError, match='rviz:=true, but rviz2 is not on PATH'):
        visit('pipeline.launch.py', arguments)
    viewer = stand_in_rviz2(tmp_path / 'bin')
    monkeypatch.setenv('PATH', str(viewer.parent))
    context, found = visit('pipeline.launch.py', arguments)
    rviz = processes(found, context)['rviz2'].process_details['cmd']
    assert rviz[:3] == [sys.executable, '-m', 'triton_perception.system.parent_death']
    assert rviz[-3:-1] == [str(viewer), '-d'] and rviz[-1].endswith('config/pipeline.rviz')
