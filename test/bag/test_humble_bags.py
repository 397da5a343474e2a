"""
Bags for the distribution in ROS_DISTRO, above all Humble's (JetPack 6), read back as it reads them.

Humble's rosbag2 cannot run here, so its reading is simulated from its own code (rosbag2, branch
humble, d256a5b): `humble_metadata_problems` walks metadata.yaml as
rosbag2_storage/src/rosbag2_storage/metadata_io.cpp decodes it, field by field and type by type,
with the QoS profiles as rosbag2_transport/src/rosbag2_transport/qos.cpp reads them;
`humble_sqlite_problems` queries the db3 file with the statements of
rosbag2_storage_default_plugins/.../sqlite/sqlite_storage.cpp. Humble installs no type
descriptions (`.json`), so the definitions come from `.msg` files alone.
"""
from __future__ import annotations

import os
from pathlib import Path
import sqlite3
import subprocess
import sys
from typing import Any

import pytest
import yaml

from support.checkout import SHARED
from triton_perception.bag.bag_format import (bag_format, BAG_FORMATS, BagError, IMAGE_TYPE,
                                              typestore_for)
from triton_perception.bag.make import make_bag
from triton_perception.bag.reading import read_images
from triton_perception.evaluation.evaluation import evaluate, EvaluationSettings
from triton_perception.system.paths import config_file

CLIP = SHARED / 'data' / 'videos' / 'solidWhiteRight.mp4'
FRAMES = 5


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def humble_qos_problems(text: Any, where: str) -> list[str]:
    """Read offered_qos_profiles as Humble's YAML::convert<rclcpp::QoS> does."""
    if not isinstance(text, str):
        return [f'{where}: a string of YAML in Humble (version >= 4), got {type(text).__name__}']
    if not text:
        return []
    problems = []
    for index, profile in enumerate(yaml.safe_load(text)):
        for key in ('history', 'depth', 'reliability', 'durability', 'liveliness'):
            if not _is_int(profile.get(key)):
                problems.append(f'{where}[{index}].{key}: Humble reads an int, got '
                                f'{profile.get(key)!r}')
        for key in ('deadline', 'lifespan', 'liveliness_lease_duration'):
            time = profile.get(key)
            if not (isinstance(time, dict) and all(
                    _is_int(time.get(part)) and time[part] >= 0 for part in ('sec', 'nsec'))):
                problems.append(f'{where}[{index}].{key}: Humble reads sec/nsec as uint64')
        if not isinstance(profile.get('avoid_ros_namespace_conventions'), bool):
            problems.append(f'{where}[{index}].avoid_ros_namespace_conventions: a bool')
    return problems


def humble_metadata_problems(bag: Path) -> list[str]:
    """Every field Humble's metadata I/O would fail to convert, in the order it reads them."""
    document = yaml.safe_load((bag / 'metadata.yaml').read_text())
    information = document.get('rosbag2_bagfile_information')
    if not isinstance(information, dict):
        return ['no rosbag2_bagfile_information']
    problems = []
    version = information.get('version')
    if not _is_int(version):
        return [f'version: an int, got {version!r}']
    if version > 5:
        problems.append(f'version {version}: Humble writes 5 and decodes newer fields wrongly')

    def need(value: Any, check: Any, where: str) -> None:
        if not check(value):
            problems.append(f'{where}: cannot convert {value!r}')

    need(information.get('storage_identifier'), lambda v: isinstance(v, str), 'storage_identifier')
    need(information.get('duration'), lambda v: _is_int((v or {}).get('nanoseconds')), 'duration')
    need(information.get('starting_time'),
         lambda v: _is_int((v or {}).get('nanoseconds_since_epoch')), 'starting_time')
    need(information.get('message_count'), _is_int, 'message_count')
    for index, entry in enumerate(information.get('topics_with_message_count') or []):
        topic = entry.get('topic_metadata', {})
        for key in ('name', 'type', 'serialization_format'):
            need(topic.get(key), lambda v: isinstance(v, str), f'topics[{index}].{key}')
        if version >= 4:
            problems += humble_qos_problems(topic.get('offered_qos_profiles'),
                                            f'topics[{index}].offered_qos_profiles')
        need(entry.get('message_count'), _is_int, f'topics[{index}].message_count')
    need(information.get('relative_file_paths'),
         lambda v: isinstance(v, list) and all(isinstance(p, str) for p in v),
         'relative_file_paths')
    if version >= 3:
        for key in ('compression_format', 'compression_mode'):
            need(information.get(key), lambda v: isinstance(v, str), key)
    if version >= 5:
        for index, file in enumerate(information.get('files') or []):
            need(file.get('path'), lambda v: isinstance(v, str), f'files[{index}].path')
            need(file.get('starting_time'),
                 lambda v: _is_int((v or {}).get('nanoseconds_since_epoch')),
                 f'files[{index}].starting_time')
            need(file.get('duration'), lambda v: _is_int((v or {}).get('nanoseconds')),
                 f'files[{index}].duration')
            need(file.get('message_count'), _is_int, f'files[{index}].message_count')
    return problems


def humble_sqlite_problems(bag: Path) -> list[str]:
    """Query the db3 file with the statements Humble's sqlite3 storage runs on open and read."""
    files = yaml.safe_load((bag / 'metadata.yaml').read_text())[
        'rosbag2_bagfile_information']['relative_file_paths']
    problems = []
    for name in files:
        with sqlite3.connect(bag / name) as database:
            (schema_version,) = database.execute('SELECT schema_version from schema;').fetchone()
            if not isinstance(schema_version, int):
                problems.append(f'{name}: schema_version {schema_version!r}')
            topics = database.execute('SELECT name, type, serialization_format, '
                                      'offered_qos_profiles FROM topics ORDER BY id;').fetchall()
            for topic in topics:
                problems += humble_qos_problems(topic[3], f'{name}: topics {topic[0]}')
            database.execute('SELECT data, timestamp, topics.name, messages.id FROM messages '
                             'JOIN topics ON messages.topic_id = topics.id '
                             'ORDER BY messages.timestamp;').fetchall()
    return problems


@pytest.fixture
def humble(monkeypatch: pytest.MonkeyPatch) -> None:
    """Set ROS_DISTRO=humble for one test, as on a Humble machine."""
    monkeypatch.setenv('ROS_DISTRO', 'humble')


def test_the_format_follows_ros_distro(monkeypatch: pytest.MonkeyPatch) -> None:
    """The bag format follows ROS_DISTRO (Humble: metadata 5, sqlite3); others are refused."""
    assert bag_format({}).distro == 'kilted'  # the development wheels
    assert bag_format({'ROS_DISTRO': 'humble'}) == BAG_FORMATS['humble']
    assert (BAG_FORMATS['humble'].metadata_version, BAG_FORMATS['humble'].default_storage) == \
        (5, 'sqlite3')
    with pytest.raises(BagError, match='ROS_DISTRO=iron: bags are written for humble, jazzy, '
                                       'kilted only'):
        bag_format({'ROS_DISTRO': 'iron'})


def test_a_humble_bag_reads_as_humble_reads_it(humble: None, tmp_path: Path) -> None:
    """`bag make` with ROS_DISTRO=humble: sqlite3, metadata version 5, every field convertible."""
    summary = make_bag(CLIP, tmp_path / 'bag', max_frames=FRAMES)
    assert summary.storage == 'sqlite3'
    information = yaml.safe_load((tmp_path / 'bag' / 'metadata.yaml').read_text())[
        'rosbag2_bagfile_information']
    assert information['version'] == 5
    assert information['storage_identifier'] == 'sqlite3'
    assert humble_metadata_problems(tmp_path / 'bag') == []
    assert humble_sqlite_problems(tmp_path / 'bag') == []
    assert len(list(read_images(tmp_path / 'bag'))) == FRAMES


def test_bags_of_every_distro_are_read(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A bag made for one distribution is read by the bag tools running under each other."""
    for writer in BAG_FORMATS:
        monkeypatch.setenv('ROS_DISTRO', writer)
        make_bag(CLIP, tmp_path / writer, max_frames=FRAMES)
    for reader in BAG_FORMATS:
        monkeypatch.setenv('ROS_DISTRO', reader)
        for writer in BAG_FORMATS:
            assert len(list(read_images(tmp_path / writer))) == FRAMES, (writer, reader)


def test_the_version_9_metadata_of_jazzy_fails_humbles_parser(tmp_path: Path) -> None:
    """Positive control: what Humble refuses (rosbag2 #1895) is found by the simulated parser."""
    make_bag(CLIP, tmp_path / 'kilted', max_frames=FRAMES, storage='sqlite3')
    problems = humble_metadata_problems(tmp_path / 'kilted')
    assert any('offered_qos_profiles: a string of YAML' in problem for problem in problems), \
        problems


def test_types_come_from_msg_files_where_no_description_is_installed(
        humble: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """An ament prefix with .msg files only (as Humble installs them): the bag types resolve."""
    messages = tmp_path / 'prefix' / 'share' / 'demo_msgs' / 'msg'
    messages.mkdir(parents=True)
    (messages / 'Part.msg').write_text('float64 size\nstring label\n')
    (messages / 'Thing.msg').write_text(
        'std_msgs/Header header\nPart[] parts\ndemo_msgs/Part main\nuint8 KIND_A=1\n')
    monkeypatch.setenv('AMENT_PREFIX_PATH', str(tmp_path / 'prefix'))
    store = typestore_for([IMAGE_TYPE, 'demo_msgs/msg/Thing'])
    assert {'demo_msgs/msg/Thing', 'demo_msgs/msg/Part'} <= set(store.fielddefs)
    thing = store.types['demo_msgs/msg/Thing'](
        header=store.types['std_msgs/msg/Header'](
            stamp=store.types['builtin_interfaces/msg/Time'](sec=1, nanosec=2), frame_id='f'),
        parts=[], main=store.types['demo_msgs/msg/Part'](size=1.5, label='x'))
    assert store.deserialize_cdr(store.serialize_cdr(thing, 'demo_msgs/msg/Thing'),
                                 'demo_msgs/msg/Thing').main.label == 'x'
    monkeypatch.setenv('ROS_DISTRO', 'kilted')  # where descriptions must exist, it says so
    with pytest.raises(BagError,
                       match='no definition of demo_msgs/msg/Thing installed .*Thing.json'):
        typestore_for(['demo_msgs/msg/Thing'])


def test_the_cli_makes_a_humble_bag(tmp_path: Path) -> None:
    """`triton-perception bag make` as a Humble user runs it: no --storage, ROS_DISTRO set."""
    result = subprocess.run(
        [sys.executable, '-m', 'triton_perception.cli', 'bag', 'make', str(CLIP),
         str(tmp_path / 'bag'), '--max-frames', str(FRAMES)],
        capture_output=True, text=True, timeout=120,
        env={**os.environ, 'ROS_DISTRO': 'humble'})
    assert result.returncode == 0, result.stderr
    assert list((tmp_path / 'bag').glob('*.db3'))
    assert humble_metadata_problems(tmp_path / 'bag') == []


@pytest.mark.ros
@pytest.mark.server
def test_evaluate_records_a_humble_outputs_bag(humble: None, monkeypatch: pytest.MonkeyPatch,
                                               triton_server: Any, tmp_path: Path) -> None:
    """`bag evaluate` (play, the nodes, BagRecorder) with ROS_DISTRO=humble end to end."""
    # Named explicitly: for humble the package would pick Fast DDS 2's variable, which the
    # Fast DDS 3 of the development wheels does not read.
    monkeypatch.setenv('FASTDDS_DEFAULT_PROFILES_FILE', str(config_file('fastdds_profile.xml')))
    make_bag(CLIP, tmp_path / 'bag', max_frames=10)
    report = evaluate(EvaluationSettings(bag=tmp_path / 'bag', output=tmp_path / 'evaluation',
                                         triton_url=triton_server.grpc_url), log=print)
    outputs = Path(report['outputs_bag'])
    assert list(outputs.glob('*.db3')), sorted(outputs.iterdir())
    assert humble_metadata_problems(outputs) == []
    assert humble_sqlite_problems(outputs) == []
    types = {entry['topic_metadata']['type'] for entry in yaml.safe_load(
        (outputs / 'metadata.yaml').read_text())['rosbag2_bagfile_information'][
        'topics_with_message_count']}
    assert 'vision_msgs/msg/Detection2DArray' in types
    assert report['detection']['frames'] >= 1, report['detection']
