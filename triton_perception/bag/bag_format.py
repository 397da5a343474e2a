"""What every bag module shares: the distribution's typestore and bag format, storage names."""
from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
import json
import os
from pathlib import Path
import re
import struct
import sys
from typing import Final, Literal, TYPE_CHECKING

from rosbags.rosbag2 import StoragePlugin, Writer
from rosbags.typesys import get_types_from_msg, get_typestore, Stores
from rosbags.typesys.store import Typestore
import yaml

from triton_perception.errors import TritonPerceptionError
from triton_perception.parameters import COMPRESSED, FOXGLOVE, RAW, TRANSPORTS, VIDEO_TRANSPORTS

if TYPE_CHECKING:
    from rosbags.interfaces.typing import Typesdict
    from rosbags.rosbag2.metadata import Metadata

IMAGE_TYPE = RAW.message_type
ENCODINGS = ('rgb8', 'bgr8')  # what `bag make` writes
COMPRESSED_IMAGE_TYPE = COMPRESSED.message_type
# A camera as video (parameters.VIDEO_TRANSPORTS): its type -> its transport, whose name is its
# image_transport subtopic.
VIDEO_TYPES = {TRANSPORTS[name].message_type: name for name in VIDEO_TRANSPORTS}
VIDEO_TRANSPORT = FOXGLOVE  # what `bag make --video` writes
VIDEO_TYPE = VIDEO_TRANSPORT.message_type
CAMERA_TYPES = (IMAGE_TYPE, COMPRESSED_IMAGE_TYPE, *VIDEO_TYPES)
DEFAULT_TOPIC = '/camera/image_raw'
STORAGES: dict[str, StoragePlugin] = {'mcap': StoragePlugin.MCAP, 'sqlite3': StoragePlugin.SQLITE3}
# The distribution of the rclpy wheels `make setup` installs, where ROS_DISTRO is not set.
DEVELOPMENT_DISTRO: Final = 'kilted'
# What rosbags writes; older metadata versions are rewritten from it after the bag is closed.
ROSBAGS_VERSION_V8: Final = 8
TYPE_NAME = re.compile(r'^[A-Za-z]\w*/msg/[A-Za-z]\w*$')

Progress = Callable[[str], None]


def header_stamp_ns(raw: bytes) -> int | None:
    """
    Return the header stamp (ns) of a serialized message that starts with std_msgs/Header.

    Little-endian CDR: a 4-byte encapsulation header, then the stamp's int32 sec and uint32
    nanosec. None for a message too short or not little-endian CDR.
    """
    if len(raw) < 12 or raw[1] != 1:
        return None
    sec, nanosec = struct.unpack_from('<iI', raw, 4)
    return int(sec) * 1_000_000_000 + int(nanosec)


class BagError(TritonPerceptionError, ValueError):
    """A bag cannot be made, read, played or recorded; the message says why."""


@dataclass(frozen=True)
class BagFormat:
    """
    How one ROS 2 distribution's own rosbag2 writes bags, so that its `ros2 bag` reads ours.

    From rosbag2's branch of each distribution: `metadata_version` is BagMetadata's version
    (rosbag2_storage/bag_metadata.hpp), `default_storage` the storage `ros2 bag record` uses
    without `-s` (rosbag2_storage/default_storage_id.cpp), and `type_descriptions` whether
    interfaces install `share/<pkg>/msg/<Type>.json` with their RIHS01 hash (since Iron).
    """

    distro: str
    store: Stores
    metadata_version: int
    default_storage: str
    type_descriptions: bool


BAG_FORMATS: Final = {
    # Humble reads metadata up to version 5 field by field; a version 9 file's list-valued
    # offered_qos_profiles fails its parser with "yaml-cpp: bad conversion" (rosbag2 #1895).
    'humble': BagFormat('humble', Stores.ROS2_HUMBLE, 5, 'sqlite3', type_descriptions=False),
    'jazzy': BagFormat('jazzy', Stores.ROS2_JAZZY, 9, 'mcap', type_descriptions=True),
    'kilted': BagFormat('kilted', Stores.ROS2_KILTED, 9, 'mcap', type_descriptions=True),
}


def bag_format(environment: Mapping[str, str] | None = None) -> BagFormat:
    """
    Return the format of the distribution in ROS_DISTRO (Kilted where it is not set).

    Raises
    ------
    BagError
        ROS_DISTRO names a distribution this package does not write bags for.

    """
    distro = (os.environ if environment is None else environment).get('ROS_DISTRO', '')
    distro = distro or DEVELOPMENT_DISTRO
    if distro not in BAG_FORMATS:
        names = ', '.join(BAG_FORMATS)
        raise BagError(f'ROS_DISTRO={distro}: bags are written for {names} only; source the '
                       'setup.bash of the distribution whose `ros2 bag` will read them, or set '
                       'ROS_DISTRO to one of those names')
    return BAG_FORMATS[distro]


def typestore() -> Typestore:
    """Return a fresh typestore of ROS_DISTRO's messages per caller: registering mutates it."""
    return get_typestore(bag_format().store)


def typestore_for(type_names: Iterable[str]) -> Typestore:
    """
    Return the distribution's typestore plus the installed interfaces it lacks (vision_msgs).

    A recorded bag must embed each type's definition; types outside the rosbags store are
    read from the `.msg` files their packages install under share/, with every type they
    reference. Where the distribution installs type descriptions (`.json`, since Iron), the
    hash rosbags computes must equal the installed one, or the bag would lie about its type;
    Humble installs none, and its bags carry no hashes.
    """
    checks_hashes = bag_format().type_descriptions
    store = typestore()
    for name in type_names:
        if name in store.fielddefs:
            continue
        store.register(_installed_definitions(name, store))
        if checks_hashes:
            description = json.loads(_installed_file(name, '.json').read_text())
            installed_hash = description['type_hashes'][0]['hash_string']
            if store.hash_rihs01(name) != installed_hash:
                raise BagError(f'{name}: rosbags computes {store.hash_rihs01(name)} from the '
                               f'installed definition but the interface declares {installed_hash}')
    return store


def _installed_definitions(name: str, store: Typestore) -> Typesdict:
    """Parse `name`'s installed .msg and, transitively, those of the types it references."""
    types: Typesdict = {}
    pending = [name]
    while pending:
        current = pending.pop()
        if current in types or current in store.fielddefs:
            continue
        parsed = get_types_from_msg(_installed_file(current, '.msg').read_text(), current)
        types.update(parsed)
        pending.extend(reference for reference in _referenced_types(parsed[current])
                       if reference not in types)
    return types


def _referenced_types(definition: object) -> set[str]:
    """Every 'pkg/msg/Type' name inside a parsed definition's nested fields."""
    if isinstance(definition, str):
        return {definition} if TYPE_NAME.match(definition) else set()
    if isinstance(definition, (tuple, list)):
        return set().union(*(_referenced_types(item) for item in definition))
    return set()


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


class DistroWriter(Writer):
    """A rosbags Writer whose finished bag is in the format of one distribution's rosbag2."""

    def __init__(self, output: Path, target: BagFormat, storage: str) -> None:
        """Write `output` for `target` in `storage` (rosbags writes version 9, else 8)."""
        version: Literal[8, 9] = 9 if target.metadata_version >= 9 else 8
        super().__init__(output, version=version, storage_plugin=STORAGES[storage])
        self.target = target

    def close(self) -> None:
        """Finish the bag, then write metadata.yaml in the version the target reads."""
        super().close()
        if self.target.metadata_version < ROSBAGS_VERSION_V8:
            metadata = self.path / 'metadata.yaml'
            information = yaml.safe_load(metadata.read_text())['rosbag2_bagfile_information']
            metadata.write_text(yaml.safe_dump({'rosbag2_bagfile_information': older_metadata(
                information, self.target.metadata_version)}, sort_keys=False))


def older_metadata(information: Metadata, version: int) -> dict[str, object]:
    """
    Return version 8 metadata with only the fields `version` has (5: Humble's rosbag2).

    The fields and their order are those Humble's metadata I/O writes (metadata_io.cpp):
    offered_qos_profiles stays a YAML string with numeric policies, as version 8 has it;
    type_description_hash, custom_data and ros_distro came later and are left out.
    """
    if version != 5:
        raise BagError(f'metadata version {version} is not written; 5, 8 and 9 are')
    topics = [{'topic_metadata': {key: entry['topic_metadata'][key] for key in (
        'name', 'type', 'serialization_format', 'offered_qos_profiles')},
        'message_count': entry['message_count']}
        for entry in information['topics_with_message_count']]
    return {'version': 5, 'storage_identifier': information['storage_identifier'],
            'duration': information['duration'], 'starting_time': information['starting_time'],
            'message_count': information['message_count'], 'topics_with_message_count': topics,
            'compression_format': information['compression_format'],
            'compression_mode': information['compression_mode'],
            'relative_file_paths': information['relative_file_paths'],
            'files': information['files']}


def new_writer(output: Path, storage: str | None = None) -> DistroWriter:
    """
    Return a Writer for a bag directory that must not exist yet, in ROS_DISTRO's format.

    Parameters
    ----------
    output
        The bag directory to create.
    storage
        'mcap' or 'sqlite3'; None takes the distribution's default (Humble: sqlite3).

    """
    target = bag_format()
    storage = storage or target.default_storage
    if storage not in STORAGES:
        raise BagError(f"storage {storage!r} is not one of {', '.join(STORAGES)}")
    if output.exists():
        raise BagError(f'{output} exists already; rosbag2 bags are never overwritten')
    return DistroWriter(output, target, storage)
