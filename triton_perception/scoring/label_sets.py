"""
Labels read from a file, as arrays keyed by frame: boxes, tracks or lanes.

COCO, CULane, TuSimple and CVAT for images frames are keyed by the frame's header stamp in ns,
tracks by their 1-based index in the image topic (`keyed_by`).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

KEYED_BY_STAMP = 'stamp_ns'
KEYED_BY_INDEX = 'index'


@dataclass(frozen=True)
class DetectionLabels:
    """
    Boxes of a COCO instances file or a CVAT for images file.

    `frames` maps each image's stamp (ns) to rows [x1, y1, x2, y2, class_id, iscrowd] in frame
    pixels, class_id being the detector's class index its category name matched. `sizes` holds
    each image's (width, height) where the file gives it.
    """

    source: Path
    frames: dict[int, NDArray[np.float64]]
    class_names: tuple[str, ...]
    sizes: dict[int, tuple[int, int]] = field(default_factory=dict)
    keyed_by: str = KEYED_BY_STAMP


@dataclass(frozen=True)
class TrackLabels:
    """
    Tracks of a MOTChallenge `gt.txt`, a MOT export's folder or a CVAT for video file.

    `frames` maps each labelled 1-based frame index to rows [x1, y1, x2, y2, class, track_id,
    visibility]; a labelled frame with no row has no object. A `gt.txt` is labelled densely:
    every frame from the first to the last labelled one. A labelling task's export labels the
    task's frames in that span (frames the export left out are not keys). Rows whose `conf` is
    0 (MOTChallenge's "ignore this entry") are left out.
    """

    source: Path
    frames: dict[int, NDArray[np.float64]]
    keyed_by: str = KEYED_BY_INDEX


@dataclass(frozen=True)
class LaneLabels:
    """
    Lanes of a CULane directory, a TuSimple file or a CVAT for images file, keyed by stamp (ns).

    `frames` maps each frame to its lanes, each an [N, 2] float array of (x, y) frame pixels.
    For TuSimple (`form` 'tusimple') `h_samples` and `tusimple_x` keep each frame's rows and the
    lanes' x at those rows ([lanes, rows], negative where a lane has no point), which its
    benchmark scores.
    """

    source: Path
    form: str
    frames: dict[int, list[NDArray[np.float64]]]
    h_samples: dict[int, NDArray[np.float64]] = field(default_factory=dict)
    tusimple_x: dict[int, NDArray[np.float64]] = field(default_factory=dict)
    keyed_by: str = KEYED_BY_STAMP


Labels = DetectionLabels | TrackLabels | LaneLabels
