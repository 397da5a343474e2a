"""
`server --check`: one line per thing found or missing, on this machine and on machines handed to it.

The probes take their inputs as arguments: an NVIDIA driver's version file, a Jetson's device
model, a backends directory, a repository, the installed packages. So the report of a PC with a
GPU, of a Jetson and of a machine without any tritonserver is checked here too; the report of
this machine's real server (the nvidia-pytriton wheel's 2.51) is checked through the command.
"""
from __future__ import annotations

from pathlib import Path
import subprocess
import sys

import pytest

from triton_perception.serving.server import server_check
from triton_perception.serving.server.server_check import (backend_findings, check_findings,
                                                           container_release, Finding, gpu_finding,
                                                           profile_finding, python_findings,
                                                           repository_findings)
from triton_perception.serving.server.server_config import ServerConfig, ServerError
from triton_perception.serving.server.server_installation import TritonInstallation
from triton_perception.system.processes import free_ports

# /proc/driver/nvidia/version as the proprietary and the open kernel modules write it.
PROPRIETARY = ('NVRM version: NVIDIA UNIX x86_64 Kernel Module  560.35.03  Fri Aug 16 21:39:15 '
               'UTC 2024\nGCC version:  gcc version 12.3.0\n')
OPEN_MODULE = ('NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  550.120  Release Build  '
               '(dvs-builder@U16-I3-B03-4-3)  Tue Sep  3 09:34:11 UTC 2024\n')


def test_the_container_release_follows_the_drivers_branch() -> None:
    """R560 and later: 24.10 (Triton 2.51.0); R545 to R555: 24.03; older: update the driver."""
    assert container_release(560).startswith('nvcr.io/nvidia/tritonserver:24.10-py3 (Triton 2.51.0')
    assert container_release(575).startswith('nvcr.io/nvidia/tritonserver:24.10-py3')
    assert container_release(550).startswith('nvcr.io/nvidia/tritonserver:24.03-py3 (Triton 2.44.0')
    assert container_release(535).startswith('no supported container for a driver older than R545')


def test_the_gpu_is_read_from_the_drivers_version_file_or_the_jetsons_model(tmp_path: Path) -> None:
    """A driver's version picks the container; a Jetson is sent to docs/orin.md; none says so."""
    driver, model = tmp_path / 'version', tmp_path / 'model'
    assert gpu_finding(driver, model) == Finding(
        False, 'NVIDIA GPU', f'no NVIDIA driver ({driver}): serve the CPU profile, or install the '
        "driver and NVIDIA's Triton container (docs/ros-pc.md)")
    driver.write_text(PROPRIETARY)
    found = gpu_finding(driver, model)
    assert found.found and found.detail.startswith('driver 560.35.03; container '
                                                   'nvcr.io/nvidia/tritonserver:24.10-py3')
    driver.write_text(OPEN_MODULE)
    assert 'driver 550.120; container nvcr.io/nvidia/tritonserver:24.03-py3' in \
        gpu_finding(driver, model).detail
    model.write_text('NVIDIA Jetson AGX Orin Developer Kit\x00')
    jetson = gpu_finding(driver, model)
    assert jetson.found and jetson.detail.startswith('NVIDIA Jetson AGX Orin Developer Kit: the '
                                                     'Triton release for its JetPack')


def test_backends_say_which_profile_lacks_what(tmp_path: Path) -> None:
    """The wheel's python backend alone serves the CPU profile; the TensorRT profile lacks two."""
    (tmp_path / 'backends' / 'python').mkdir(parents=True)
    wheel = TritonInstallation(binary=tmp_path / 'tritonserver',
                               backend_directory=tmp_path / 'backends')
    lines = [finding.line() for finding in backend_findings(wheel)]
    assert lines == [f'found    backends: python (in {tmp_path / "backends"})',
                     'missing  backends of the TensorRT profile: tensorrt, onnxruntime: '
                     "NVIDIA's Triton container or a Triton release has them (docs/ros-pc.md)"]
    for name in ('tensorrt', 'onnxruntime'):
        (tmp_path / 'backends' / name).mkdir()
    assert [finding.found for finding in backend_findings(wheel)] == [True]


def test_the_repository_lacks_its_graphs_then_its_engines(tmp_path: Path) -> None:
    """Without models: both missing, naming the command; with graphs and engines: both found."""
    for step in ('yolov5_model', 'lane_model'):
        (tmp_path / step / '1').mkdir(parents=True)
        (tmp_path / step / 'config.pbtxt').write_text('platform: "tensorrt_plan"\n')
    graphs, engines = repository_findings(tmp_path, None)
    assert not graphs.found and 'run triton-perception models install' in graphs.detail
    assert not engines.found and engines.detail.startswith('none built: run triton-perception '
                                                           'engines build')
    for step in ('yolov5_model', 'lane_model'):
        (tmp_path / step / '1' / 'model.onnx').write_bytes(b'onnx')
        (tmp_path / step / '1' / 'model.plan').write_bytes(b'plan')
    assert [finding.found for finding in repository_findings(tmp_path, None)] == [True, True]


def test_numpy_2_and_a_missing_onnxruntime_are_named() -> None:
    """The CPU profile's runner needs onnxruntime, and the Python backend NumPy 1.x."""
    versions = {'onnxruntime': '1.16.3', 'numpy': '2.1.0'}
    onnxruntime, numpy = python_findings(lambda _name: object(), versions.__getitem__)
    assert onnxruntime == Finding(True, 'onnxruntime', '1.16.3')
    assert not numpy.found and numpy.what == 'numpy 1.x' and 'empty tensors' in numpy.detail
    onnxruntime, numpy = python_findings(lambda _name: None, {'numpy': '1.21.5'}.__getitem__)
    assert not onnxruntime.found and 'python3-onnxruntime-numpy1-pip' in onnxruntime.detail
    assert numpy == Finding(True, 'numpy', '1.21.5 (the Python backend needs 1.x)')


def test_the_last_line_names_what_the_chosen_profile_lacks() -> None:
    """Only what the profile needs counts: no GPU does not fail the CPU profile."""
    findings = [Finding(True, 'tritonserver', '2.51.0'), Finding(False, 'NVIDIA GPU', 'none'),
                Finding(False, 'TensorRT engines', 'none built'),
                Finding(False, 'served graphs', 'run models install')]
    assert profile_finding('cpu', findings).line() == \
        'missing  serves: not the CPU profile: it lacks served graphs'
    assert profile_finding('tensorrt', findings).detail == \
        'not the TensorRT profile: it lacks TensorRT engines, served graphs'
    assert profile_finding('cpu', findings[:3]) == Finding(
        True, 'serves', 'the CPU profile: everything it needs is here')


def test_no_tritonserver_is_a_line_of_its_own_and_the_rest_is_still_reported(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Where no server is found, the report still says what else is here, and fails."""
    def nothing(_explicit: str | None) -> TritonInstallation:
        raise ServerError('no tritonserver found: ... pip install nvidia-pytriton ...')
    monkeypatch.setattr(server_check, 'find_tritonserver', nothing)
    findings = check_findings(ServerConfig(model_repository=tmp_path, profile='cpu'),
                              start=lambda _config: pytest.fail('nothing to start'))
    assert findings[0] == Finding(False, 'tritonserver',
                                  'no tritonserver found: ... pip install nvidia-pytriton ...')
    assert {'NVIDIA GPU', 'TensorRT', 'trtexec', 'served graphs', 'TensorRT engines',
            'onnxruntime', 'tritonclient'} <= {finding.what for finding in findings}
    assert findings[-1].line().startswith('missing  serves: not the CPU profile: it lacks '
                                          'tritonserver, served graphs')


@pytest.mark.server
def test_server_check_on_this_machine_reports_the_wheels_server(tmp_path: Path) -> None:
    """The development environment: the wheel's 2.51.0, its python backend, no GPU, CPU profile."""
    ports = [str(port) for port in free_ports(3)]
    result = subprocess.run(
        [sys.executable, '-m', 'triton_perception.cli', 'server', '--check', '--profile', 'cpu',
         '--http-port', ports[0], '--grpc-port', ports[1], '--metrics-port', ports[2]],
        capture_output=True, text=True, timeout=120, check=False)
    lines = result.stdout.splitlines()
    assert lines[0].startswith('found    tritonserver: 2.51.0 at ') and \
        '(the nvidia-pytriton wheel)' in lines[0], result.stdout + result.stderr
    assert lines[1].startswith('found    backends: python (in ')
    assert 'missing  backends of the TensorRT profile: tensorrt, onnxruntime: ' \
        "NVIDIA's Triton container or a Triton release has them (docs/ros-pc.md)" in lines
    assert any(line.startswith('missing  NVIDIA GPU: no NVIDIA driver') for line in lines)
    assert all(line.startswith(('found    ', 'missing  ')) for line in lines)
    assert lines[-1].startswith(('found    serves: the CPU profile',
                                 'missing  serves: not the CPU profile'))
    assert result.returncode == (0 if lines[-1].startswith('found') else 1)
