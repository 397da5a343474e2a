"""
rosdep/constraints.txt admits only grpcio and protobuf releases tritonclient's gRPC client imports.

The pinned tritonclient's generated code says what it needs (written by protoc and grpc_tools:
`GRPC_GENERATED_VERSION` in service_pb2_grpc.py, the protobuf builder module in
service_pb2.py); the package reads the same needs at start to name what is at fault
(serving/server/grpc_client_check.py). These tests read them from the pinned release's wheel, hold
the constraints' lower bounds to them, import the client with the lowest allowed releases and
see one release below the bound refused by the constraints and named at start. They ask the
package index, as test_rosdep_numpy does.
"""
from __future__ import annotations

import os
from pathlib import Path
import subprocess
import sys
import zipfile

from packaging.requirements import Requirement
from packaging.version import Version
import pytest

from support.checkout import REPO
from triton_perception.serving import generated_requirements, grpc_client_problem

pytestmark = pytest.mark.slow
CONSTRAINTS = REPO / 'rosdep' / 'constraints.txt'


def constraint(name: str) -> Requirement:
    """Return the line of rosdep/constraints.txt that constrains `name` (without markers)."""
    for line in CONSTRAINTS.read_text(encoding='utf-8').splitlines():
        if line.strip() and not line.startswith('#') and Requirement(line).name == name \
                and Requirement(line).marker is None:
            return Requirement(line)
    raise AssertionError(f'{CONSTRAINTS} does not constrain {name}')


def lower_bound(name: str) -> str:
    """Return the version after `>=` in the constraint of `name`."""
    bounds = [spec.version for spec in constraint(name).specifier if spec.operator == '>=']
    assert len(bounds) == 1, constraint(name)
    return bounds[0]


def pip(*arguments: str) -> subprocess.CompletedProcess[str]:
    """Run this interpreter's pip quietly."""
    return subprocess.run([sys.executable, '-m', 'pip', *arguments, '--quiet',
                           '--disable-pip-version-check'], capture_output=True, text=True,
                          timeout=600)


@pytest.fixture(scope='module')
def pinned_client(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Return the pinned tritonclient's grpc folder, from its wheel."""
    directory = tmp_path_factory.mktemp('tritonclient')
    version = next(iter(constraint('tritonclient').specifier)).version
    result = pip('download', '--no-deps', '--only-binary=:all:', '-d', str(directory),
                 f'tritonclient=={version}')
    assert result.returncode == 0, result.stderr[-2000:]
    wheel = next(directory.glob('tritonclient-*.whl'))
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(directory / 'unpacked')
    return next((directory / 'unpacked').rglob('tritonclient/grpc'))


def client_environment(directory: Path, grpcio: str, protobuf: str) -> dict[str, str]:
    """Install the pinned tritonclient with these grpcio and protobuf into `directory`."""
    version = next(iter(constraint('tritonclient').specifier)).version
    result = pip('install', '--no-deps', '--only-binary=:all:', '--target', str(directory),
                 f'tritonclient=={version}', f'grpcio=={grpcio}', f'protobuf=={protobuf}')
    assert result.returncode == 0, result.stderr[-2000:]
    return {**os.environ, 'PYTHONPATH': os.pathsep.join([str(directory), str(REPO)])}


def test_the_constraints_bounds_cover_what_the_generated_code_needs(pinned_client: Path) -> None:
    """Bounds: grpcio's from GRPC_GENERATED_VERSION, protobuf's from the builder module."""
    needs = generated_requirements(pinned_client)
    assert set(needs) == {'grpcio', 'protobuf'}, needs
    for name, needed in needs.items():
        assert Version(lower_bound(name)) >= Version(needed), (name, needed, constraint(name))
    assert lower_bound('grpcio') == needs['grpcio']


def test_the_client_imports_with_the_lowest_allowed_releases(tmp_path: Path) -> None:
    """tritonclient.grpc imports with the constraints' lowest grpcio and protobuf."""
    environment = client_environment(tmp_path, lower_bound('grpcio'), lower_bound('protobuf'))
    result = subprocess.run(
        [sys.executable, '-c', 'import grpc, google.protobuf, tritonclient.grpc; '
         'print(grpc.__version__, google.protobuf.__version__)'],
        env=environment, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.split() == [lower_bound('grpcio'), lower_bound('protobuf')]


def test_a_grpcio_below_the_bound_is_refused_and_named_at_start(tmp_path: Path) -> None:
    """The constraints refuse grpcio 1.66.2; installed anyway, the start names it and the mend."""
    refused = pip('install', '--dry-run', '--no-deps', '--ignore-installed', '--only-binary=:all:',
                  '-c', str(CONSTRAINTS), 'grpcio==1.66.2')
    assert refused.returncode != 0
    assert 'grpcio' in refused.stderr
    environment = client_environment(tmp_path, '1.66.2', lower_bound('protobuf'))
    result = subprocess.run(
        [sys.executable, '-c', 'from triton_perception.serving import grpc_client_problem; '
         'print(grpc_client_problem())'],
        env=environment, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    line = result.stdout.strip()
    assert 'grpcio 1.66.2 is older than the 1.67.1 its generated code needs' in line, line
    assert 'pip install --user --upgrade -c' in line and 'constraints.txt' in line, line


def test_a_protobuf_below_the_bound_is_refused_by_the_constraints() -> None:
    """Apt's protobuf 3.12 on Jammy is below the bound: pip under the constraints takes a newer."""
    refused = pip('install', '--dry-run', '--no-deps', '--ignore-installed', '--only-binary=:all:',
                  '-c', str(CONSTRAINTS), 'protobuf==3.20.3')
    assert refused.returncode != 0
    assert 'protobuf' in refused.stderr


def test_the_installed_client_imports_here() -> None:
    """This environment's tritonclient passes the start's check."""
    assert grpc_client_problem() is None
