"""
rosdep's own pip detection finds every pip key of the package installed once it is.

rosdep decides whether a pip key is installed with `pip_detect` of its pip installer
(rosdep2/platforms/pip.py): a package counts where its name starts a `pip freeze` line or where
`pip show NAME` succeeds. A key that is not detected is reinstalled by every `rosdep install`
and reported missing by `rosdep check`. Here rosdep's code runs against this environment, which
has every package of the keys installed (dev/requirements.txt).
"""
from __future__ import annotations

import os
from pathlib import Path
import sys

import pytest
from rosdep2.platforms.pip import pip_detect

from support.package_dependencies import pip_keys, pip_packages

PLATFORMS = ('debian', 'ubuntu', 'ubuntu:jammy', 'ubuntu:noble')


@pytest.fixture
def rosdep_pip(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make rosdep find this environment's pip first, as `pip3` (ROS_PYTHON_VERSION 3)."""
    monkeypatch.setenv('ROS_PYTHON_VERSION', '3')
    monkeypatch.setenv('PATH', os.pathsep.join([str(Path(sys.executable).parent),
                                                os.environ.get('PATH', '')]))


def test_every_pip_key_is_detected_installed(rosdep_pip: None) -> None:
    """Each package of each pip key, on each platform, as rosdep's installer sees it."""
    packages = sorted({package for rules in pip_keys().values() for platform in PLATFORMS
                       for package in pip_packages(rules, platform)})
    assert 'tritonclient' in packages and 'grpcio' in packages
    assert sorted(pip_detect(packages)) == packages


def test_an_extra_is_never_detected(rosdep_pip: None) -> None:
    """Positive control: the form rosdep cannot detect, although tritonclient is installed."""
    assert pip_detect(['tritonclient[grpc]', 'onnx<1.18']) == []
