"""`models quantize` writes its guard report under ROS's home by default, never where it runs."""
from __future__ import annotations

from pathlib import Path

import pytest

from triton_perception.commands.model_commands import guard_folder


def test_the_guard_folder_is_under_ros_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                            ) -> None:
    """$ROS_HOME first, else ~/.ros; a new folder named by the time, outside the checkout."""
    monkeypatch.setenv('ROS_HOME', str(tmp_path / 'ros'))
    folder = guard_folder()
    assert folder.parent == tmp_path / 'ros' / 'triton_perception' / 'quantization_guard'
    monkeypatch.delenv('ROS_HOME')
    assert guard_folder().is_relative_to(Path('~/.ros').expanduser())
