"""
`rosdep install` keeps the distribution's NumPy: no pip key of package.xml pulls NumPy 2.

On Jammy (Humble, JetPack 6) apt's OpenCV and SciPy are built for NumPy 1.21.5 and stop
importing when pip replaces it (ros-perception/vision_opencv #535). rosdep installs a pip key
by running `pip install -U PACKAGE` for each of its packages in turn
(rosdep2/platforms/pip.py), with the package's pip constraints (rosdep/constraints.txt, passed
as PIP_CONSTRAINT), and pip then upgrades a dependency only where the installed one does not
satisfy it. This test replays that with pip's own resolver for the target: every package of
every pip key, Python 3.10 on aarch64 (Jammy's glibc 2.35 wheels), starting from Jammy's apt
NumPy and SciPy; a dependency on a NumPy the apt one does not satisfy fails it, and so does a
package the keys install that tritonclient's gRPC client does not work with.
Noble (Jazzy) is checked the same way with its NumPy 1.26.4. It asks the package index, so it
needs the registry CI reaches.
"""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
import json
from pathlib import Path
import subprocess
import sys
import tempfile
from typing import Any

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version
import pytest

from support.checkout import REPO
from support.package_dependencies import pip_keys, pip_packages
from support.target_versions import APT_NUMERICS, JAMMY_PYTHON


@dataclass(frozen=True)
class Target:
    """A distribution's Python, platform and the apt Python packages pip finds installed."""

    codename: str
    python: str
    machine: str
    glibc_minor: int
    apt: dict[str, str]

    def platforms(self) -> list[str]:
        """Every wheel platform tag the target's glibc runs, for pip's --platform."""
        return ['manylinux2014_' + self.machine, *(
            f'manylinux_2_{minor}_{self.machine}' for minor in range(17, self.glibc_minor + 1))]

    def marker_environment(self, extra: str) -> dict[str, str]:
        """Return the target's environment markers, with `extra` as the extra asked for."""
        return {'python_version': self.python, 'python_full_version': self.python + '.0',
                'platform_machine': self.machine, 'sys_platform': 'linux',
                'platform_system': 'Linux', 'os_name': 'posix',
                'implementation_name': 'cpython', 'platform_python_implementation': 'CPython',
                'extra': extra}


TARGETS = [
    Target('jammy', JAMMY_PYTHON, 'aarch64', 35, APT_NUMERICS['jammy']),
    Target('noble', '3.12', 'x86_64', 39, APT_NUMERICS['noble']),
]


def target_constraints(target: Target, directory: Path) -> Path:
    """
    Write rosdep/constraints.txt as pip reads it on the target: its markers evaluated there.

    (pip evaluates a constraint's markers for the interpreter it runs in, not --python-version.)
    """
    lines = []
    for line in (REPO / 'rosdep' / 'constraints.txt').read_text().splitlines():
        if line.strip() and not line.startswith('#'):
            requirement = Requirement(line)
            if requirement.marker is None or requirement.marker.evaluate(
                    target.marker_environment('')):
                requirement.marker = None
                lines.append(str(requirement))
    path = directory / 'constraints.txt'
    path.write_text('\n'.join(lines) + '\n')
    return path


# pip's reports by (package, target, constrained): a resolution depends on nothing else.
RESOLVED: dict[tuple[str, str, bool], list[dict[str, Any]]] = {}


def resolve(package: str, target: Target, constrained: bool = True) -> list[dict[str, Any]]:
    """Return pip's report of what `pip install PACKAGE` installs for the target."""
    key = (package, target.codename, constrained)
    if key not in RESOLVED:
        RESOLVED[key] = resolved_by_pip(package, target, constrained)
    return RESOLVED[key]


def resolved_by_pip(package: str, target: Target, constrained: bool) -> list[dict[str, Any]]:
    """Ask pip (a dry run against the package index) what `pip install PACKAGE` installs."""
    with tempfile.TemporaryDirectory() as directory:
        report = Path(directory) / 'report.json'
        constraints = ['--constraint', str(target_constraints(target, Path(directory)))] \
            if constrained else []
        platforms = [argument for tag in target.platforms() for argument in ('--platform', tag)]
        result = subprocess.run(
            [sys.executable, '-m', 'pip', 'install', '--dry-run', '--quiet', '--ignore-installed',
             '--target', directory, '--python-version', target.python, *platforms,
             '--only-binary=:all:', *constraints, '--report', str(report), package],
            capture_output=True, text=True, timeout=300)
        assert result.returncode == 0, f'pip cannot install {package} for {target}:\n' \
            f'{result.stderr[-2000:]}'
        installed: list[dict[str, Any]] = json.loads(report.read_text())['install']
        return installed


def numpy_problems(package: str, target: Target, installed: dict[str, str],
                   constrained: bool = True) -> list[str]:
    """
    Replay `pip install -U PACKAGE` over `installed` ({name: version}), updating it.

    Returns what would replace the apt NumPy: a requirement on numpy that its version fails.
    """
    resolved = resolve(package, target, constrained)
    report = {canonicalize_name(item['metadata']['name']): item for item in resolved}
    top = canonicalize_name(Requirement(package).name)
    pending = [(top, set(Requirement(package).extras))]
    problems = []
    while pending:
        name, extras = pending.pop()
        metadata = report[name]['metadata']
        installed[name] = metadata['version']
        for line in metadata.get('requires_dist') or []:
            requirement = Requirement(line)
            if requirement.marker and not any(
                    requirement.marker.evaluate(target.marker_environment(extra))
                    for extra in ('', *extras)):
                continue
            dependency = canonicalize_name(requirement.name)
            have = installed.get(dependency)
            kept = have is not None and requirement.specifier.contains(Version(have),
                                                                       prereleases=True)
            if kept:
                continue  # pip keeps what satisfies the requirement
            if dependency == 'numpy':
                problems.append(f'{metadata["name"]} {metadata["version"]} requires '
                                f'{requirement}, and apt has numpy {have}')
                continue
            pending.append((dependency, set(requirement.extras)))
    return problems


@pytest.mark.slow
@pytest.mark.parametrize('target', TARGETS, ids=[target.codename for target in TARGETS])
def test_no_pip_key_replaces_the_distributions_numpy(target: Target) -> None:
    """
    No package of a pip key makes pip replace the target's apt NumPy.

    Each key has pip packages for the target, and NumPy is still apt's after them all.
    """
    installed = dict(target.apt)
    problems = []
    packages_of = {key: pip_packages(rules, f'ubuntu:{target.codename}')
                   for key, rules in sorted(pip_keys().items())}
    # Each resolution waits mostly on the package index and needs no other (the replay below
    # does, in order): asked side by side, they take the time of the slowest few.
    with ThreadPoolExecutor(max_workers=4) as pool:
        list(pool.map(lambda package: resolve(package, target),
                      [package for packages in packages_of.values() for package in packages]))
    for key, packages in packages_of.items():
        assert packages, f'{key} has no pip packages for ubuntu:{target.codename}'
        for package in packages:
            found = numpy_problems(package, target, installed)
            problems += [f'{key}: {problem}' for problem in found]
    assert problems == [], '\n'.join(problems)
    assert installed['numpy'] == target.apt['numpy']
    # What tritonclient's `grpc` extra needs, installed by the key's own packages.
    for line in grpc_client_requirements(installed['tritonclient'], target):
        requirement = Requirement(line)
        assert requirement.specifier.contains(Version(installed[canonicalize_name(
            requirement.name)]), prereleases=True), (requirement, installed)


def grpc_client_requirements(version: str, target: Target) -> list[str]:
    """Return the requirements tritonclient `version`'s grpc extra adds, for the target."""
    resolved = resolve(f'tritonclient[grpc]=={version}', target)
    metadata = next(item['metadata'] for item in resolved
                    if item['metadata']['name'] == 'tritonclient')
    return [line for line in metadata['requires_dist']
            if 'extra' in line and Requirement(line).marker is not None
            and Requirement(line).marker.evaluate(target.marker_environment('grpc'))
            and not Requirement(line).marker.evaluate(target.marker_environment(''))]


@pytest.mark.slow
def test_an_unpinned_onnx_is_caught() -> None:
    """Positive control: unconstrained, the newest onnx needs a newer NumPy than Jammy's."""
    installed = dict(TARGETS[0].apt)
    found = numpy_problems('onnx', TARGETS[0], installed, constrained=False)
    assert any('requires numpy' in problem for problem in found), found


def test_the_documented_rosdep_line_resolves_wheels_only_as_this_test_does() -> None:
    """
    The pages' `rosdep install` runs with PIP_ONLY_BINARY=:all:, as `resolve` passes.

    pip resolves for another platform only with binaries (`--only-binary=:all:`), so this test
    cannot resolve as a plain Jammy pip 22.0.2 would, which compiles an sdist where the newest
    release has no wheel; the documented line makes the robot's pip take wheels only, as here.
    """
    for page in (REPO / 'README.md', REPO / 'docs' / 'orin.md'):
        text = page.read_text(encoding='utf-8')
        before_rosdep = text.split('rosdep install --from-paths', 1)[0].rsplit('```bash', 1)[1]
        assert 'export PIP_ONLY_BINARY=:all:' in before_rosdep, page


# The PC's server of docs/ros-pc.md: x86_64 only, on each distribution's Python.
PC_TARGETS = [Target('jammy', JAMMY_PYTHON, 'x86_64', 35, APT_NUMERICS['jammy']),
              Target('noble', '3.12', 'x86_64', 39, APT_NUMERICS['noble'])]


def pytriton_pin() -> str:
    """Return the nvidia-pytriton pin of the development environment (dev/requirements.txt)."""
    for line in (REPO / 'dev' / 'requirements.txt').read_text(encoding='utf-8').splitlines():
        if line.startswith('nvidia-pytriton=='):
            return line.strip()
    raise AssertionError('dev/requirements.txt pins no nvidia-pytriton')


def test_the_pc_page_installs_the_server_the_development_environment_runs() -> None:
    """docs/ros-pc.md's pip lines name the pinned wheel; its stubs cover Humble's and Jazzy's."""
    pin = pytriton_pin()
    page = (REPO / 'docs' / 'ros-pc.md').read_text(encoding='utf-8')
    assert page.count(f'python3 -m pip install --user {pin}') == 2, pin
    import pytriton  # the development environment has the pinned wheel
    stubs = Path(pytriton.__file__).parent / 'tritonserver' / 'python_backend_stubs'
    for target in PC_TARGETS:
        assert (stubs / target.python / 'triton_python_backend_stub').is_file(), target


@pytest.mark.slow
@pytest.mark.parametrize('target', PC_TARGETS, ids=[target.codename for target in PC_TARGETS])
def test_the_pc_server_keeps_the_distributions_numpy(target: Target) -> None:
    """`pip install --user nvidia-pytriton==...` after the pip keys, with the constraints."""
    installed = dict(target.apt)
    for rules in pip_keys().values():
        for package in pip_packages(rules, f'ubuntu:{target.codename}'):
            numpy_problems(package, target, installed)
    assert numpy_problems(pytriton_pin(), target, installed) == []
    assert installed['numpy'] == target.apt['numpy']
    assert Version(installed['nvidia-pytriton']) == Version(pytriton_pin().split('==')[1])
