"""Video streams made here: frames of a moving square, encoded as H.264 or H.265 packets."""
from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from triton_perception.frames import VIDEO_FORMATS, VideoEncoder, VideoPacket

GOP = 5


def moving_frames(count: int, width: int = 160, height: int = 96) -> list[NDArray[np.uint8]]:
    """Return `count` RGB frames of a bright square moving over a gradient."""
    frames = []
    gradient = np.linspace(0, 200, width, dtype=np.float32)[None, :, None]
    for index in range(count):
        rgb = np.broadcast_to(gradient, (height, width, 3)).astype(np.uint8).copy()
        x = 8 + 4 * index
        rgb[20:50, x:x + 30] = (250, 40, 40)
        frames.append(rgb)
    return frames


def packets(codec: str, frames: list[NDArray[np.uint8]]) -> list[VideoPacket]:
    """Return the frames encoded as `codec` packets, one per frame, keyframe every GOP."""
    height, width = frames[0].shape[:2]
    encoder = VideoEncoder(codec, width, height, gop=GOP)
    encoded = [packet for rgb in frames for packet in encoder.encode(rgb)]
    encoded += list(encoder.flush())
    assert len(encoded) == len(frames)
    return [VideoPacket(packet.data, VIDEO_FORMATS[codec]) for packet in encoded]
