"""Topic names around a camera's image topic, as image_transport lays them out."""
from __future__ import annotations


def camera_info_sibling(image_topic: str) -> str:
    """image_transport's camera_info topic of an image topic: /cam/image_raw -> /cam/camera_info."""
    namespace, _separator, _name = image_topic.rpartition('/')
    return f'{namespace}/camera_info' if namespace or image_topic.startswith('/') \
        else 'camera_info'
