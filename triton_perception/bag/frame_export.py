"""
`bag export-frames`: a bag's camera frames as image files, for labelling in CVAT or Label Studio.

Each exported frame is named by its header stamp in nanoseconds (`<stamp_ns>.png`), the key by
which labels come back (COCO `file_name`, CULane `<stamp_ns>.lines.txt`, TuSimple `raw_file`,
CVAT for images' `<image name>`); `frames.json` lists every exported frame with its 0-based index
in the image topic, which is what MOTChallenge's 1-based `frame` counts, and maps the frames of a
labelling task made from the images to the topic's (scoring/exported_frames.py reads it).
"""
from __future__ import annotations

from dataclasses import dataclass
import json
from pathlib import Path

import cv2

from triton_perception.bag.bag_format import BagError, DEFAULT_TOPIC, Progress
from triton_perception.bag.reading import read_images
from triton_perception.scoring import FRAMES_FILE
FORMATS = {'png': [cv2.IMWRITE_PNG_COMPRESSION, 3], 'jpg': [cv2.IMWRITE_JPEG_QUALITY, 95]}
PROGRESS_EVERY = 100  # frames between progress lines


@dataclass(frozen=True)
class ExportSummary:
    """What `export_frames` wrote: the directory, the frames and the topic's frame count."""

    output: Path
    exported: int
    frames_in_topic: int


def export_frames(bag: Path, output: Path, *, topic: str = DEFAULT_TOPIC, every: int = 1,
                  image_format: str = 'png', progress: Progress | None = None,
                  stamps: set[int] | None = None) -> ExportSummary:
    """
    Write every `every`-th frame of `topic` to `output` and list them in `output/frames.json`.

    With `stamps`, only the frames of those header stamps (ns) among them.

    PNG is lossless (what a labeller should see); 'jpg' (quality 95) is smaller. The directory
    may exist but must not hold a frames.json already, so an earlier export is never mixed in.

    Raises BagError for a bad `every` or format, an existing export, or an unreadable bag.
    """
    if every < 1:
        raise BagError(f'--every must be at least 1, got {every}')
    if image_format not in FORMATS:
        raise BagError(f"format {image_format!r} is not one of {', '.join(FORMATS)}")
    if (output / FRAMES_FILE).exists():
        raise BagError(f'{output / FRAMES_FILE} exists: export into a new directory')
    output.mkdir(parents=True, exist_ok=True)
    entries = []
    index = -1
    for index, image in enumerate(read_images(bag, topic)):
        if index % every or (stamps is not None and image.header_stamp_ns not in stamps):
            continue
        name = f'{image.header_stamp_ns}.{image_format}'
        if not cv2.imwrite(str(output / name), image.rgb[:, :, ::-1], FORMATS[image_format]):
            raise BagError(f'cannot write {output / name}')
        entries.append({'index': index, 'stamp_ns': image.header_stamp_ns, 'file': name})
        if progress and len(entries) % PROGRESS_EVERY == 0:
            progress(f'exported {len(entries)} frames (frame {index})')
    written = [entry['stamp_ns'] for entry in entries]
    if len(set(written)) != len(written):
        raise BagError(f'{topic} in {bag} has frames with the same header stamp: labels could '
                       'not say which frame they belong to')
    (output / FRAMES_FILE).write_text(json.dumps(
        {'bag': str(bag), 'topic': topic, 'every': every, 'frames': entries}, indent=1) + '\n',
        encoding='utf-8')
    return ExportSummary(output, len(entries), index + 1)
