"""What every bag module shares: the typestore, the rosbag2 format version, storage names."""
from __future__ import annotations

from collections.abc import Callable, Iterable
import json
import os
from pathlib import Path
import sys
from typing import Final

from rosbags.rosbag2 import StoragePlugin, Writer
from rosbags.typesys import get_types_from_msg, get_typestore, Stores
from rosbags.typesys.store import Typestore

# ROS 2 Kilted definitions, the distro of the rclpy wheels: their RIHS01 hashes equal those in
# <venv>/share/<pkg>/msg/<Type>.json (checked in test/test_bag_tools.py), so bags written here
# carry the hashes a Kilted (or Jazzy: same sensor_msgs) `ros2 bag` expects.
TYPESTORE_DISTRO = Stores.ROS2_KILTED
# Metadata version written by rosbag2 since Jazzy; older rosbag2 releases refuse newer versions.
ROSBAG2_VERSION: Final = 9

IMAGE_TYPE = 'sensor_msgs/msg/Image'
COMPRESSED_IMAGE_TYPE = 'sensor_msgs/msg/CompressedImage'
DEFAULT_TOPIC = '/camera/image_raw'
STORAGES: dict[str, StoragePlugin] = {'mcap': StoragePlugin.MCAP, 'sqlite3': StoragePlugin.SQLITE3}

Progress = Callable[[str], None]


class BagError(Exception):
    """A bag cannot be made, read, played or recorded; the message says why."""


def typestore() -> Typestore:
    """Return a fresh typestore per caller: registering types mutates it."""
    return get_typestore(TYPESTORE_DISTRO)


def typestore_for(type_names: Iterable[str]) -> Typestore:
    """
    Return the Kilted typestore plus installed interfaces it lacks (vision_msgs, custom messages).

    A recorded bag must embed each type's definition and hash; types outside the rosbags
    store are read from the .msg and .json files their package installs under share/. The
    hash rosbags computes must equal the installed one, or the bag would lie about its type.
    """
    store = typestore()
    for name in type_names:
        if name in store.fielddefs:
            continue
        description = json.loads(_installed_file(name, '.json').read_text())
        referenced = [entry['type_name'] for entry in
                      description['type_description_msg']['referenced_type_descriptions']]
        types = {}
        for dependency in (name, *referenced):
            if dependency not in store.fielddefs:
                text = _installed_file(dependency, '.msg').read_text()
                types.update(get_types_from_msg(text, dependency))
        store.register(types)
        installed_hash = description['type_hashes'][0]['hash_string']
        if store.hash_rihs01(name) != installed_hash:
            raise BagError(f'{name}: rosbags computes {store.hash_rihs01(name)} from the installed '
                           f'definition but the interface declares {installed_hash}')
    return store


def _installed_file(type_name: str, suffix: str) -> Path:
    """Find share/<pkg>/msg/<Type><suffix> in the ament prefixes (the venv counts as one)."""
    try:
        package, kind, name = type_name.split('/')
    except ValueError:
        raise BagError(f"type name {type_name!r} is not of the form 'package/msg/Type'") from None
    prefixes = [p for p in os.environ.get('AMENT_PREFIX_PATH', '').split(os.pathsep) if p]
    for prefix in (*prefixes, sys.prefix):
        candidate = Path(prefix) / 'share' / package / kind / f'{name}{suffix}'
        if candidate.is_file():
            return candidate
    raise BagError(f'no definition of {type_name} installed (looked for share/{package}/{kind}/'
                   f'{name}{suffix} under AMENT_PREFIX_PATH and {sys.prefix})')


def new_writer(output: Path, storage: str) -> Writer:
    """Return a rosbags Writer for a bag directory that must not exist yet."""
    if storage not in STORAGES:
        raise BagError(f"storage {storage!r} is not one of {', '.join(STORAGES)}")
    if output.exists():
        raise BagError(f'{output} exists already; rosbag2 bags are never overwritten')
    return Writer(output, version=ROSBAG2_VERSION, storage_plugin=STORAGES[storage])
