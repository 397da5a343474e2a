"""
The Triton releases docs/orin.md names (their command lines), and engines that misfit configs.

r24.03 (2.44.0, JetPack 6.0) has no --model-config-name: the CPU profile is served from a view
of the repository instead, on every release. A stand-in that parses options as r24.03 does
(stand_in_tritonserver) accepts the package's command line and, in front of the real 2.51
server, serves the CPU profile; a release that refuses an option is refused before anything
starts, with one line, instead of a respawn loop. A frame range chosen for the engines and then
lost to a rebuild of the package stops the start with the command that mends it.
"""
from __future__ import annotations

from dataclasses import replace
import json
from pathlib import Path
import shutil
import subprocess
import sys

import pytest

from support.checkout import REPO
from support.server_stand_ins import config_for, repository_with_onnx, stand_in_trtexec
from support.stand_in_tritonserver import R24_03_OPTIONS, stand_in_release
from triton_perception.frames.frame_range import frame_range_of, FrameRange, parse_size
from triton_perception.serving.server.engines import (build_engines, engine_mismatches,
                                                      EngineRecord, stale_engines)
from triton_perception.serving.server.profile_repository import profile_repository, view_links
from triton_perception.serving.server.server_config import ServerError
from triton_perception.serving.server.server_installation import (find_tritonserver,
                                                                  server_command,
                                                                  TritonInstallation)
from triton_perception.serving.server.triton_server import TritonServer
from triton_perception.system import sha256_of
from triton_perception.system.processes import free_ports


def test_the_cpu_view_links_each_steps_cpu_config_and_everything_else(tmp_path: Path) -> None:
    """config.pbtxt is configs/cpu.pbtxt where a step has one; the rest is the repository's."""
    repository = repository_with_onnx(tmp_path / 'repo')
    shutil.copytree(REPO / 'model_repository' / 'yolov5', repository / 'yolov5')
    view = profile_repository(repository, 'cpu', tmp_path / 'cache')
    for step in ('yolov5_model', 'lane_model'):
        assert (view / step / 'config.pbtxt').resolve() == (
            repository / step / 'configs' / 'cpu.pbtxt').resolve()
        assert (view / step / '1' / 'model.onnx').read_bytes() == step.encode()
        assert not (view / step / 'configs').exists()
    assert (view / 'yolov5' / 'config.pbtxt').resolve() == (
        repository / 'yolov5' / 'config.pbtxt').resolve()
    # Servers started side by side share the view; a new model makes a new one.
    assert profile_repository(repository, 'cpu', tmp_path / 'cache') == view
    (repository / 'yolov5' / 'labels.txt').write_text('person\n')
    assert profile_repository(repository, 'cpu', tmp_path / 'cache') != view
    assert 'yolov5/labels.txt' in view_links(repository)
    assert profile_repository(repository, 'tensorrt', tmp_path / 'cache') == repository.resolve()


def test_r24_03_accepts_the_cpu_profiles_command_line(tmp_path: Path) -> None:
    """The CPU profile's command line has only options that Triton 2.44.0 parses."""
    binary = stand_in_release(tmp_path)
    command = server_command(config_for(REPO / 'model_repository', 'cpu', binary),
                             find_tritonserver(str(binary)))
    assert not any(argument.startswith('--model-config-name') for argument in command)
    repository = Path(next(argument for argument in command
                           if argument.startswith('--model-repository='))
                      .removeprefix('--model-repository='))
    assert (repository / 'yolov5_model' / 'config.pbtxt').resolve() == (
        REPO / 'model_repository' / 'yolov5_model' / 'configs' / 'cpu.pbtxt').resolve()


def test_a_release_that_refuses_an_option_is_refused_before_it_starts(tmp_path: Path) -> None:
    """One line naming the option and what to do, raised before any process starts."""
    options = [option for option in R24_03_OPTIONS if option != 'metrics-address']
    binary = stand_in_release(tmp_path, options)
    config = config_for(REPO / 'model_repository', 'cpu', binary)
    with pytest.raises(ServerError) as refused:
        server_command(config, find_tritonserver(str(binary)))
    message = str(refused.value)
    assert '\n' not in message
    assert 'does not accept --metrics-address' in message and 'docs/orin.md' in message
    server = TritonServer(config, log=lambda _line: None)
    with pytest.raises(ServerError, match='--metrics-address'):
        server.start()
    assert server.pid is None
    # Only the usage was asked for: the server itself was never started.
    assert (tmp_path / 'calls.log').read_text().splitlines() == ['--help']


@pytest.mark.server
@pytest.mark.slow
def test_the_cpu_profile_serves_through_r24_03s_command_line(tmp_path: Path,
                                                             triton_server: TritonServer) -> None:
    """The stand-in parses as r24.03 does, then runs the real server: both ensembles get ready."""
    real: TritonInstallation = find_tritonserver()
    binary = stand_in_release(tmp_path, real=real)
    server = TritonServer(config_for(REPO / 'model_repository', 'cpu', binary),
                          log=lambda _line: None, show_server_log=False)
    with server:
        assert server.poll() is None
    calls = (tmp_path / 'calls.log').read_text().splitlines()
    assert calls[0] == '--help' and '--model-repository=' in calls[1]


def test_a_frame_range_lost_to_a_rebuild_stops_the_start(tmp_path: Path) -> None:
    """
    Engines for 1280x720, then the shipped configs back (a rebuild): the start says what to run.

    The command it gives declares the engines' range again without rebuilding them, and the
    next start goes ahead.
    """
    repository = repository_with_onnx(tmp_path / 'repo')
    trtexec = stand_in_trtexec(tmp_path)
    build_engines(repository, str(trtexec), frame_range=FrameRange((1280, 720), (1280, 720)),
                  log=lambda _line: None)
    for step in ('yolov5_model', 'lane_model'):  # what `colcon build` installs again
        shutil.copy(REPO / 'model_repository' / step / 'config.pbtxt', repository / step)
    binary = stand_in_release(tmp_path / 'release')
    config = config_for(repository, 'tensorrt', binary)
    with pytest.raises(ServerError) as refused:
        server_command(config, find_tritonserver(str(binary)))
    command = (f'triton-perception engines build --model-repository {repository} '
               '--min-frame 1280x720 --max-frame 1280x720')
    assert 'yolov5_model (model.plan): its engine takes frames 1280x720 to 1280x720, its ' \
        'config declares 1x1 to 3840x2160' in str(refused.value)
    assert str(refused.value).endswith(f'run: {command}')
    builds = len((tmp_path / 'calls.log').read_text().splitlines())
    lines: list[str] = []
    build_engines(repository, str(trtexec), frame_range=FrameRange((1280, 720), (1280, 720)),
                  log=lines.append)
    assert len((tmp_path / 'calls.log').read_text().splitlines()) == builds, 'nothing rebuilt'
    assert sum('is current' in line for line in lines) == 2
    assert engine_mismatches(repository) == []
    server_command(config, find_tritonserver(str(binary)))


def test_an_engine_of_another_tensorrt_stops_the_start(tmp_path: Path) -> None:
    """The TensorRT trtexec reports (or its banner number) is compared with this machine's."""
    repository = repository_with_onnx(tmp_path / 'repo')
    build_engines(repository, str(stand_in_trtexec(tmp_path)), log=lambda _line: None)
    record = json.loads((repository / 'lane_model' / '1' / 'model.plan.json').read_text())
    assert record['tensorrt'] == '10.3.0'
    assert engine_mismatches(repository, tensorrt='10.3.0') == []
    problems = engine_mismatches(repository, tensorrt='8.6.2')
    assert 'lane_model (model.plan): its engine was built with TensorRT 10.3.0, this machine ' \
        'has TensorRT 8.6.2' in problems
    assert problems[-1].startswith('run: triton-perception engines build')
    assert EngineRecord('x', '8602', 'd', 'fp16').mismatches(FrameRange(), '8.6.2') == []


def test_a_symlink_install_leaves_the_source_checkout_untouched(tmp_path: Path) -> None:
    """`colcon build --symlink-install` links the configs into the checkout: they are replaced."""
    source = repository_with_onnx(tmp_path / 'source')
    installed = tmp_path / 'install'
    for step in ('yolov5_model', 'lane_model'):
        (installed / step / '1').mkdir(parents=True)
        (installed / step / 'configs').mkdir()
        (installed / step / '1' / 'model.onnx').write_bytes(step.encode())
        for config in ('config.pbtxt', 'configs/cpu.pbtxt'):
            (installed / step / config).symlink_to(source / step / config)
    before = {path: path.read_text() for path in source.rglob('*.pbtxt')}
    build_engines(installed, str(stand_in_trtexec(tmp_path)),
                  frame_range=FrameRange(parse_size('640x480'), parse_size('640x480')),
                  log=lambda _line: None)
    assert {path: path.read_text() for path in source.rglob('*.pbtxt')} == before
    for config in installed.rglob('*.pbtxt'):
        assert not config.is_symlink()
        assert str(frame_range_of(config.read_text())) == '640x480 to 640x480'


@pytest.mark.server
def test_server_check_prints_the_release_through_r24_03s_command_line(tmp_path: Path) -> None:
    """`server --check` reads the version from the running server: Triton has no --version."""
    binary = stand_in_release(tmp_path, real=find_tritonserver())
    ports = [str(port) for port in free_ports(3)]
    result = subprocess.run(
        [sys.executable, '-m', 'triton_perception.cli', 'server', '--check', '--tritonserver',
         str(binary), '--http-port', ports[0], '--grpc-port', ports[1], '--metrics-port',
         ports[2]], capture_output=True, text=True, timeout=120, check=False)
    lines = result.stdout.splitlines()
    assert f'found    tritonserver: 2.51.0 at {binary} (the path given); it runs and takes the ' \
        'command line this package gives it' in lines, result.stdout + result.stderr
    assert result.returncode == (0 if lines[-1].startswith('found') else 1), result.stdout


def int8_step_files(repository: Path) -> None:
    """Give each step stand-in INT8 files and the record naming them, as models quantize does."""
    for step in ('yolov5_model', 'lane_model'):
        version = repository / step / '1'
        for name in ('model_int8.onnx', 'model_int8_tensorrt.onnx'):
            (version / name).write_bytes(f'{step} {name}'.encode())
        (version / 'model_int8.onnx.json').write_text(json.dumps({
            'calibration': {'summary': 'calibration A'},
            'int8_sha256': sha256_of(version / 'model_int8.onnx'),
            'tensorrt_graph_sha256': sha256_of(version / 'model_int8_tensorrt.onnx')}))


def test_int8_engines_follow_the_frame_range_and_go_stale_with_a_new_calibration(
        tmp_path: Path) -> None:
    """The INT8 build applies the frame range; a new TensorRT graph stops the start."""
    repository = repository_with_onnx(tmp_path / 'repo')
    int8_step_files(repository)
    trtexec = stand_in_trtexec(tmp_path)
    build_engines(repository, str(trtexec), log=lambda _line: None)
    build_engines(repository, str(trtexec), frame_range=FrameRange((1280, 720), (1280, 720)),
                  log=lambda _line: None, int8=True)
    record = json.loads((repository / 'lane_model' / '1' / 'model_int8.plan.json').read_text())
    assert record['frame_range'] == '1280x720 to 1280x720'
    assert frame_range_of((repository / 'lane_model' / 'config.pbtxt').read_text()) == \
        FrameRange((1280, 720), (1280, 720))
    problems = engine_mismatches(repository)
    assert any('(model.plan): its engine takes frames 1x1 to 3840x2160' in problem
               for problem in problems), problems
    build_engines(repository, str(trtexec), log=lambda _line: None)  # the float ones again
    assert engine_mismatches(repository) == [] and stale_engines(repository) == []
    (repository / 'lane_model' / '1' / 'model_int8_tensorrt.onnx').write_bytes(b'calibration B')
    binary = stand_in_release(tmp_path / 'release')
    with pytest.raises(ServerError) as refused:
        server_command(config_for(repository, 'tensorrt', binary),
                       find_tritonserver(str(binary)))
    assert 'model_int8.plan: its ONNX file changed since the engine was built; rebuild with ' \
        "'triton-perception engines build --int8'" in str(refused.value)


def test_a_half_installed_int8_step_is_named_and_refused(tmp_path: Path) -> None:
    """A step whose INT8 graph is not the one its record names: precision int8 refuses it."""
    repository = repository_with_onnx(tmp_path / 'repo')
    int8_step_files(repository)
    binary = stand_in_release(tmp_path / 'release')
    config = replace(config_for(repository, 'cpu', binary), precision='int8')
    server_command(config, find_tritonserver(str(binary)))
    (repository / 'lane_model' / '1' / 'model_int8.onnx').write_bytes(b'from another calibration')
    with pytest.raises(ServerError, match='lane_model: model_int8.onnx is not the graph its '
                       'record model_int8.onnx.json names'):
        server_command(config, find_tritonserver(str(binary)))
