"""
The ROS user's path for real.

`colcon build` (plain and --symlink-install) of this checkout against the venv's ROS, `ros2 launch`
from the install space with a probe getting results, `ros2 param` and `ros2 lifecycle` on the
launched nodes, and no process outliving launch, whatever signal ends it. ROS launch and the ros2
CLI come from ../shared/ros-python.
"""
from __future__ import annotations

import os
from pathlib import Path
import signal
import subprocess
import sys
from typing import Any, Iterator

from diagnostic_msgs.msg import DiagnosticArray
import numpy as np
import pytest
from sensor_msgs.msg import Image, PointCloud2
from std_msgs.msg import Header
from vision_msgs.msg import Detection2DArray

from support.published_messages import image_message
from support.ros_cli import (colcon_build, copy_checkout, LaunchedPipeline, REPO, ros2,
                             sourced_environment, stand_in_rviz2, VENV, venv_environment)
from support.ros_helpers import Probe, wait_until
from triton_perception.frames.diagnostics import find_status
from triton_perception.system.processes import alive

pytestmark = [pytest.mark.ros, pytest.mark.server, pytest.mark.slow]

NAMESPACE = '/cli'
NODES = (f'{NAMESPACE}/detection_node', f'{NAMESPACE}/lane_node')
READY_TIMEOUT_S = 240.0


@pytest.fixture(scope='module', autouse=True)
def no_daemon_left() -> Iterator[None]:
    """`ros2 param`/`ros2 lifecycle` start the ros2 daemon, which outlives them."""
    yield
    ros2(venv_environment(), 'daemon', 'stop')


@pytest.fixture(scope='module')
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Return a colcon workspace with a copy of this checkout in src/, for the module."""
    workspace = tmp_path_factory.mktemp('colcon_ws')
    copy_checkout(workspace / 'src' / 'triton_perception')
    return workspace


@pytest.fixture(scope='module')
def installed(workspace: Path, shared: Path) -> Path:
    """Build a plain colcon install space holding the weights (the README's install commands)."""
    install = colcon_build(workspace, 'install', symlink_install=False)
    install_models(sourced_environment(install), shared)
    return install


def install_models(environment: dict[str, str], shared: Path) -> Path:
    """
    `triton-perception models install` in that environment; returns the model repository.

    (The interpreter is the venv's: the install space's console script names colcon's own.)
    """
    result = subprocess.run([sys.executable, '-m', 'triton_perception.cli', 'models', 'install',
                             '--from', str(shared / 'models')], env=environment,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    repository = subprocess.run(
        [sys.executable, '-c', 'from triton_perception.system.paths '
         'import default_model_repository as r; print(r())'],
        env=environment, capture_output=True, text=True, check=True)
    return Path(repository.stdout.strip())


@pytest.mark.parametrize('symlink_install', [False, True], ids=['plain', 'symlink-install'])
def test_colcon_build_finds_its_model_repository_and_weights(
        workspace: Path, shared: Path, symlink_install: bool,
        request: pytest.FixtureRequest) -> None:
    """
    A colcon build, plain or with --symlink-install, finds its model repository and weights.

    `ros2 pkg executables` lists the nodes, and none is installed on PATH. The plain build is
    the one the module launches the pipeline from (`installed`), so it is built once.
    """
    install = colcon_build(workspace, 'install_symlink', symlink_install=True) \
        if symlink_install else request.getfixturevalue('installed')
    environment = sourced_environment(install)
    repository = install_models(environment, shared)
    # Under the install space (with --symlink-install the Python package resolves into the
    # source tree, but the share directory is still the install space's).
    assert repository == install / 'triton_perception' / 'share' / 'triton_perception' / \
        'model_repository'
    assert (repository / 'yolov5_model' / '1' / 'model.onnx').is_file()
    assert (repository / 'lane_model' / '1' / 'model.onnx').is_file()
    executables = ros2(environment, 'pkg', 'executables', 'triton_perception')
    assert executables.returncode == 0, executables.stderr
    assert sorted(executables.stdout.split()) == sorted(
        ['triton_perception', 'detection_node', 'triton_perception', 'lane_node',
         'triton_perception', 'overlay_node', 'triton_perception', 'perception_process'])
    # Executables under lib/triton_perception only: no generic names on PATH.
    assert not any((install / 'triton_perception' / 'bin' / name).exists()
                   for name in ('detection_node', 'lane_node', 'overlay_node',
                                'perception_process'))


def test_launch_lists_its_arguments() -> None:
    """`ros2 launch ... -s` lists the pipeline's launch arguments."""
    result = ros2(venv_environment(), 'launch', 'triton_perception', 'pipeline.launch.py', '-s')
    assert result.returncode == 0, result.stderr
    for name in ('camera_topic', 'profile', 'cameras', 'params_file'):
        assert f"'{name}'" in result.stdout, result.stdout


@pytest.fixture(scope='module')
def diagnostics(probe: Probe) -> list[DiagnosticArray]:
    """Record every /diagnostics array, for the whole module."""
    return probe.record(DiagnosticArray, '/diagnostics')


def wait_ready(diagnostics: list[DiagnosticArray], pipeline: LaunchedPipeline,
               nodes: tuple[str, ...]) -> None:
    """Wait until `nodes` report Triton ready; fail with launch's output if it exits or is late."""
    def ready() -> bool:
        assert pipeline.process.poll() is None, pipeline.output()[-4000:]
        return all((status := find_status(diagnostics, node)) is not None
                   and status.triton_ready for node in nodes)
    try:
        wait_until(ready, READY_TIMEOUT_S, f'{", ".join(nodes)} active with Triton ready')
    except AssertionError:
        pipeline.kill(pipeline.processes())
        raise AssertionError(pipeline.output()[-4000:]) from None


@pytest.fixture(scope='module')
def launched(installed: Path, diagnostics: list[DiagnosticArray],
             tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """
    Launch the whole pipeline (tritonserver, readiness gate, both nodes) from colcon's install.

    The last test of the module stops it with Ctrl-C.
    """
    environment = sourced_environment(installed)
    pipeline = LaunchedPipeline.start(
        environment, tmp_path_factory.mktemp('launch') / 'launch.log',
        [f'namespace:={NAMESPACE}', f'camera_topic:={NAMESPACE}/camera/image_raw',
         'enable_overlay:=false'])
    wait_ready(diagnostics, pipeline, NODES)
    yield {'pipeline': pipeline, 'environment': environment}
    if pipeline.process.poll() is None:
        pipeline.kill(pipeline.processes())


def test_launched_pipeline_answers_frames(launched: dict[str, Any], probe: Probe,
                                          road_rgb: np.ndarray) -> None:
    """The pipeline launched from colcon's install answers a frame with detections and lanes."""
    detections = probe.record(Detection2DArray, f'{NAMESPACE}/detections')
    lanes = probe.record(PointCloud2, f'{NAMESPACE}/lanes')
    camera = probe.publisher(Image, f'{NAMESPACE}/camera/image_raw')
    probe.wait_for_subscribers(camera, 1)  # perception_process subscribes the camera once
    frame = image_message(road_rgb, Header(frame_id='camera'), 'rgb8')

    def answered() -> bool:
        camera.publish(frame)  # until both answer: the nodes may still be warming up
        return bool(detections) and bool(lanes)
    wait_until(answered, 60.0, 'detections and lanes from the launched nodes')
    assert any(detection.results for message in detections for detection in message.detections)


def test_param_describe_shows_ranges_and_choices(launched: dict[str, Any]) -> None:
    """`ros2 param describe` shows each parameter's range, choices and read-only flag."""
    environment = launched['environment']
    node = f'{NAMESPACE}/detection_node'
    described = ros2(environment, 'param', 'describe', node, 'score_threshold',
                     'max_in_flight', 'transport')
    assert described.returncode == 0, described.stderr
    text = described.stdout
    assert 'Min value: 0.0' in text and 'Max value: 1.0' in text, text
    assert 'Min value: 1' in text and 'Max value: 8' in text, text
    assert 'one of auto, grpc, shared_memory' in text, text
    assert 'Read only: true' in text, text  # transport: fixed at start-up


def test_param_set_is_live_or_refused_with_a_reason(launched: dict[str, Any]) -> None:
    """`ros2 param set` changes a live parameter; a read-only or out-of-range value is refused."""
    environment = launched['environment']
    node = f'{NAMESPACE}/detection_node'
    live = ros2(environment, 'param', 'set', node, 'score_threshold', '0.4')
    assert 'Set parameter successful' in live.stdout, live.stdout + live.stderr
    static = ros2(environment, 'param', 'set', node, 'transport', 'grpc')
    refused = static.stdout + static.stderr  # Jazzy's ros2 param prints failures on stderr
    assert 'Setting parameter failed' in refused and 'read-only' in refused, refused
    out_of_range = ros2(environment, 'param', 'set', node, 'score_threshold', '1.5')
    refused = out_of_range.stdout + out_of_range.stderr
    assert 'Setting parameter failed' in refused, refused
    value = ros2(environment, 'param', 'get', node, 'score_threshold')
    assert '0.4' in value.stdout, value.stdout + value.stderr


def test_lifecycle_set_walks_detection_node(launched: dict[str, Any],
                                            diagnostics: list[DiagnosticArray]) -> None:
    """`ros2 lifecycle set` walks detection_node through every transition and back to active."""
    environment = launched['environment']
    node = f'{NAMESPACE}/detection_node'
    assert 'active [3]' in ros2(environment, 'lifecycle', 'get', node).stdout
    for transition, state in (('deactivate', 'inactive [2]'), ('cleanup', 'unconfigured [1]'),
                              ('configure', 'inactive [2]'), ('activate', 'active [3]'),
                              ('deactivate', 'inactive [2]'), ('activate', 'active [3]')):
        result = ros2(environment, 'lifecycle', 'set', node, transition)
        assert 'Transitioning successful' in result.stdout, (transition, result.stdout,
                                                             result.stderr)
        current = ros2(environment, 'lifecycle', 'get', node).stdout
        assert state in current, (transition, current)
    wait_until(lambda: (status := find_status(diagnostics, node)) is not None
               and status.values.get('active') == 'true', 30.0, 'the node active again')


def test_ctrl_c_leaves_no_process_behind(launched: dict[str, Any]) -> None:
    """Ctrl-C to launch's process group ends launch and every process it started."""
    pipeline: LaunchedPipeline = launched['pipeline']
    stopped = pipeline.signal_and_wait_gone(signal.SIGINT, whole_group=True)
    assert len(stopped) >= 5, 'launch, tritonserver, its stubs and the nodes'


@pytest.mark.parametrize('stop_signal', [signal.SIGTERM, signal.SIGKILL],
                         ids=['SIGTERM', 'SIGKILL'])
def test_nothing_outlives_launch_whatever_ends_it(
        stop_signal: int, diagnostics: list[DiagnosticArray], tmp_path: Path) -> None:
    """
    From the development checkout (the venv's ament index), as a supervisor or script would end it.

    The signal reaches launch alone, which passes nothing on for SIGKILL (and, for SIGTERM, may end
    before its children); every process it started ends by itself.
    """
    namespace = f'/sig{int(stop_signal)}'
    viewer = stand_in_rviz2(tmp_path / 'bin', 'exec sleep 600')  # never ends by itself
    environment = venv_environment()
    environment['PATH'] = f"{viewer.parent}{os.pathsep}{environment['PATH']}"
    pipeline = LaunchedPipeline.start(
        environment, tmp_path / 'launch.log',
        [f'namespace:={namespace}', f'camera_topic:={namespace}/camera/image_raw',
         'enable_overlay:=false', 'enable_lanes:=false', 'rviz:=true'])
    wait_ready(diagnostics, pipeline, (f'{namespace}/detection_node',))
    started = pipeline.processes()
    commands = [Path(f'/proc/{pid}/cmdline').read_bytes().decode(errors='replace')
                for pid in started if alive(pid)]
    assert any('tritonserver' in command for command in commands), 'tritonserver among them'
    assert any('sleep\x00600' in command for command in commands), 'rviz2 among them'
    stopped = pipeline.signal_and_wait_gone(stop_signal, whole_group=False)
    assert set(started) <= set(stopped)


def test_launch_testing_test_of_the_pipeline_passes(tmp_path: Path) -> None:
    """
    Run test/launch_tests/pipeline_answers.py with launch_testing's own runner.

    As `colcon test` would: frames answered while launched, every process exited cleanly after.
    """
    result = subprocess.run(
        [str(VENV / 'bin' / 'launch_test'), str(REPO / 'test' / 'launch_tests' /
                                                'pipeline_answers.py')],
        env=venv_environment(), capture_output=True, text=True, timeout=600,
        stdin=subprocess.DEVNULL)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-6000:]
    assert 'test_a_camera_frame_gets_detections_and_lanes' in output and \
        'test_every_process_exited_cleanly' in output, output[-3000:]
