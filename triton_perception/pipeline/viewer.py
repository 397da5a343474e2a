"""
rviz2 for `rviz:=true`: started as every other process of the pipeline is, or refused.

Through the parent-death wrapper (system.ending_with_parent), so that it ends with the launch
or `run` that started it even when that is killed with SIGKILL. A machine without rviz2 (a
robot without a display: the package's rviz2 dependency is conditional, docs/orin.md) refuses
`rviz:=true` in one line before anything starts.
"""
from __future__ import annotations

from pathlib import Path
import shutil
import sys

from triton_perception.pipeline.arguments import PlanError
from triton_perception.system import ending_with_parent


def rviz_command(config: Path, python: str = sys.executable) -> list[str]:
    """Return the command that runs rviz2 with `config`; PlanError when rviz2 is not here."""
    rviz = shutil.which('rviz2')
    if rviz is None:
        raise PlanError('rviz:=true, but rviz2 is not on PATH: install it where there is a '
                        'display (sudo apt install ros-$ROS_DISTRO-rviz2), or run rviz2 on '
                        'another machine of the same ROS domain with config/pipeline.rviz '
                        '(docs/orin.md)')
    return ending_with_parent([rviz, '-d', str(config)], python)
