"""
The shared highway clip (solidWhiteRight.mp4): its frames, a bag of it, its calibration and lanes.

The clip is 8.8 s of 960x540 at 25 fps (221 frames) in the shared data; its camera's calibration
and hand labels are in test/data/highway_clip; where its ego lane lines meet the image bottom is
what the shared models README says.
"""
from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np

from support.checkout import SHARED, shared_path
from triton_perception.bag.make import make_bag

CLIP = SHARED / 'data' / 'videos' / 'solidWhiteRight.mp4'
CALIBRATION = Path(__file__).resolve().parents[1] / 'data' / 'highway_clip'
LABELS = CALIBRATION / 'labels'  # hand labels: the cars' tracks (gt.txt), the lanes (culane/)
# The README puts the ego boundaries' bottom crossings of solidWhiteRight.mp4 "near" x 150-230 and
# 820-890. The model's own lane mask crosses the bottom row at x 127-194 and 814-893 over the clip,
# so "near" is read as those bands widened by 30 px.
EGO_LEFT_BOTTOM = (120.0, 260.0)
EGO_RIGHT_BOTTOM = (790.0, 920.0)


def read_clip(indices: range) -> list[np.ndarray]:
    """Return the given frames of solidWhiteRight.mp4, RGB."""
    shared_path('data', 'videos', 'solidWhiteRight.mp4')
    capture = cv2.VideoCapture(str(CLIP))
    frames = []
    for index in range(indices.stop):
        ok, frame = capture.read()
        if not ok:
            break
        if index in indices:
            frames.append(cv2.cvtColor(frame, cv2.COLOR_BGR2RGB))
    assert len(frames) == len(indices), f'could not decode frames {indices} of {CLIP}'
    return frames


def clip_frames(shared: Path, count: int) -> list:
    """Return the first `count` frames of the highway clip, BGR."""
    capture = cv2.VideoCapture(str(shared_path('data', 'videos', 'solidWhiteRight.mp4')))
    frames = []
    while len(frames) < count:
        ok, bgr = capture.read()
        assert ok
        frames.append(bgr)
    capture.release()
    return frames


def clip_bag(shared: Path, directory: Path, frames: int | None,
             camera_info: Path | None = None) -> Path:
    """
    Return a bag of the clip's first `frames` frames (all if None) in `directory`.

    With `camera_info`, the bag carries that CameraInfo too.
    """
    bag = directory / f'clip_{frames or "all"}'
    make_bag(shared_path('data', 'videos', 'solidWhiteRight.mp4'), bag, max_frames=frames,
             camera_info=camera_info)
    return bag


def has_ego_lanes(lanes: np.ndarray, sides: np.ndarray, image_height: int) -> bool:
    """
    Check for an ego-left (-1) and an ego-right (+1) lane.

    Both must meet the image bottom in the expected bands.
    """
    by_side = dict(zip(sides.tolist(), lanes))
    if -1 not in by_side or 1 not in by_side:
        return False
    left, right = by_side[-1], by_side[1]
    # A lane's first point is the one nearest the image bottom.
    return (abs(left[0, 1] - image_height) < 0.5 and abs(right[0, 1] - image_height) < 0.5
            and EGO_LEFT_BOTTOM[0] <= float(left[0, 0]) <= EGO_LEFT_BOTTOM[1]
            and EGO_RIGHT_BOTTOM[0] <= float(right[0, 0]) <= EGO_RIGHT_BOTTOM[1])
