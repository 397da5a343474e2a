"""
A JetPack without its parts: `server` and `engines build` stop with the cause and the apt command.

A board flashed with the BSP alone lacks CUDA, TensorRT and trtexec (NVIDIA's step is `sudo apt
install nvidia-jetpack`); Triton's core links libnuma. Such a program cannot start: the dynamic
loader prints `NAME: error while loading shared libraries: LIB: cannot open shared object file:
No such file or directory` and exits 127 (glibc's message). The stand-ins here print exactly
that, as the real binaries would on such a board.
"""
from __future__ import annotations

from pathlib import Path
import stat

import pytest

from support.checkout import REPO
from support.server_stand_ins import config_for, repository_with_onnx
from support.stand_in_tritonserver import stand_in_release
from triton_perception.serving.server.engines import build_engines, EngineBuildError, find_trtexec
from triton_perception.serving.server.server_config import ServerError
from triton_perception.serving.server.server_installation import find_tritonserver, server_command
from triton_perception.system.shared_libraries import missing_library_cause

LOADER = """#!/usr/bin/env bash
echo "$0: error while loading shared libraries: {library}: cannot open shared object file: \
No such file or directory" >&2
exit 127
"""


def unstartable(path: Path, library: str) -> Path:
    """Write a program at `path` that the loader cannot start for want of `library`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(LOADER.format(library=library))
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def test_a_tritonserver_without_libnuma_is_refused_with_the_apt_command(tmp_path: Path) -> None:
    """One line: the binary, libnuma.so.1, and `sudo apt-get install libnuma1`."""
    binary = stand_in_release(tmp_path)
    unstartable(binary, 'libnuma.so.1')
    with pytest.raises(ServerError) as refused:
        server_command(config_for(REPO / 'model_repository', 'cpu', binary),
                       find_tritonserver(str(binary)))
    message = str(refused.value)
    assert '\n' not in message
    assert message == (f'{binary} cannot start: libnuma.so.1 is missing; mend: '
                       'sudo apt-get install libnuma1')


def test_a_trtexec_without_tensorrt_names_nvidia_jetpack(tmp_path: Path) -> None:
    """With trtexec but no libnvinfer the build stops naming the library and nvidia-jetpack."""
    repository = repository_with_onnx(tmp_path / 'repo')
    trtexec = unstartable(tmp_path / 'bin' / 'trtexec', 'libnvinfer.so.8')
    with pytest.raises(EngineBuildError) as refused:
        build_engines(repository, str(trtexec), log=lambda _line: None)
    assert str(refused.value) == (f'{trtexec} cannot start: libnvinfer.so.8 is missing; mend: '
                                  'sudo apt-get install nvidia-jetpack')
    assert not list(repository.rglob('model.plan*'))


def test_no_trtexec_says_how_to_tell_and_install_jetpacks_parts(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Without trtexec anywhere the error names dpkg -l nvidia-jetpack and its install."""
    monkeypatch.setenv('PATH', '/nonexistent')
    with pytest.raises(EngineBuildError) as refused:
        find_trtexec()
    message = str(refused.value)
    assert 'dpkg -l nvidia-jetpack' in message
    assert 'sudo apt-get install nvidia-jetpack' in message


@pytest.mark.parametrize(('library', 'command'), [
    ('libcudart.so.12', 'sudo apt-get install nvidia-jetpack'),
    ('libnvonnxparser.so.10', 'sudo apt-get install nvidia-jetpack'),
    ('libre2.so.9', 'sudo apt-get install libre2-9'),
    ('libb64.so.0d', 'sudo apt-get install libb64-0d'),
    ('libfoo.so.1', 'install the package that provides libfoo.so.1 (apt-file search libfoo.so.1)'),
])
def test_each_library_maps_to_its_package(library: str, command: str) -> None:
    """The loader's message, whatever the library, gives one mend."""
    output = (f'/opt/tritonserver/bin/tritonserver: error while loading shared libraries: '
              f'{library}: cannot open shared object file: No such file or directory')
    assert missing_library_cause('tritonserver', output) == (
        f'tritonserver cannot start: {library} is missing; mend: {command}')
    assert missing_library_cause('tritonserver', 'Usage: tritonserver [options]') is None
