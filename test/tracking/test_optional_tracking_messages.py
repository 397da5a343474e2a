"""
Without autoware_perception_msgs the nodes start and publish everything but TrackedObjects.

The install without rosdep (docs/ros-machine.md) may leave that one message package out. A
`sitecustomize` on PYTHONPATH hides it from every interpreter started with it, as on such a
machine: each node module still imports, and detection_node serves, with one warning saying
what is off and why.
"""
from __future__ import annotations

import os
from pathlib import Path
import subprocess
import sys
from typing import Any

import numpy as np
import pytest
from vision_msgs.msg import Detection2DArray

from support.checkout import REPO
from support.perception_nodes import image_message, send_and_receive, start_node
from support.ros_helpers import Probe
from triton_perception.tracking.track_publishers import NO_TRACK_MESSAGES

HIDE = """
import importlib.abc
import sys


class HideAutowareMessages(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split('.')[0] == 'autoware_perception_msgs':
            raise ModuleNotFoundError(f'No module named {name!r}', name=name)
        return None


sys.meta_path.insert(0, HideAutowareMessages())
"""
NODE_MODULES = sorted(path.stem for path in (REPO / 'triton_perception' / 'nodes').glob('*.py')
                      if path.stem != '__init__')


def hidden_environment(directory: Path) -> dict[str, str]:
    """Return this process's environment with autoware_perception_msgs hidden."""
    (directory / 'sitecustomize.py').write_text(HIDE, encoding='utf-8')
    return {**os.environ, 'PYTHONPATH': os.pathsep.join(
        [str(directory), *filter(None, [os.environ.get('PYTHONPATH')])])}


def test_the_hiding_works(tmp_path: Path) -> None:
    """Positive control: with the sitecustomize, the package cannot be imported."""
    result = subprocess.run([sys.executable, '-c', 'import autoware_perception_msgs.msg'],
                            env=hidden_environment(tmp_path), capture_output=True, text=True,
                            timeout=60)
    assert result.returncode != 0 and 'autoware_perception_msgs' in result.stderr


def test_every_node_module_imports_without_autoware_messages(tmp_path: Path) -> None:
    """Each module of nodes/ imports; none of them reached for the hidden package."""
    script = ('import importlib, sys\n'
              f'for name in {NODE_MODULES!r}:\n'
              "    importlib.import_module('triton_perception.nodes.' + name)\n"
              "print(sorted(n for n in sys.modules if n.startswith('autoware')))\n")
    result = subprocess.run([sys.executable, '-c', script], env=hidden_environment(tmp_path),
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip() == '[]'


@pytest.mark.ros
@pytest.mark.server
def test_detection_node_serves_and_says_what_is_off(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, triton_server: Any,
        tmp_path_factory: pytest.TempPathFactory, probe: Probe, road_rgb: np.ndarray) -> None:
    """Detections with track ids, and one warning naming detections/tracks and the package."""
    monkeypatch.setenv('PYTHONPATH', hidden_environment(tmp_path)['PYTHONPATH'])
    node = start_node('detection_node', '/no_autoware', triton_server, tmp_path_factory,
                      qos_reliability='reliable', qos_depth=5)
    try:
        received = probe.record(Detection2DArray, '/no_autoware/detections')
        answer = send_and_receive(probe, '/no_autoware/image',
                                  image_message(road_rgb, 'bgr8', 'camera', 7),
                                  '/no_autoware/detections', Detection2DArray, received)
        assert answer.detections
    finally:
        assert node.stop() == 0, node.output()
    assert node.output().count(NO_TRACK_MESSAGES) == 1, node.output()
