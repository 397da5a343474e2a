"""
One resolver of the shared folder: TRITON_PERCEPTION_SHARED, else ../shared beside the checkout.

Set-up, the models, the clip of demo and bench and the tests all read the folder where the
variable points; a missing piece is named with the path that was tried.
"""
from __future__ import annotations

import json
import os
from pathlib import Path
import subprocess
import sys

from support.checkout import REPO, SHARED

PROBE = ('import json; from triton_perception.system import DEFAULT_CLIP, CLIP_HINT, '
         'shared_directory; from triton_perception.models import default_models_directory; '
         'print(json.dumps([str(shared_directory()), str(DEFAULT_CLIP), CLIP_HINT, '
         'str(default_models_directory())]))')


def resolved(environment: dict[str, str]) -> list[str]:
    """Return what a fresh interpreter resolves with `environment`."""
    result = subprocess.run([sys.executable, '-c', PROBE], capture_output=True, text=True,
                            env=environment, check=True)
    answer: list[str] = json.loads(result.stdout)
    return answer


def test_the_variable_moves_every_piece(tmp_path: Path) -> None:
    """The folder under another name: the models and the clip are read from there."""
    elsewhere = tmp_path / 'elsewhere'
    elsewhere.symlink_to(SHARED.resolve(), target_is_directory=True)
    environment = {key: value for key, value in os.environ.items()
                   if key != 'TRITON_PERCEPTION_MODELS_DIR'}
    environment['TRITON_PERCEPTION_SHARED'] = str(elsewhere)
    shared, clip, hint, models = resolved(environment)
    assert shared == str(elsewhere)
    assert clip == str(elsewhere / 'data' / 'videos' / 'solidWhiteRight.mp4')
    assert str(elsewhere) in hint
    assert models == str(elsewhere / 'models')


def test_set_up_reads_the_variable_and_names_the_path_it_tried(tmp_path: Path) -> None:
    """dev/setup.sh with the variable on a folder without the ROS wheels: one line, the path."""
    environment = {**os.environ, 'TRITON_PERCEPTION_SHARED': str(tmp_path / 'nowhere')}
    environment.pop('TRITON_PERCEPTION_ROS_PYTHON', None)
    result = subprocess.run(['bash', str(REPO / 'dev' / 'setup.sh')], capture_output=True,
                            text=True, env=environment, timeout=120)
    assert result.returncode != 0
    assert f'{tmp_path / "nowhere"}/ros-python/wheels not found' in result.stderr, result.stderr
