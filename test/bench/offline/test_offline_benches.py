"""The benches measured without ROS and Triton find their inputs as everything else does."""
from __future__ import annotations

from pathlib import Path

import pytest

from triton_perception.cli import main


def test_camera_health_bench_names_a_missing_shared_folder_in_one_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """
    With the shared folder elsewhere, `--camera-health` reads it there, and names what is missing.

    Its default is the package's one resolver ($TRITON_PERCEPTION_SHARED, else ../shared beside
    the checkout), not a folder relative to where the command runs.
    """
    monkeypatch.setenv('TRITON_PERCEPTION_SHARED', str(tmp_path))
    assert main(['bench', '--camera-health']) == 2
    error = capsys.readouterr().err.strip()
    assert len(error.splitlines()) == 1
    assert f"{tmp_path / 'data' / 'videos' / 'solidWhiteRight.mp4'} is missing" in error
    assert main(['bench', '--camera-health', '--shared', str(tmp_path / 'other')]) == 2
    assert str(tmp_path / 'other' / 'data') in capsys.readouterr().err
