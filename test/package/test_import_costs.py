"""
What importing costs: the launch files load no numpy or onnx, a node module no onnx.

The faces import a name only when it is first asked for (triton_perception/faces.py); this
holds that promise in a fresh interpreter, where nothing else was imported first. The number
of the package's modules each node module loads is printed and bounded, so that a new import
chain into a node process is seen when it grows.
"""
from __future__ import annotations

import json
from pathlib import Path
import subprocess
import sys

import pytest

from support.checkout import REPO

LAUNCH_FILES = sorted((REPO / 'launch').glob('*.launch.py'))
NODE_MODULES = sorted(f'triton_perception.nodes.{path.stem}' for path in
                      (REPO / 'triton_perception' / 'nodes').glob('*_node.py')) + [
                          'triton_perception.nodes.perception_process']
# The package's modules a node module loads: 117 for perception_process (the most: one request
# per frame for both models, the two executors, the CDR writers, serving's two rooms, the
# transport table, a camera's rounds), with room.
NODE_MODULE_BOUND = 122
# What the launch files import of the package, and what they import from ROS's launch (which
# loads numpy itself, through rclpy).
PACKAGE_IMPORTS = ('from triton_perception.pipeline import ARGUMENT_NAMES, argument_values, '
                   'declare_arguments, pipeline_plan, start_after_gate, stop_launch_on_exit\n'
                   'from triton_perception.serving import find_tritonserver, server_command, '
                   'server_environment')
ROS_LAUNCH = 'import launch, launch.actions, launch.substitutions, launch_ros.actions'
PROBE = """
import importlib.util, json, sys
{load}
print(json.dumps(sorted(sys.modules)))
"""


def loaded_after(load: str) -> list[str]:
    """Return the modules a fresh interpreter holds after running `load`."""
    result = subprocess.run([sys.executable, '-c', PROBE.format(load=load)],
                            capture_output=True, text=True, timeout=120, cwd=REPO)
    assert result.returncode == 0, result.stderr[-3000:]
    modules: list[str] = json.loads(result.stdout.splitlines()[-1])
    return modules


def heavy(modules: list[str], names: tuple[str, ...]) -> list[str]:
    """Return which of the top-level packages `names` are among `modules`."""
    return sorted({module.split('.')[0] for module in modules} & set(names))


def test_what_the_launch_files_import_of_the_package_loads_no_numpy_or_onnx() -> None:
    """The pipeline's plan and the server's command line come without numpy, onnx or OpenCV."""
    modules = loaded_after(PACKAGE_IMPORTS)
    assert heavy(modules, ('numpy', 'onnx', 'onnxruntime', 'cv2', 'rclpy')) == []


@pytest.mark.parametrize('launch_file', LAUNCH_FILES, ids=[path.name for path in LAUNCH_FILES])
def test_a_launch_file_loads_nothing_heavy_beyond_ros_launch(launch_file: Path) -> None:
    """Loading the launch file (what `ros2 launch` does first) adds no numpy, onnx or OpenCV."""
    load = (f'spec = importlib.util.spec_from_file_location("launch_file", {str(launch_file)!r})\n'
            'spec.loader.exec_module(importlib.util.module_from_spec(spec))')
    baseline = set(heavy(loaded_after(ROS_LAUNCH), ('numpy', 'onnx', 'onnxruntime', 'cv2')))
    added = set(heavy(loaded_after(load), ('numpy', 'onnx', 'onnxruntime', 'cv2'))) - baseline
    assert added == set()


@pytest.mark.parametrize('node_module', NODE_MODULES)
def test_a_node_module_loads_no_onnx_and_few_modules(node_module: str) -> None:
    """A node process imports no onnx; its count of package modules is printed and bounded."""
    modules = loaded_after(f'import {node_module}')
    assert heavy(modules, ('onnx', 'onnxruntime')) == []
    own = [module for module in modules if module.startswith('triton_perception.')]
    print(f'{node_module}: {len(own)} modules of the package, {len(modules)} in all')
    assert len(own) <= NODE_MODULE_BOUND, own
