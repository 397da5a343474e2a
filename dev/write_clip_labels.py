"""
Write the highway clip's eye-read labels in the formats labelling tools export.

test/data/lane_labels.json (ego lines read at three rows) -> CULane `<stamp_ns>.lines.txt`
files, and test/data/clip_track_labels.json (car identities every 4th frame) -> MOTChallenge
`gt.txt`, under test/data/highway_clip/labels/. The stamps are the ones `bag export-frames`
names the clip's frames by, for the bag `bag make` writes from the clip with its defaults.
Run from the checkout: `.venv/bin/python dev/write_clip_labels.py`.
"""
from __future__ import annotations

import json
from pathlib import Path
import sys
import tempfile

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from triton_perception.bag.frame_export import export_frames  # noqa: E402
from triton_perception.bag.make import make_bag  # noqa: E402
from triton_perception.system.paths import DEFAULT_CLIP  # noqa: E402

CLIP = DEFAULT_CLIP
LABELS = REPO / 'test' / 'data' / 'highway_clip' / 'labels'
CAR_IDS = {'A': 1, 'B': 2, 'C': 3, 'D': 4, 'E': 5, 'G': 7}
MOT_CLASS_CAR = 3  # MOTChallenge's class 3 is "car"


def main() -> None:
    """Make the clip's bag, export its frame names, write the two label sets."""
    with tempfile.TemporaryDirectory() as scratch:
        make_bag(CLIP, Path(scratch) / 'bag')
        export_frames(Path(scratch) / 'bag', Path(scratch) / 'frames', image_format='jpg')
        frames = json.loads((Path(scratch) / 'frames' / 'frames.json').read_text())['frames']
    stamps = [frame['stamp_ns'] for frame in frames]
    lanes = json.loads((REPO / 'test' / 'data' / 'lane_labels.json').read_text())
    (LABELS / 'culane').mkdir(parents=True, exist_ok=True)
    for frame in lanes['frames']:
        if frame['source'] != 'clip':
            continue
        lines = []
        for side in ('left', 'right'):
            points = [(x, row) for x, row in zip(frame[side], frame['rows']) if x is not None]
            if len(points) >= 2:
                lines.append(' '.join(f'{x} {row}' for x, row in points))
        (LABELS / 'culane' / f"{stamps[frame['frame']]}.lines.txt").write_text(
            '\n'.join(lines) + '\n')
    tracks = json.loads((REPO / 'test' / 'data' / 'clip_track_labels.json').read_text())
    rows = []
    for index in sorted(tracks, key=int):
        for car in tracks[index]:
            if car.get('duplicate'):
                continue
            x1, y1, x2, y2 = car['box']
            rows.append(f"{int(index) + 1},{CAR_IDS[car['car']]},{x1},{y1},{x2 - x1},{y2 - y1},"
                        f'1,{MOT_CLASS_CAR},1')
    (LABELS / 'gt.txt').write_text('\n'.join(rows) + '\n')


if __name__ == '__main__':
    main()
