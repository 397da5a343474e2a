"""
The checkout and the shared folder beside it, and copies the tests make of what they hold.

Every test reaches the repository, ../shared (or TRITON_PERCEPTION_SHARED) and the installed
model repository through these names.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from triton_perception.system.paths import shared_directory, SHARED_ENV

REPO = Path(__file__).resolve().parents[2]
# Models and data: ../shared beside the checkout, or where TRITON_PERCEPTION_SHARED points (a
# colcon workspace has src/triton_perception, with nothing beside it).
SHARED = shared_directory()


def shared_path(*parts: str) -> Path:
    """
    Return a file or directory under the shared models and data.

    A missing one fails the test with its path (a renamed file must not turn into silently skipped
    tests).
    """
    path = SHARED.joinpath(*parts)
    if not path.exists():
        pytest.fail(f'{path} is missing: tests need the shared models and data ({SHARED_ENV} or '
                    f'../shared beside the checkout; see docs/development.md)', pytrace=False)
    return path


def clip_bag_of(directory: Path, name: str, frames: int) -> Path:
    """Make a bag `name` in `directory` of the highway clip's first `frames` frames."""
    from triton_perception.bag import make_bag  # noqa: PLC0415 (rosbags, for the tests that use it)

    make_bag(shared_path('data', 'videos', 'solidWhiteRight.mp4'), directory / name,
             max_frames=frames)
    return directory / name


def copy_of_model_repository(directory: Path) -> Path:
    """Copy the package's installed model repository, which the session server installed."""
    import shutil

    copy = directory / 'model_repository'
    shutil.copytree(REPO / 'model_repository', copy, symlinks=True,
                    ignore=shutil.ignore_patterns('__pycache__', '*.plan'))
    return copy


def node_with_repository(executable: str, arguments: list[str], repository: Path,
                         log_directory: Path) -> Any:
    """
    Start a node that reads the model repository `repository`.

    It finds an installed detector's labels or a lane model's lane_model.json there; this
    process's environment is left as it was.
    """
    from triton_perception.system.paths import MODEL_REPOSITORY_ENV
    from triton_perception.system.processes import NodeProcess

    before = os.environ.get(MODEL_REPOSITORY_ENV)
    os.environ[MODEL_REPOSITORY_ENV] = str(repository)
    try:
        return NodeProcess(executable, arguments, log_directory)
    finally:
        if before is None:
            os.environ.pop(MODEL_REPOSITORY_ENV)
        else:
            os.environ[MODEL_REPOSITORY_ENV] = before
