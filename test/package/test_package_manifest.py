"""
package.xml as rosdep and colcon read it on a user's ROS machine.

Every dependency key resolves, for Humble (JetPack 6) and Jazzy, against the offline copy of
ros/rosdistro in ../shared/rosdistro (a key that resolves nowhere makes `rosdep install` fail for
every user).
"""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import pytest
import yaml

from support.checkout import REPO, shared_path
from support.package_dependencies import dependency_keys, pip_packages

OWN_ROSDEP_FILE = REPO / 'rosdep' / 'triton_perception.yaml'
PYTHON_PACKAGES = {'tf2_ros': 'tf2_ros_py'}


@lru_cache(maxsize=None)
def released_packages(distribution: str) -> frozenset[str]:
    """Return the packages released in `distribution`, from the offline rosdistro."""
    data = yaml.safe_load(shared_path('rosdistro', distribution, 'distribution.yaml').read_text())
    packages = set()
    for name, repository in data['repositories'].items():
        release = repository.get('release')
        if release:
            packages.update(release.get('packages', [name]))
    return frozenset(packages)


@lru_cache(maxsize=None)
def rosdep_keys(source: Path) -> frozenset[str]:
    """Return the keys a rosdep YAML file defines."""
    return frozenset(yaml.safe_load(source.read_text()))


def upstream_rosdep_keys() -> frozenset[str]:
    """Return the keys of rosdistro's base and python rosdep files."""
    return (rosdep_keys(shared_path('rosdistro', 'rosdep', 'base.yaml'))
            | rosdep_keys(shared_path('rosdistro', 'rosdep', 'python.yaml')))


@pytest.mark.parametrize('distribution', ['humble', 'jazzy'])
def test_every_dependency_key_resolves(distribution: str) -> None:
    """
    Every key of package.xml is a released package, an upstream rosdep key or one of ours.

    A key that resolves nowhere makes `rosdep install` fail for every user.
    """
    own = rosdep_keys(OWN_ROSDEP_FILE)
    unresolved = [key for key in dependency_keys()
                  if key not in released_packages(distribution)
                  and key not in upstream_rosdep_keys() and key not in own]
    assert unresolved == [], (f'not a {distribution} package nor a rosdep key: {unresolved}')


def test_own_rosdep_keys_are_needed_installable_and_documented() -> None:
    """
    Keys the project defines itself.

    Only where rosdistro has none, each with a pip package for Ubuntu and Debian, and the README
    tells users how to register the file.
    """
    keys = dependency_keys()
    for key, rules in yaml.safe_load(OWN_ROSDEP_FILE.read_text()).items():
        assert key in keys, f'{key} is defined but package.xml does not use it'
        assert key not in upstream_rosdep_keys(), f'{key} exists upstream: use that one'
        for platform in ('debian', 'ubuntu:jammy', 'ubuntu:noble'):
            assert pip_packages(rules, platform), (key, platform)
    readme = (REPO / 'README.md').read_text()
    assert 'rosdep/triton_perception.yaml' in readme and 'sources.list.d' in readme


def test_imported_ros_packages_are_declared() -> None:
    """Every ROS package the Python code imports is a dependency of package.xml."""
    imported = set()
    for path in [*(REPO / 'triton_perception').rglob('*.py'), *(REPO / 'launch').glob('*.py')]:
        for line in path.read_text().splitlines():
            words = line.split()
            if len(words) >= 2 and words[0] in ('import', 'from'):
                imported.add(words[1].split('.')[0])
    ros_packages = imported & (released_packages('humble') | released_packages('jazzy'))
    # Python modules whose package has another name: tf2_ros (Python) is package tf2_ros_py.
    ros_packages = {PYTHON_PACKAGES.get(name, name) for name in ros_packages}
    missing = sorted(ros_packages - set(dependency_keys()))
    assert missing == [], f'imported but not in package.xml: {missing}'
