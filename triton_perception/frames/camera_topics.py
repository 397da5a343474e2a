"""Topic names around a camera's image topic, as image_transport lays them out."""
from __future__ import annotations

from triton_perception.parameters import TRANSPORTS


def camera_info_sibling(image_topic: str) -> str:
    """image_transport's camera_info topic of an image topic: /cam/image_raw -> /cam/camera_info."""
    namespace, _separator, _name = image_topic.rpartition('/')
    return f'{namespace}/camera_info' if namespace or image_topic.startswith('/') \
        else 'camera_info'


def transport_remappings(image_topic: str) -> list[tuple[str, str]]:
    """
    Return the remappings of a node's `image` and its transports' topics to a camera's.

    One per transport of parameters.TRANSPORTS: `image` itself (raw), then `image/compressed`
    and the others, as image_transport names their topics.
    """
    return [(transport.topic, transport.topic_of(image_topic))
            for transport in TRANSPORTS.values()]
