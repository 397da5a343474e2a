"""
Turn a video file or a directory of images into a reproducible camera rosbag2.

Stamps come from the frame index and the frame rate, counted from a fixed epoch, so the
same input always gives the same bag (OpenCV's CAP_PROP_POS_MSEC is unreliable for this).
Each message's header stamp equals its bag time, as if a camera driver had been recorded.
"""
from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import suppress
from dataclasses import dataclass
from functools import partial
import itertools
import math
from pathlib import Path
import shutil
import time
from typing import cast, TYPE_CHECKING, TypedDict

import cv2
import numpy as np
from numpy.typing import NDArray
from rosbags.typesys.store import Typestore
import yaml

from triton_perception.bag.bag_format import (BagError, COMPRESSED_IMAGE_TYPE, DEFAULT_TOPIC,
                                              DistroWriter, ENCODINGS, IMAGE_TYPE, new_writer,
                                              Progress, typestore, typestore_for,
                                              VIDEO_TRANSPORT, VIDEO_TYPE)
from triton_perception.frames import (camera_info_sibling, DEFAULT_GOP, H264, HEVC, VIDEO_FORMATS,
                                      VideoEncoder)

if TYPE_CHECKING:  # rosbags declares its message protocol for type checkers only
    from rosbags.typesys.store import Msg
    from std_msgs.msg import Header  # a rosbags Header has its fields

DEFAULT_EPOCH_S = 1_700_000_000
DEFAULT_IMAGE_RATE_HZ = 10.0
JPEG_QUALITY = 90
PROGRESS_EVERY_FRAMES = 50
CAMERA_INFO_TYPE = 'sensor_msgs/msg/CameraInfo'
IMAGE_SUFFIXES = frozenset(
    {'.jpg', '.jpeg', '.png', '.bmp', '.tif', '.tiff', '.webp', '.ppm', '.pgm'})
VIDEO_CODECS = {'h264': H264, 'h265': HEVC}  # `bag make --video`


@dataclass(frozen=True)
class BagSummary:
    """What was written; width and height are those of the first frame."""

    output: Path
    storage: str
    topic: str
    msgtype: str
    message_count: int
    width: int
    height: int
    rate_hz: float
    start_ns: int
    end_ns: int
    size_bytes: int
    elapsed_s: float


@dataclass(frozen=True)
class _Source:
    frames: Iterator[NDArray[np.uint8]]  # BGR, as OpenCV decodes
    rate_hz: float
    expected_frames: int | None  # for progress only: a container's frame count is a guess


def make_bag(
    source: Path,
    output: Path,
    *,
    topic: str = DEFAULT_TOPIC,
    frame_id: str = 'camera',
    storage: str | None = None,
    compressed: bool = False,
    rate_hz: float | None = None,
    max_frames: int | None = None,
    encoding: str = 'rgb8',
    start_time_s: float = DEFAULT_EPOCH_S,
    progress: Progress | None = None,
    camera_info: Path | None = None,
    video: str | None = None,
) -> BagSummary:
    """
    Write ``source`` (video file or image directory) as Image or CompressedImage messages.

    ``rate_hz`` overrides the video's frame rate; for an image directory (files sorted by
    name) it defaults to 10 Hz. ``compressed`` writes JPEG CompressedImage messages
    (quality 90, format 'jpeg') instead of raw ``encoding`` pixels. The output directory
    must not exist; it is removed again if writing fails. ``camera_info`` (a calibration file
    in the camera_calibration_parsers YAML format) adds a CameraInfo with each frame's header
    on the image_transport sibling ``camera_info`` topic. ``video`` ('h264' or 'h265') writes
    foxglove_msgs/CompressedVideo on ``<topic>/foxglove`` instead (image_transport's name, what
    the nodes take with input_transport foxglove): one frame per message, no B-frames, a
    keyframe with its parameter sets every DEFAULT_GOP (10) frames, so that a bag cut anywhere
    decodes from its first keyframe on.
    """
    _check_options(video, compressed, encoding, rate_hz, max_frames)
    writer = new_writer(output, storage)
    storage = writer.storage_plugin.name.lower()
    opened = _open_source(source, rate_hz, max_frames)
    first = next(opened.frames, None)
    if first is None:
        raise BagError(f'{source} has no frames')
    stream = _stream(topic, frame_id, first, opened.rate_hz, compressed, encoding, video,
                     camera_info)
    start_ns = int(start_time_s) * 1_000_000_000 + round((start_time_s % 1) * 1e9)
    began = time.monotonic()
    count, end_ns = _write_frames(writer, output, stream, itertools.chain([first], opened.frames),
                                  start_ns, 1e9 / opened.rate_hz, source.name, progress,
                                  opened.expected_frames)
    summary = BagSummary(
        output=output, storage=storage, topic=stream.topic, msgtype=stream.msgtype,
        message_count=count, width=first.shape[1], height=first.shape[0],
        rate_hz=opened.rate_hz, start_ns=start_ns, end_ns=end_ns,
        size_bytes=_directory_size(output), elapsed_s=time.monotonic() - began)
    if progress:
        progress(f'wrote {count} frames ({summary.size_bytes / 1e6:.1f} MB) to {output} '
                 f'in {summary.elapsed_s:.1f} s')
    return summary


def _check_options(video: str | None, compressed: bool, encoding: str, rate_hz: float | None,
                   max_frames: int | None) -> None:
    """Refuse contradictory or out-of-range options before anything is opened or written."""
    if video is not None and video not in VIDEO_CODECS:
        raise BagError(f"video codec {video!r} is not one of {', '.join(VIDEO_CODECS)}")
    if video is not None and compressed:
        raise BagError('--video and --compressed both choose the message type: pass one')
    if encoding not in ENCODINGS:
        raise BagError(f"encoding {encoding!r} is not one of {', '.join(ENCODINGS)}")
    if rate_hz is not None and not rate_hz > 0:
        raise BagError(f'rate_hz must be positive, got {rate_hz}')
    if max_frames is not None and max_frames < 1:
        raise BagError(f'max_frames must be at least 1, got {max_frames}')


class _Calibration(TypedDict):
    """A CameraInfo's fields apart from its header, as a calibration file gives them."""

    height: int
    width: int
    distortion_model: str
    binning_x: int
    binning_y: int
    roi: Msg  # sensor_msgs/RegionOfInterest of the bag's typestore
    k: NDArray[np.float64]
    r: NDArray[np.float64]
    p: NDArray[np.float64]
    d: NDArray[np.float64]


@dataclass(frozen=True)
class _Stream:
    """The messages a bag holds: their topic and type, and how each frame becomes one."""

    topic: str
    msgtype: str
    store: Typestore
    frame_id: str
    message: Callable[[object, NDArray[np.uint8]], object]  # (header, BGR frame) -> message
    info_topic: str
    calibration: _Calibration | None  # the CameraInfo written beside each frame, if any


def _stream(topic: str, frame_id: str, first: NDArray[np.uint8], rate_hz: float,
            compressed: bool, encoding: str, video: str | None,
            camera_info: Path | None) -> _Stream:
    """
    Choose the message type from the options; a video's encoder takes the first frame's size.

    A video goes on image_transport's foxglove sibling of `topic`; CameraInfo always goes on
    the image topic's camera_info sibling.
    """
    store = typestore() if video is None else typestore_for([VIDEO_TYPE])
    msgtype = (VIDEO_TYPE if video is not None else COMPRESSED_IMAGE_TYPE if compressed
               else IMAGE_TYPE)
    message: Callable[[object, NDArray[np.uint8]], object]
    if video is not None:
        codec = VIDEO_CODECS[video]
        encoder = VideoEncoder(codec, first.shape[1], first.shape[0], rate_hz=rate_hz,
                               gop=DEFAULT_GOP)
        message = partial(_video_message, store, encoder=encoder, codec=codec)
    elif compressed:
        message = partial(_compressed_message, store)
    else:
        message = partial(_image_message, store, encoding=encoding)
    return _Stream(VIDEO_TRANSPORT.topic_of(topic) if video is not None else topic, msgtype,
                   store, frame_id, message, camera_info_sibling(topic),
                   _calibration(camera_info) if camera_info else None)


def _write_frames(writer: DistroWriter, output: Path, stream: _Stream,
                  frames: Iterator[NDArray[np.uint8]], start_ns: int, frame_ns: float,
                  source_name: str, progress: Progress | None,
                  expected: int | None) -> tuple[int, int]:
    """
    Write every frame, stamped by its index; return the count and the last stamp.

    The writer opens only now, so that a source that cannot be read leaves no directory
    behind; if writing fails, the output directory is removed again.
    """
    count = 0
    stamp_ns = start_ns
    writer.open()
    try:
        connection = writer.add_connection(stream.topic, stream.msgtype, typestore=stream.store)
        if stream.calibration is not None:
            info_connection = writer.add_connection(stream.info_topic, CAMERA_INFO_TYPE,
                                                    typestore=stream.store)
        writer.set_custom_data('triton_perception.source', source_name)
        for index, bgr in enumerate(frames):
            stamp_ns = start_ns + round(index * frame_ns)
            header = stream.store.types['std_msgs/msg/Header'](
                stamp=stream.store.types['builtin_interfaces/msg/Time'](
                    sec=stamp_ns // 1_000_000_000, nanosec=stamp_ns % 1_000_000_000),
                frame_id=stream.frame_id)
            writer.write(connection, stamp_ns,
                         stream.store.serialize_cdr(stream.message(header, bgr), stream.msgtype))
            if stream.calibration is not None:
                info = stream.store.types[CAMERA_INFO_TYPE](header=header, **stream.calibration)
                writer.write(info_connection, stamp_ns,
                             stream.store.serialize_cdr(info, CAMERA_INFO_TYPE))
            count = index + 1
            if progress and count % PROGRESS_EVERY_FRAMES == 0:
                progress(f'{count}/{expected or "?"} frames')
        writer.close()
    except BaseException:
        with suppress(Exception):
            writer.abort()
        shutil.rmtree(output, ignore_errors=True)
        raise
    return count, stamp_ns


def _calibration(path: Path) -> _Calibration:
    """Read the CameraInfo fields (without header) from a camera_calibration_parsers YAML file."""
    try:
        data = yaml.safe_load(Path(path).read_text(encoding='utf-8'))
        matrices = {name: np.array(data[key]['data'], dtype=np.float64) for name, key in (
            ('k', 'camera_matrix'), ('r', 'rectification_matrix'), ('p', 'projection_matrix'),
            ('d', 'distortion_coefficients'))}
        width, height = int(data['image_width']), int(data['image_height'])
        model = str(data['distortion_model'])
    except (OSError, yaml.YAMLError, KeyError, TypeError, ValueError) as error:
        raise BagError(f'cannot read the calibration {path}: {error} (expected the '
                       'camera_calibration_parsers YAML format)') from None
    store = typestore()
    return _Calibration(height=height, width=width, distortion_model=model, binning_x=0,
                        binning_y=0, roi=store.types['sensor_msgs/msg/RegionOfInterest'](
                            x_offset=0, y_offset=0, height=0, width=0, do_rectify=False),
                        k=matrices['k'], r=matrices['r'], p=matrices['p'], d=matrices['d'])


def _open_source(source: Path, rate_hz: float | None, max_frames: int | None) -> _Source:
    """Open the frames to write: at most `max_frames` of them."""
    opened = _opened_source(source, rate_hz)
    expected = opened.expected_frames
    if expected is not None and max_frames is not None:
        expected = min(expected, max_frames)
    return _Source(itertools.islice(opened.frames, max_frames), opened.rate_hz, expected)


def _opened_source(source: Path, rate_hz: float | None) -> _Source:
    if source.is_dir():
        paths = sorted(p for p in source.iterdir()
                       if p.is_file() and p.suffix.lower() in IMAGE_SUFFIXES)
        if not paths:
            raise BagError(f'{source} holds no images ({", ".join(sorted(IMAGE_SUFFIXES))})')
        return _Source(_image_frames(paths), rate_hz or DEFAULT_IMAGE_RATE_HZ, len(paths))
    if not source.is_file():
        raise BagError(f'{source} does not exist')
    capture = cv2.VideoCapture(str(source))
    if not capture.isOpened():
        raise BagError(f'OpenCV cannot open {source} as a video')
    fps = capture.get(cv2.CAP_PROP_FPS)
    if rate_hz is None and not (math.isfinite(fps) and fps > 0):
        capture.release()
        raise BagError(f'{source} declares no frame rate ({fps}); pass rate_hz')
    count = int(capture.get(cv2.CAP_PROP_FRAME_COUNT))
    return _Source(_video_frames(capture), rate_hz or fps, count if count > 0 else None)


def _video_frames(capture: cv2.VideoCapture) -> Iterator[NDArray[np.uint8]]:
    try:
        while True:
            ok, frame = capture.read()
            if not ok:
                return
            yield cast(NDArray[np.uint8], frame)  # OpenCV's stubs do not say uint8
    finally:
        capture.release()


def _image_frames(paths: list[Path]) -> Iterator[NDArray[np.uint8]]:
    for path in paths:
        frame = cv2.imread(str(path), cv2.IMREAD_COLOR)
        if frame is None:
            raise BagError(f'OpenCV cannot decode {path}')
        yield cast(NDArray[np.uint8], frame)  # IMREAD_COLOR: 8-bit BGR


def _image_message(store: Typestore, header: Header, bgr: NDArray[np.uint8],
                   encoding: str) -> object:
    pixels = cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB) if encoding == 'rgb8' else bgr
    height, width = pixels.shape[:2]
    return store.types[IMAGE_TYPE](
        header=header, height=height, width=width, encoding=encoding, is_bigendian=0,
        step=width * 3, data=np.ascontiguousarray(pixels).reshape(-1))


def _compressed_message(store: Typestore, header: Header, bgr: NDArray[np.uint8]) -> object:
    ok, jpeg = cv2.imencode('.jpg', bgr, [cv2.IMWRITE_JPEG_QUALITY, JPEG_QUALITY])
    if not ok:
        raise BagError(f'OpenCV could not JPEG-encode a {bgr.shape[1]}x{bgr.shape[0]} frame')
    return store.types[COMPRESSED_IMAGE_TYPE](
        header=header, format='jpeg', data=jpeg.reshape(-1))


def _video_message(store: Typestore, header: Header, bgr: NDArray[np.uint8], encoder: VideoEncoder,
                   codec: str) -> object:
    """Return the frame as a CompressedVideo packet; BagError for a frame of another size."""
    rgb = cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB)
    try:
        (packet,) = encoder.encode(cast(NDArray[np.uint8], rgb))
    except ValueError:
        raise BagError(f'a {bgr.shape[1]}x{bgr.shape[0]} frame cannot join a video of another '
                       'size (or the encoder held it back): make the frames one size') from None
    return store.types[VIDEO_TYPE](timestamp=header.stamp, frame_id=header.frame_id,
                                   data=np.frombuffer(packet.data, dtype=np.uint8),
                                   format=VIDEO_FORMATS[codec])


def _directory_size(path: Path) -> int:
    return sum(item.stat().st_size for item in path.rglob('*') if item.is_file())
