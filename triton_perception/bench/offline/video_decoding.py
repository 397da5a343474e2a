"""
What decoding a video camera costs the node: CPU ms per frame, H.264 and H.265, by frame size.

The clip's frames, scaled to each size, are encoded as a camera would send them
(frames.VideoEncoder: keyframe every 10 frames, no B-frames) and decoded packet by packet by
the nodes' decoder (frames.open_video_decoder: `--decoder` as the video_decoder parameter),
RGB conversion included, as the node does it. CPU time is the process's (every FFmpeg thread
counted) and, for gst:ELEMENT, that of its gst-launch-1.0 child; wall time per frame beside it.

    triton-perception bench --video-decoding [--frames 200] [--decoder NAME]
"""
from __future__ import annotations

from dataclasses import dataclass
import itertools
import platform
import resource
import time
from typing import cast, Iterator

import cv2
import numpy as np
from numpy.typing import NDArray

from triton_perception.bench.session import BenchError
from triton_perception.frames import (H264, HEVC, open_video_decoder, VIDEO_FORMATS, VideoEncoder,
                                      VideoPacket)
from triton_perception.system import DEFAULT_CLIP

SIZES = ((1280, 720), (1920, 1080))


@dataclass(frozen=True)
class DecodingCost:
    """One codec at one size: frames decoded, CPU and wall ms per frame, mean packet bytes."""

    codec: str
    width: int
    height: int
    frames: int
    cpu_ms: float
    wall_ms: float
    packet_bytes: float


def clip_frames(count: int) -> list[NDArray[np.uint8]]:
    """Return the first `count` frames of the shipped clip as RGB (looped if shorter)."""
    capture = cv2.VideoCapture(str(DEFAULT_CLIP))
    frames: list[NDArray[np.uint8]] = []
    while len(frames) < count:
        ok, bgr = capture.read()
        if not ok:
            break
        frames.append(cast(NDArray[np.uint8], cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB)))
    capture.release()
    if not frames:
        raise BenchError(f'cannot read {DEFAULT_CLIP}')
    return list(itertools.islice(itertools.cycle(frames), count))


def measure(codec: str, frames: list[NDArray[np.uint8]], size: tuple[int, int],
            decoder: str = '') -> DecodingCost:
    """Encode `frames` at `size` as `codec`, then time decoding every packet."""
    width, height = size
    encoder = VideoEncoder(codec, width, height, rate_hz=25.0)
    packets = [packet.data for rgb in frames for packet in encoder.encode(
        cast(NDArray[np.uint8], cv2.resize(rgb, (width, height))))]
    packets += [packet.data for packet in encoder.flush()]
    video = open_video_decoder(decoder)
    video.decode(VideoPacket(packets[0], VIDEO_FORMATS[codec]))  # a child process started
    cpu, wall = _cpu_s(), time.perf_counter()
    for data in packets[1:]:
        video.decode(VideoPacket(data, VIDEO_FORMATS[codec]))
    wall = time.perf_counter() - wall
    video.close()  # the child reaped: its CPU time counts
    cpu = _cpu_s() - cpu
    packets = packets[1:]
    return DecodingCost(codec, width, height, len(packets), cpu * 1000 / len(packets),
                        wall * 1000 / len(packets), sum(map(len, packets)) / len(packets))


def _cpu_s() -> float:
    """Return this process's CPU time and that of its ended children, in seconds."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def decoding_report(frame_count: int, decoder: str = '') -> Iterator[str]:
    """Yield a Markdown table of the decoding cost per codec and size, line by line."""
    frames = clip_frames(frame_count)
    yield (f'{platform.machine()}, {platform.processor() or "?"}, Python '
           f'{platform.python_version()}; {frame_count} frames of {DEFAULT_CLIP.name}')
    yield '| codec | size | CPU ms per frame | wall ms per frame | bytes per packet |'
    yield '| --- | --- | --- | --- | --- |'
    for codec, size in itertools.product((H264, HEVC), SIZES):
        cost = measure(codec, frames, size, decoder)
        yield (f'| {VIDEO_FORMATS[codec]} | {cost.width}x{cost.height} | {cost.cpu_ms:.2f} | '
               f'{cost.wall_ms:.2f} | {cost.packet_bytes:.0f} |')
