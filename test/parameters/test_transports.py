"""The camera transport table: image_transport's names and topics, and everything it feeds."""
from __future__ import annotations

import re

import pytest

from triton_perception.parameters import (argument_description, COMMON, Decoding,
                                          IMAGE_TRANSPORTS, OVERLAY, ParameterError,
                                          specs_by_name, transport_named, TRANSPORTS,
                                          VIDEO_TRANSPORTS)


def test_the_table_holds_image_transports_names_topics_and_types() -> None:
    """The raw transport is the image topic itself; every other one the subtopic of its name."""
    assert list(TRANSPORTS) == ['raw', 'compressed', 'ffmpeg', 'foxglove']
    assert {name: each.topic for name, each in TRANSPORTS.items()} == {
        'raw': 'image', 'compressed': 'image/compressed', 'ffmpeg': 'image/ffmpeg',
        'foxglove': 'image/foxglove'}
    assert TRANSPORTS['compressed'].topic_of('/cam/image_raw') == '/cam/image_raw/compressed'
    assert TRANSPORTS['raw'].topic_of('/cam/image_raw') == '/cam/image_raw'
    for name, transport in TRANSPORTS.items():
        assert transport.name == name
        assert re.fullmatch(r'[a-z_]+/msg/[A-Z]\w*', transport.message_type)


def test_only_video_transports_are_taken_as_messages_and_decoded_per_camera() -> None:
    """Images are read from their bytes; video needs the camera's own decoder."""
    assert IMAGE_TRANSPORTS == ('raw', 'compressed')
    assert VIDEO_TRANSPORTS == ('ffmpeg', 'foxglove')
    for name, transport in TRANSPORTS.items():
        assert transport.serialized == (name in IMAGE_TRANSPORTS)
        assert transport.is_video == (transport.decoding is Decoding.VIDEO)
    assert TRANSPORTS['compressed'].decoding is Decoding.COMPRESSED_IMAGE


def test_a_name_not_in_the_table_is_refused_in_one_line_naming_the_accepted() -> None:
    """A bad name: transport_named raises ParameterError naming every transport of the table."""
    assert transport_named('ffmpeg') is TRANSPORTS['ffmpeg']
    with pytest.raises(ParameterError) as raised:
        transport_named('theora')
    assert str(raised.value) == ("input_transport 'theora' is not one of raw, compressed, "
                                 'ffmpeg, foxglove')


def test_the_parameters_take_their_accepted_values_and_words_from_the_table() -> None:
    """The nodes accept every transport, the overlay the image ones; descriptions as before."""
    node = specs_by_name(COMMON)['input_transport']
    overlay = specs_by_name(OVERLAY)['input_transport']
    assert node.choices == tuple(TRANSPORTS) and overlay.choices == IMAGE_TRANSPORTS
    assert node.description == (
        'raw: subscribe to image (sensor_msgs/Image); compressed: image/compressed '
        '(sensor_msgs/CompressedImage, jpeg or png); ffmpeg: image/ffmpeg '
        '(ffmpeg_image_transport_msgs/FFMPEGPacket); foxglove: image/foxglove '
        '(foxglove_msgs/CompressedVideo); video in H.264 or H.265')
    assert overlay.description == ('raw: draw on image (sensor_msgs/Image); compressed: on '
                                   'image/compressed')
    assert argument_description() == (
        'raw (Image), compressed (CompressedImage jpeg/png), or video in H.264 or H.265: '
        'ffmpeg (FFMPEGPacket) or foxglove (CompressedVideo)')
    assert specs_by_name(COMMON)['video_decoder'].description.startswith(
        'decoder of a video input_transport (ffmpeg, foxglove): ')
