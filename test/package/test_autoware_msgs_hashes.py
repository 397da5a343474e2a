"""
Check that the installed autoware_perception_msgs is wire-compatible with upstream's.

The fields of each built type (TrackedObjects and what it holds) equal upstream's, and so does
its RIHS01 hash.

On development machines the package is the subset built from dev/autoware_perception_msgs by
dev/build_interfaces.sh; on a deployment it is the distro package
(ros-<distro>-autoware-perception-msgs, autoware_msgs 1.13.0 for Humble and Jazzy). The hash is
computed by rosidl from field names and types only (not comments nor constants), so equal fields
give equal hashes. No published upstream hash was found to pin against: the hashes below are
those of the build from upstream's fields, recorded so that any change to a definition fails
here, and the field lists are upstream's (autowarefoundation/autoware_msgs 1.12.0, commit
7025d8f; unchanged since the messages were introduced, #63 and #87).
"""
from __future__ import annotations

import json
import os
from pathlib import Path
import sys

import pytest

RIHS01 = {
    'TrackedObjects': '3559bd4e62ce8a4d96e32720c02bbe656cc090bb2b3f3f91f52a7c3ab095417a',
    'TrackedObject': '3feae2f15953814466d9c0b88485f423d18d94c351877d8fd1645270222c3526',
    'TrackedObjectKinematics': '9bcc5af91f7802926c091b89fea44d29f8ce04cb34bd62b98844afab21e49ec7',
    'ObjectClassification': '38131fef2df46486c20c12c238faf778328309f4c3e9daa6ffd621732e48dd19',
    'Shape': '1a32ac3073c17e4822d39b7f4c263eb1c4a2bacbf707d6db96e77e867063562b',
}
# Upstream fields: (name, ROS type); 'T[]' is an unbounded sequence.
UPSTREAM_FIELDS = {
    'TrackedObjects': [('header', 'std_msgs/msg/Header'),
                       ('objects', 'autoware_perception_msgs/msg/TrackedObject[]')],
    'TrackedObject': [('object_id', 'unique_identifier_msgs/msg/UUID'),
                      ('existence_probability', 'float32'),
                      ('classification', 'autoware_perception_msgs/msg/ObjectClassification[]'),
                      ('kinematics', 'autoware_perception_msgs/msg/TrackedObjectKinematics'),
                      ('shape', 'autoware_perception_msgs/msg/Shape')],
    'TrackedObjectKinematics': [
        ('pose_with_covariance', 'geometry_msgs/msg/PoseWithCovariance'),
        ('twist_with_covariance', 'geometry_msgs/msg/TwistWithCovariance'),
        ('acceleration_with_covariance', 'geometry_msgs/msg/AccelWithCovariance'),
        ('orientation_availability', 'uint8'), ('is_stationary', 'bool')],
    'ObjectClassification': [('label', 'uint8'), ('probability', 'float32')],
    'Shape': [('type', 'uint8'), ('footprint', 'geometry_msgs/msg/Polygon'),
              ('dimensions', 'geometry_msgs/msg/Vector3')],
}
# type_description_interfaces/FieldType ids of the types above.
TYPE_IDS = {1: 'nested', 10: 'float32', 3: 'uint8', 15: 'bool'}
SEQUENCE_OFFSET = 144


def installed_description(type_name: str) -> dict:
    """Return the type description rosidl generated at build time (share/<pkg>/msg/<Type>.json)."""
    prefixes = [sys.prefix, *os.environ.get('AMENT_PREFIX_PATH', '').split(os.pathsep)]
    for prefix in prefixes:
        path = Path(prefix, 'share', 'autoware_perception_msgs', 'msg', f'{type_name}.json')
        if path.is_file():
            return json.loads(path.read_text())
    pytest.fail(f'autoware_perception_msgs/msg/{type_name}.json not installed (make setup)')


def field_type(field: dict) -> str:
    """Return a FieldType as the .msg spelling used in UPSTREAM_FIELDS."""
    type_id = field['type']['type_id']
    sequence = type_id >= SEQUENCE_OFFSET
    kind = TYPE_IDS[type_id - SEQUENCE_OFFSET if sequence else type_id]
    name = field['type']['nested_type_name'] if kind == 'nested' else kind
    return name + ('[]' if sequence else '')


@pytest.mark.parametrize('type_name', sorted(RIHS01))
def test_fields_and_hash_equal_upstream(type_name: str) -> None:
    """
    Each installed type has upstream's fields and the recorded RIHS01 hash.

    Autoware's nodes on the same graph then read our TrackedObjects as their own.
    """
    description = installed_description(type_name)
    fields = description['type_description_msg']['type_description']['fields']
    assert [(field['name'], field_type(field)) for field in fields] == \
        UPSTREAM_FIELDS[type_name]
    (own,) = [entry for entry in description['type_hashes']
              if entry['type_name'] == f'autoware_perception_msgs/msg/{type_name}']
    assert own['hash_string'] == f'RIHS01_{RIHS01[type_name]}'
