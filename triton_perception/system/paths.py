"""Where the package's own files are, in a source checkout and when installed."""
from __future__ import annotations

import os
from pathlib import Path
import sys

PACKAGE = 'triton_perception'
SOURCE_ROOT = Path(__file__).resolve().parents[2]
MODEL_REPOSITORY_ENV = 'TRITON_PERCEPTION_MODEL_REPOSITORY'
FASTDDS_PROFILE_VARIABLES = ('FASTRTPS_DEFAULT_PROFILES_FILE', 'FASTDDS_DEFAULT_PROFILES_FILE')
# The team's shared folder of weights, data and ROS launch wheels (docs/development.md).
SHARED_ENV = 'TRITON_PERCEPTION_SHARED'


def shared_directory() -> Path:
    """
    Return the shared folder: $TRITON_PERCEPTION_SHARED, else ../shared beside the checkout.

    The one resolver of it: set-up (dev/setup.sh reads the same variable), the models, the
    clip, bench, demo and the tests.
    """
    override = os.environ.get(SHARED_ENV)
    return Path(override).expanduser() if override else SOURCE_ROOT.parent / 'shared'


# The highway clip of `make demo` and `make bench`, in the shared folder.
DEFAULT_CLIP = shared_directory() / 'data' / 'videos' / 'solidWhiteRight.mp4'
CLIP_HINT = (f'the default clip is {DEFAULT_CLIP} (in the shared folder: ${SHARED_ENV}, else '
             '../shared beside a source checkout); pass --video FILE, any road video OpenCV '
             'reads')


def share_directory() -> Path:
    """
    share/triton_perception of the installation in use.

    The ament index first: a colcon install space (also with --symlink-install, where this
    module resolves into the source tree but the weights are installed under the install
    space), a ROS install, or the development venv (set-up registers the checkout there).
    Without an index (AMENT_PREFIX_PATH unset): the checkout, else this interpreter's prefix.
    """
    try:
        from ament_index_python.packages import get_package_share_directory  # noqa: PLC0415
        return Path(get_package_share_directory(PACKAGE))
    except (ImportError, LookupError, OSError, ValueError):
        pass
    if (SOURCE_ROOT / 'package.xml').is_file() and (SOURCE_ROOT / 'config').is_dir():
        return SOURCE_ROOT
    return Path(sys.prefix) / 'share' / PACKAGE


def config_file(name: str) -> Path:
    """Return the path of `name` in the package's config/ directory (it may not exist)."""
    return share_directory() / 'config' / name


def default_model_repository() -> Path:
    """
    Return the model repository: $TRITON_PERCEPTION_MODEL_REPOSITORY, else the shared one.

    The shared one is share/triton_perception/model_repository of the installation in use (see
    `share_directory`).
    """
    override = os.environ.get(MODEL_REPOSITORY_ENV)
    return Path(override) if override else share_directory() / 'model_repository'


def dds_profile_environment() -> dict[str, str]:
    """
    Return the environment that selects the shared-memory Fast DDS profile.

    Large camera frames need it (config/fastdds_profile.xml), unless the user chose a profile of
    their own or another middleware.
    """
    rmw = os.environ.get('RMW_IMPLEMENTATION', 'rmw_fastrtps_cpp')
    if not rmw.startswith('rmw_fastrtps') or any(
            os.environ.get(variable) for variable in FASTDDS_PROFILE_VARIABLES):
        return {}
    # Fast DDS 2.x (Humble, Jazzy) reads FASTRTPS_...; 3.x (Kilted on) reads FASTDDS_... and
    # warns that the old name is deprecated.
    old_fast_dds = os.environ.get('ROS_DISTRO') in ('humble', 'iron', 'jazzy')
    variable = FASTDDS_PROFILE_VARIABLES[0 if old_fast_dds else 1]
    return {variable: str(config_file('fastdds_profile.xml'))}
