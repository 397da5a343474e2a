"""The pipeline plan the launch files and `triton-perception run` share (no ROS launch needed)."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest
import yaml

from support.checkout import REPO
from triton_perception.frames import camera_info_sibling
from triton_perception.parameters import DETECTION, LANES, OVERLAY, specs_by_name
from triton_perception.pipeline.plan import (ARGUMENT_NAMES, parse_launch_arguments, pipeline_plan,
                                             PlanError)


def test_defaults_start_a_local_server_and_one_perception_process() -> None:
    """
    By default the plan starts a local server and one perception_process on /camera/image_raw.

    The process gets no name or namespace remap, which would rename every node it hosts.
    """
    plan = pipeline_plan({})
    assert [node.executable for node in plan.nodes] == ['perception_process']
    process = plan.nodes[0]
    assert process.hosts_nodes and process.arguments == ()
    assert ('image', '/camera/image_raw') in process.remappings
    assert process.parameters['triton_url'] == '127.0.0.1:8001'
    arguments = process.ros_arguments()
    assert not any(argument.startswith(('__node:=', '__ns:=')) for argument in arguments), \
        'a __node or __ns remap would rename every node of the process'


def test_the_single_process_carries_each_camera_and_the_nodes_left_out() -> None:
    """
    The single process is told each camera and which nodes are left out.

    Each camera comes with its namespace, image and camera_info topics; the gate waits for the
    models still used only.
    """
    plan = pipeline_plan(parse_launch_arguments([
        'cameras:=front=/front/image_raw,rear=/rear/image_raw', 'namespace:=/car',
        'enable_lanes:=false']))
    (process,) = plan.nodes
    assert process.fqn == '/car/perception_process'
    assert process.arguments == (
        '--namespace=/car', '--camera=/car/front=/front/image_raw=/front/camera_info',
        '--camera=/car/rear=/rear/image_raw=/rear/camera_info', '--no-lanes')
    assert process.parameters['expect_lanes'] is False
    assert plan.ready_models == ('yolov5',)


def test_defaults_per_node_start_a_local_server_and_three_nodes() -> None:
    """
    The per_node layout starts a local server and the three nodes on the default camera.

    They read the package's params.yaml, and the server is respawned after 3 s.
    """
    plan = pipeline_plan({'process_layout': 'per_node'})
    assert plan.server is not None and plan.server.address == '127.0.0.1'
    assert plan.triton_url == '127.0.0.1:8001'
    assert [node.name for node in plan.nodes] == ['detection_node', 'lane_node', 'overlay_node']
    detection = plan.nodes[0]
    assert detection.parameters['triton_url'] == '127.0.0.1:8001'
    assert ('image', '/camera/image_raw') in detection.remappings
    assert ('image/compressed', '/camera/image_raw/compressed') in detection.remappings
    assert detection.params_file == REPO / 'config' / 'params.yaml'
    assert plan.respawn_triton and plan.respawn_delay_s == 3.0
    assert plan.rviz_config is None


def test_overrides_reach_the_nodes() -> None:
    """Launch arguments reach the nodes: topic, namespace, transport, ports, sim time, and RViz."""
    plan = pipeline_plan(parse_launch_arguments([
        'camera_topic:=/cam/front/image', 'namespace:=perception', 'input_transport:=compressed',
        'grpc_port:=9001', 'http_port:=9000', 'metrics_port:=9002', 'enable_lanes:=false',
        'use_sim_time:=true', 'respawn_triton:=false', 'rviz:=true', 'process_layout:=per_node']))
    assert plan.triton_url == '127.0.0.1:9001'
    assert [node.name for node in plan.nodes] == ['detection_node', 'overlay_node']
    detection, overlay = plan.nodes
    assert detection.namespace == '/perception'
    assert detection.parameters['input_transport'] == 'compressed'
    assert detection.parameters['use_sim_time'] is True
    assert ('image/compressed', '/cam/front/image/compressed') in detection.remappings
    assert overlay.parameters['expect_lanes'] is False
    assert not plan.respawn_triton
    assert plan.rviz_config == REPO / 'config' / 'pipeline.rviz'
    arguments = detection.ros_arguments()
    assert arguments[:2] == ['--ros-args', '-r'] and '__ns:=/perception' in arguments
    assert 'use_sim_time:=true' in arguments and 'triton_url:=127.0.0.1:9001' in arguments


def test_several_cameras_share_one_server() -> None:
    """
    Several cameras get a detection_node and a lane_node each, all on one server.

    Each pair reads its own camera's image and camera_info.
    """
    plan = pipeline_plan(parse_launch_arguments([
        'cameras:=front=/front/image_raw, rear=/rear/image_raw', 'namespace:=/car',
        'enable_overlay:=false', 'process_layout:=per_node']))
    assert [node.fqn for node in plan.nodes] == [
        '/car/front/detection_node', '/car/front/lane_node',
        '/car/rear/detection_node', '/car/rear/lane_node']
    assert [dict(node.remappings)['image'] for node in plan.nodes] == [
        '/front/image_raw', '/front/image_raw', '/rear/image_raw', '/rear/image_raw']
    assert plan.ready_models == ('yolov5', 'lane_detection')
    assert plan.server is not None and plan.server.models == ('yolov5', 'lane_detection')
    assert [dict(node.remappings)['camera_info'] for node in plan.nodes] == [
        '/front/camera_info', '/front/camera_info', '/rear/camera_info', '/rear/camera_info']


def test_camera_info_is_the_image_topics_sibling_unless_named() -> None:
    """
    camera_info is the image topic's sibling unless camera_info_topic names one.

    Several cameras cannot share one camera_info_topic.
    """
    def info_topics(**values: str) -> set[str]:
        return {dict(node.remappings)['camera_info'] for node in pipeline_plan(values).nodes}

    assert info_topics() == {'/camera/camera_info'}
    assert info_topics(camera_topic='/cam/left/image_rect') == {'/cam/left/camera_info'}
    assert info_topics(camera_info_topic='/calib/info') == {'/calib/info'}
    assert camera_info_sibling('image') == 'camera_info'
    with pytest.raises(PlanError, match='camera_info_topic'):
        pipeline_plan({'cameras': 'a=/a/image,b=/b/image', 'camera_info_topic': '/x'})


def test_remote_triton() -> None:
    """With start_triton false there is no server in the plan and the nodes use the URL given."""
    plan = pipeline_plan({'start_triton': 'false', 'triton_url': 'jetson.local:8001'})
    assert plan.server is None
    assert {node.parameters.get('triton_url') for node in plan.nodes[:2]} == {'jetson.local:8001'}


@pytest.mark.parametrize('values,message', [
    ({'start_triton': 'false'}, 'needs triton_url'),
    ({'profile': 'gpu'}, "'gpu' is not one of auto, tensorrt, cpu"),
    ({'grpc_port': 'x'}, "'grpc_port': 'x' is not a port"),
    ({'grpc_port': '70000'}, 'not a TCP port'),
    ({'grpc_port': '8000'}, 'must differ'),
    ({'enable_lanes': 'false', 'enable_detections': 'false'}, 'nothing to run'),
    ({'params_file': '/nonexistent.yaml'}, 'does not exist'),
    ({'model_repository': '/nonexistent'}, 'does not exist'),
    ({'camera_topic': ' '}, 'camera_topic'),
    ({'cameras': 'front'}, "'front' is not NAME=TOPIC"),
    ({'cameras': 'front=/a,2nd=/b'}, "'2nd=/b' is not NAME=TOPIC"),
    ({'cameras': 'front=/a,front=/b'}, "'front' is given twice"),
    ({'cameras': 'front=/a', 'camera_topic': '/b'}, 'either camera_topic'),
    ({'rviz': 'yes'}, "'yes' is not one of true, false"),
    ({'respawn_delay': 'soon'}, 'respawn_delay'),
    ({'colour': 'red'}, 'unknown argument'),
])
def test_invalid_combinations_fail_clearly(values: dict[str, str], message: str) -> None:
    """Each invalid value or combination of arguments is a PlanError saying what is wrong."""
    with pytest.raises(PlanError, match=message):
        pipeline_plan(values)


def test_launch_argument_syntax() -> None:
    """Launch arguments are name:=value; name=value is refused, saying the syntax."""
    assert parse_launch_arguments(['rviz:=true']) == {'rviz': 'true'}
    with pytest.raises(PlanError, match='name:=value'):
        parse_launch_arguments(['camera_topic=/x'])


def test_params_file_holds_every_node_parameter_with_its_default() -> None:
    """config/params.yaml holds each node's parameters, exactly, at their defaults."""
    params = yaml.safe_load((REPO / 'config' / 'params.yaml').read_text())
    for node, specs in (('detection_node', DETECTION), ('lane_node', LANES),
                        ('overlay_node', OVERLAY)):
        values = params[f'/**/{node}']['ros__parameters']
        assert values == {spec.name: spec.default for spec in specs}, node


@pytest.mark.parametrize('launch_file', ['pipeline', 'triton_server', 'perception_nodes'])
def test_launch_files_only_use_declared_plan_arguments(launch_file: str) -> None:
    """Without ROS launch here, check statically that each launch file maps plan arguments."""
    tree = ast.parse((REPO / 'launch' / f'{launch_file}.launch.py').read_text())
    names = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
    assert 'generate_launch_description' in {
        node.name for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)}
    assert 'pipeline_plan' in names
    for node in ast.walk(tree):
        if isinstance(node, ast.Tuple) and all(isinstance(item, ast.Constant)
                                               for item in node.elts):
            listed = [item.value for item in node.elts]
            if listed and all(isinstance(item, str) for item in listed) and set(listed) & set(
                    ARGUMENT_NAMES):
                assert set(listed) <= set(ARGUMENT_NAMES), listed


def test_rviz_config_names_only_published_topics() -> None:
    """The RViz config shows only topics the pipeline publishes, in the lanes' target frame."""
    config = yaml.safe_load((REPO / 'config' / 'pipeline.rviz').read_text())
    topics = []

    def collect(item: object) -> None:
        if isinstance(item, dict):
            topic = item.get('Topic')
            if isinstance(topic, dict) and 'Value' in topic:
                topics.append(topic['Value'])
            for value in item.values():
                collect(value)
        elif isinstance(item, list):
            for value in item:
                collect(value)
    collect(config)
    published = {'/camera/image_raw', '/overlay', '/detections/overlay', '/lanes/overlay',
                 '/drivable_area', '/drivable_area/grid',
                 '/lanes/markers', '/lanes/ground', '/detections/tracks/markers'}
    assert topics and set(topics) <= published, topics
    assert config['Visualization Manager']['Global Options']['Fixed Frame'] == \
        specs_by_name(LANES)['target_frame'].default
    assert Path(REPO / 'config' / 'pipeline.rviz').is_file()


def test_readiness_gate_waits_for_the_models_the_nodes_use(tmp_path: Path) -> None:
    """The gate and the server wait for the models the params file names, not the defaults."""
    params = yaml.safe_load((REPO / 'config' / 'params.yaml').read_text())
    params['/**/detection_node']['ros__parameters']['model_name'] = 'yolov8'
    custom = tmp_path / 'params.yaml'
    custom.write_text(yaml.safe_dump(params))
    plan = pipeline_plan({'params_file': str(custom), 'enable_lanes': 'false'})
    assert plan.ready_models == ('yolov8',)
    assert plan.server.models == ('yolov8',)
    assert pipeline_plan({}).ready_models == ('yolov5', 'lane_detection')


def test_cameras_per_process_groups_the_cameras_over_processes() -> None:
    """
    cameras_per_process:=2 with three cameras: two perception_processes, each camera in one.

    Each process's own node lives in its first camera's namespace (no two share a name); one
    camera per process gives each the single-camera form; 0 keeps them all in one; the default
    is groups of 2.
    """
    cameras = 'cameras:=a=/a/image,b=/b/image,c=/c/image'
    plan = pipeline_plan(parse_launch_arguments(
        [cameras, 'namespace:=/car', 'enable_overlay:=false', 'cameras_per_process:=2']))
    first, second = plan.nodes
    assert (first.fqn, second.fqn) == ('/car/a/perception_process', '/car/c/perception_process')
    assert first.arguments == ('--namespace=/car/a', '--camera=/car/a=/a/image=/a/camera_info',
                               '--camera=/car/b=/b/image=/b/camera_info', '--no-overlay')
    assert second.arguments == ('--namespace=/car/c', '--no-overlay')
    assert ('image', '/c/image') in second.remappings
    one_each = pipeline_plan(parse_launch_arguments([cameras, 'cameras_per_process:=1']))
    assert [node.fqn for node in one_each.nodes] == [
        '/a/perception_process', '/b/perception_process', '/c/perception_process']
    # The default: groups of 2 (two processes for three cameras); 0 puts all in one.
    assert len(pipeline_plan(parse_launch_arguments([cameras])).nodes) == 2
    assert len(pipeline_plan(parse_launch_arguments([cameras, 'cameras_per_process:=0'])).nodes) \
        == 1
    with pytest.raises(PlanError, match="'cameras_per_process': 'two'"):
        pipeline_plan(parse_launch_arguments([cameras, 'cameras_per_process:=two']))
