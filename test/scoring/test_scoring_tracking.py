"""
Tracking scores of triton_perception.scoring.tracking.

Against hand-worked counts and against py-motmetrics' own MOTChallenge path (text files read by
motmetrics.io, compared by motmetrics.utils.compare_to_groundtruth).
"""
from __future__ import annotations

from pathlib import Path

import motmetrics
import numpy as np
import pytest

from triton_perception.scoring.labels import read_mot
from triton_perception.scoring.tracking import score_tracks


def box(x: float, y: float, track: int, size: float = 10.0) -> list[float]:
    """Return a labelled box of `size` px at (`x`, `y`) for object `track`."""
    return [x, y, x + size, y + size, 1.0, float(track)]


def output(x: float, y: float, track: int, size: float = 10.0) -> list[float]:
    """Return a published box of `size` px at (`x`, `y`) with track id `track`."""
    return [x, y, x + size, y + size, 0.9, 0.0, float(track)]


def test_hand_worked_sequence() -> None:
    """Two objects over 4 frames: one id switch, one miss, one false positive, one frame lost."""
    labels = {frame: np.array([box(0, 0, 1), box(100, 0, 2)]) for frame in range(1, 5)}
    predictions = {
        1: np.array([output(0, 0, 7), output(100, 0, 8)]),
        2: np.array([output(1, 0, 7), output(100, 0, 9), output(300, 300, 5)]),  # 2: 8 -> 9
        3: np.array([output(0, 0, 7)]),  # object 2 missed
        # frame 4: no output at all, both missed
    }
    scores = score_tracks(labels, predictions)
    assert scores['misses'] == 3 and scores['false_positives'] == 1
    assert scores['id_switches'] == 1
    assert scores['MOTA'] == pytest.approx(1 - (3 + 1 + 1) / 8)
    # Matched IoUs: 1, 1, 90/110 (a 1 px shift of a 10 px box), 1, 1.
    assert scores['MOTP'] == pytest.approx((4 + 90 / 110) / 5)
    # IDF1: object 1 <-> track 7 for 3 frames, object 2 <-> track 8 or 9 for 1 frame:
    # IDTP 4 of 8 labelled and 6 published boxes.
    assert scores['IDF1'] == pytest.approx(2 * 4 / (8 + 6))
    assert scores['frames'] == 4 and scores['frames_without_output'] == 1
    # Object 1 is tracked in frames 1-3, then lost: no fragmentation (it is not picked up
    # again); object 2: tracked, tracked, lost, lost: none either.
    assert scores['fragmentations'] == 0


def test_fragmentation_is_a_track_picked_up_again() -> None:
    """An object lost for a frame and picked up again by its track counts one fragmentation."""
    labels = {frame: np.array([box(0, 0, 1)]) for frame in range(1, 5)}
    predictions = {1: np.array([output(0, 0, 3)]), 2: np.zeros((0, 7)),
                   3: np.array([output(0, 0, 3)]), 4: np.array([output(0, 0, 3)])}
    scores = score_tracks(labels, predictions)
    assert scores['fragmentations'] == 1 and scores['misses'] == 1
    assert scores['id_switches'] == 0


def test_matching_needs_iou_at_least_one_half() -> None:
    """A box matches its label at IoU 1/2 exactly, and not just below it."""
    labels = {1: np.array([box(0, 0, 1)]), 2: np.array([box(0, 0, 1)])}
    # IoU 1/2 exactly (a 10 x 10 box against 10 x 20 over it) and just below it.
    predictions = {1: np.array([[0, 0, 10, 20, 0.9, 0, 4]], dtype=float),
                   2: np.array([[0, 0, 10, 20.5, 0.9, 0, 4]], dtype=float)}
    scores = score_tracks(labels, predictions)
    assert scores['matches'] == 1 and scores['misses'] == 1 and scores['false_positives'] == 1


def write_mot(path: Path, rows: list[tuple[int, int, float, float, float, float]]) -> Path:
    """Write `rows` as a MOTChallenge text file at `path`; return `path`."""
    path.write_text(''.join(f'{frame},{track},{left:.3f},{top:.3f},{width:.3f},{height:.3f},'
                            '1,1,1\n' for frame, track, left, top, width, height in rows))
    return path


def generated_sequence(seed: int) -> tuple[list, list]:
    """Objects crossing the frame; the tracker misses some, swaps ids and adds false boxes."""
    generator = np.random.default_rng(seed)
    truth, published = [], []
    objects = 8
    start = generator.uniform(0, 500, size=(objects, 2))
    velocity = generator.uniform(-6, 6, size=(objects, 2))
    size = generator.uniform(20, 80, size=(objects, 2))
    alive = [(int(a), int(a) + int(generator.integers(20, 60)))
             for a in generator.integers(1, 40, size=objects)]
    track_of = list(range(100, 100 + objects))
    next_track = 200
    for frame in range(1, 81):
        for index in range(objects):
            first, last = alive[index]
            if not first <= frame <= last:
                continue
            left, top = start[index] + velocity[index] * frame
            truth.append((frame, index + 1, left, top, *size[index]))
            if generator.random() < 0.12:
                continue  # missed
            if generator.random() < 0.03:
                track_of[index] = next_track  # the tracker starts a new id
                next_track += 1
            jitter = generator.normal(0, 2, size=2)
            published.append((frame, track_of[index], left + jitter[0], top + jitter[1],
                              *size[index]))
        for _ in range(int(generator.integers(0, 3))):
            left, top = generator.uniform(0, 600, size=2)
            published.append((frame, next_track, left, top, 40.0, 40.0))
            next_track += 1
    return truth, published


@pytest.mark.parametrize('seed', [0, 1, 2, 3])
def test_equals_motmetrics_own_motchallenge_path(tmp_path: Path, seed: int) -> None:
    """MOTA, MOTP, IDF1 and the counts equal py-motmetrics' from the same MOT text files."""
    truth, published = generated_sequence(seed)
    # Only the labelled span of frames is scored (the labels' first to last frame), and the
    # boxes are compared as the text files hold them.
    first, last = min(row[0] for row in truth), max(row[0] for row in truth)
    published = [tuple(round(value, 3) for value in row) for row in published
                 if first <= row[0] <= last]
    gt_file = write_mot(tmp_path / 'gt.txt', truth)
    hyp_file = write_mot(tmp_path / 'hyp.txt', published)

    labels = read_mot(gt_file)
    predictions: dict[int, list] = {}
    for frame, track, left, top, width, height in published:
        predictions.setdefault(frame, []).append(
            [left, top, left + width, top + height, 0.9, 0, track])
    ours = score_tracks(labels, {frame: np.array(rows) for frame, rows in predictions.items()})

    reference_accumulator = motmetrics.utils.compare_to_groundtruth(
        motmetrics.io.loadtxt(str(gt_file), fmt='mot15-2D'),
        motmetrics.io.loadtxt(str(hyp_file), fmt='mot15-2D'), 'iou', distth=0.5)
    reference = motmetrics.metrics.create().compute(
        reference_accumulator, metrics=['mota', 'motp', 'idf1', 'num_switches',
                                        'num_fragmentations', 'num_misses',
                                        'num_false_positives'], return_dataframe=False)
    assert ours['id_switches'] > 0 and ours['misses'] > 0 and ours['false_positives'] > 0
    assert ours['MOTA'] == pytest.approx(reference['mota'], abs=1e-9)
    assert ours['MOTP'] == pytest.approx(1.0 - reference['motp'], abs=1e-6)
    assert ours['IDF1'] == pytest.approx(reference['idf1'], abs=1e-9)
    assert ours['id_switches'] == reference['num_switches']
    assert ours['fragmentations'] == reference['num_fragmentations']
    assert ours['misses'] == reference['num_misses']
    assert ours['false_positives'] == reference['num_false_positives']
