"""
The development copies of foxglove_msgs and ffmpeg_image_transport_msgs are the released ones.

dev/foxglove_msgs and dev/ffmpeg_image_transport_msgs stand in for the distro packages where no
ROS distribution is installed. Field for field they must be the release Humble, Jazzy and Kilted
ship (../shared/rosdistro): otherwise a Humble generated constructor refuses a field by name, DDS
peers refuse the type by its hash, and Foxglove draws nothing. The released hashes are data
(test/data/upstream_type_hashes.json, with where each came from); the copies' .msg files are
hashed here with rosbags, and the interfaces `make setup` built are read from their type
descriptions (rosidl's own hash), so both implementations agree on each copy.
"""
from __future__ import annotations

import json
import os
from pathlib import Path
import sys

import pytest
from rosbags.typesys import get_types_from_msg, get_typestore, Stores
import yaml

from support.checkout import REPO, shared_path

UPSTREAM = json.loads((REPO / 'test' / 'data' / 'upstream_type_hashes.json').read_text())
TYPES = [(package, name) for package, entry in UPSTREAM['packages'].items()
         for name in entry['hashes']]
DISTRIBUTIONS = ('humble', 'jazzy', 'kilted')
# The rosdistro repository entry that releases each package.
RELEASED_BY = {'foxglove_msgs': 'foxglove-sdk',
               'ffmpeg_image_transport_msgs': 'ffmpeg_image_transport_msgs'}


def copies_typestore() -> object:
    """Return a Kilted typestore with every .msg of the development copies registered."""
    typestore = get_typestore(Stores.ROS2_KILTED)
    types = {}
    for package in UPSTREAM['packages']:
        for path in sorted((REPO / 'dev' / package / 'msg').glob('*.msg')):
            types.update(get_types_from_msg(path.read_text(), f'{package}/msg/{path.stem}'))
    typestore.register(types)
    return typestore


@pytest.mark.parametrize('package', sorted(UPSTREAM['packages']))
def test_the_pinned_release_is_what_the_distributions_ship(package: str) -> None:
    """The pinned version is each distribution's release; the copy's package.xml says it."""
    version = UPSTREAM['packages'][package]['version']
    for distribution in DISTRIBUTIONS:
        path = shared_path('rosdistro', distribution, 'distribution.yaml')
        entry = yaml.safe_load(path.read_text())['repositories'][RELEASED_BY[package]]
        assert entry['release']['version'].split('-')[0] == version, (distribution, entry)
        assert package in entry['release'].get('packages', [package])
    manifest = (REPO / 'dev' / package / 'package.xml').read_text()
    assert f'<version>{version}</version>' in manifest


@pytest.mark.parametrize(('package', 'name'), TYPES)
def test_the_copy_hashes_as_the_release(package: str, name: str) -> None:
    """The copy's fields give the released type's RIHS01 hash (rosbags, from the .msg)."""
    typestore = copies_typestore()
    assert typestore.hash_rihs01(f'{package}/msg/{name}') == \
        UPSTREAM['packages'][package]['hashes'][name]


def test_the_copies_hold_no_type_the_release_lacks() -> None:
    """Every .msg of a copy is one of the released types (a renamed file would escape the rest)."""
    for package, entry in UPSTREAM['packages'].items():
        names = {path.stem for path in (REPO / 'dev' / package / 'msg').glob('*.msg')}
        assert names == set(entry['hashes']), package


@pytest.mark.parametrize(('package', 'name'), TYPES)
def test_the_installed_interface_hashes_as_the_release(package: str, name: str) -> None:
    """The interface built and installed (rosidl's hash, share/<pkg>/msg/<Type>.json) agrees."""
    prefixes = [sys.prefix,
                *filter(None, os.environ.get('AMENT_PREFIX_PATH', '').split(os.pathsep))]
    paths = [Path(prefix, 'share', package, 'msg', f'{name}.json') for prefix in prefixes]
    path = next((path for path in paths if path.is_file()), None)
    assert path is not None, f'{package}/msg/{name}.json is not installed: run make setup'
    hashes = json.loads(path.read_text())['type_hashes']
    (own,) = [entry for entry in hashes if entry['type_name'] == f'{package}/msg/{name}']
    assert own['hash_string'] == UPSTREAM['packages'][package]['hashes'][name]
