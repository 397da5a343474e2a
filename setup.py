"""ament_python package definition; works with colcon and with pip."""
from pathlib import Path

from setuptools import find_packages, setup

PACKAGE = 'triton_perception'
HERE = Path(__file__).resolve().parent
# The launchers in scripts/, installed under lib/triton_perception/ (dev/setup.sh reads the same).
NODE_EXECUTABLES = tuple(sorted(path.name for path in (HERE / 'scripts').iterdir()))
NOT_SHIPPED_SUFFIXES = ('.onnx', '.plan', '.engine', '.pyc')


def tree_data_files(directory: str) -> list[tuple[str, list[str]]]:
    """Install a directory tree under share/<package>/, leaving out weights and caches."""
    entries: dict[str, list[str]] = {}
    for path in sorted((HERE / directory).rglob('*')):
        if path.is_dir() or path.suffix in NOT_SHIPPED_SUFFIXES or '__pycache__' in path.parts:
            continue
        relative = path.relative_to(HERE)
        entries.setdefault(f'share/{PACKAGE}/{relative.parent}', []).append(str(relative))
    return sorted(entries.items())


setup(
    name=PACKAGE,
    version='0.1.0',
    packages=find_packages(exclude=['test']),
    # Each folder's face is its __init__.pyi, which the package reads at run time (faces.py).
    package_data={'': ['*.pyi']},
    data_files=[
        ('share/ament_index/resource_index/packages', [f'resource/{PACKAGE}']),
        (f'share/{PACKAGE}', ['package.xml']),
        # Node executables live in lib/<package>/ only (where ros2 run and launch_ros look),
        # never on PATH: console scripts would land in bin/ under these generic names.
        (f'lib/{PACKAGE}', [f'scripts/{name}' for name in NODE_EXECUTABLES]),
        *tree_data_files('launch'),
        *tree_data_files('config'),
        *tree_data_files('model_repository'),
        # The pip constraints, for the mend a start prints when tritonclient does not import.
        *tree_data_files('rosdep'),
    ],
    install_requires=['setuptools', 'packaging'],
    # `bag evaluate DRIVES/ --workers N` replays drives as Ray tasks (not needed on a robot).
    extras_require={'evaluation': ['ray>=2.10']},
    zip_safe=True,
    maintainer='triton_perception maintainers',
    maintainer_email='maintainers@triton-perception.invalid',
    description='ROS 2 lane and object detection through a local Triton Inference Server',
    license='Apache-2.0',
    entry_points={
        'console_scripts': [
            'triton-perception = triton_perception.cli:main',
        ],
    },
)
