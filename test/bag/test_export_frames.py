"""`bag export-frames`: frames named by stamp, frames.json with index, stamp and file."""
from __future__ import annotations

import json
from pathlib import Path
import subprocess
import sys

import cv2
import numpy as np
import pytest

from support.checkout import SHARED
from triton_perception.bag.bag_format import BagError
from triton_perception.bag.frame_export import export_frames
from triton_perception.bag.make import make_bag
from triton_perception.bag.reading import read_images

CLIP = SHARED / 'data' / 'videos' / 'solidWhiteRight.mp4'


@pytest.fixture(scope='module')
def bag(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Return a bag of the clip's first seven frames, made once per module."""
    path = tmp_path_factory.mktemp('export') / 'bag'
    make_bag(CLIP, path, max_frames=7)
    return path


def test_png_frames_are_the_bags_pixels_named_by_stamp(bag: Path, tmp_path: Path) -> None:
    """
    Every third frame is exported as a lossless PNG named by its header stamp.

    frames.json lists each with its index in the topic and its stamp.
    """
    summary = export_frames(bag, tmp_path / 'frames', every=3)
    listing = json.loads((tmp_path / 'frames' / 'frames.json').read_text())
    images = list(read_images(bag))
    assert (summary.exported, summary.frames_in_topic) == (3, 7)
    assert [entry['index'] for entry in listing['frames']] == [0, 3, 6]
    for entry in listing['frames']:
        image = images[entry['index']]
        assert entry['stamp_ns'] == image.header_stamp_ns
        assert entry['file'] == f'{image.header_stamp_ns}.png'
        written = cv2.imread(str(tmp_path / 'frames' / entry['file']))[:, :, ::-1]
        assert np.array_equal(written, image.rgb)  # lossless


def test_the_cli_exports_jpeg_and_refuses_a_second_export(bag: Path, tmp_path: Path) -> None:
    """`bag export-frames --format jpg` exports every frame and never overwrites an export."""
    command = [sys.executable, '-m', 'triton_perception.cli', 'bag', 'export-frames', str(bag),
               '--output', str(tmp_path / 'frames'), '--format', 'jpg']
    first = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert first.returncode == 0, first.stderr
    assert 'exported 7 of 7 frames' in first.stderr + first.stdout
    assert len(list((tmp_path / 'frames').glob('*.jpg'))) == 7
    second = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert second.returncode != 0 and 'frames.json exists' in second.stderr


def test_bad_arguments_are_refused(bag: Path, tmp_path: Path) -> None:
    """A step below one or a topic the bag lacks is refused with a BagError saying which."""
    with pytest.raises(BagError, match='--every must be at least 1'):
        export_frames(bag, tmp_path / 'a', every=0)
    with pytest.raises(BagError, match='has no topic /nothing'):
        export_frames(bag, tmp_path / 'b', topic='/nothing')
