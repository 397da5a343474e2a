"""
Static transforms as /tf_static carries them -> the transform between two frames.

Used when tf2_ros is not installed: robot_state_publisher and static_transform_publisher put
camera mountings on /tf_static, a latched topic of tf2_msgs/TFMessage.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from triton_perception.ground.camera import quaternion_matrix

if TYPE_CHECKING:
    from geometry_msgs.msg import Transform
    from tf2_msgs.msg import TFMessage


def transform_matrix(transform: Transform) -> NDArray[np.float64]:
    """geometry_msgs/Transform -> 4x4 (parent <- child)."""
    matrix = np.eye(4)
    rotation, translation = transform.rotation, transform.translation
    matrix[:3, :3] = quaternion_matrix(rotation.x, rotation.y, rotation.z, rotation.w)
    matrix[:3, 3] = (translation.x, translation.y, translation.z)
    return matrix


class StaticTransforms:
    """The static tree: each child's parent and parent <- child transform."""

    def __init__(self) -> None:
        """Start with no transforms."""
        self._parents: dict[str, tuple[str, NDArray[np.float64]]] = {}

    def add(self, message: TFMessage) -> None:
        """Add a tf2_msgs/TFMessage; a later transform of the same child replaces the earlier."""
        for stamped in message.transforms:
            parent = stamped.header.frame_id.lstrip('/')
            child = stamped.child_frame_id.lstrip('/')
            if parent and child and parent != child:
                self._parents[child] = (parent, transform_matrix(stamped.transform))

    def _to_root(self, frame: str) -> dict[str, NDArray[np.float64]]:
        """Every ancestor of frame (itself included) -> ancestor <- frame."""
        chain, matrix = {frame: np.eye(4)}, np.eye(4)
        while frame in self._parents and len(chain) <= len(self._parents):
            frame, step = self._parents[frame]
            matrix = step @ matrix
            if frame in chain:
                break  # a cycle: published trees have none
            chain[frame] = matrix
        return chain

    def lookup(self, target: str, source: str) -> NDArray[np.float64] | None:
        """4x4 target <- source, or None when the two frames are not connected."""
        target, source = target.lstrip('/'), source.lstrip('/')
        from_source, from_target = self._to_root(source), self._to_root(target)
        common = next((frame for frame in from_source if frame in from_target), None)
        if common is None:
            return None
        matrix: NDArray[np.float64] = np.linalg.inv(from_target[common]) @ from_source[common]
        return matrix
