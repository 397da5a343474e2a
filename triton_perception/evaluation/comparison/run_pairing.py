"""
Two runs' outputs paired frame by frame, without labels: how far the new run agrees with the old.

Pure functions over what two replays published (evaluation/metrics/replay_outputs.py), keyed by
the input frames' header stamps. Each figure is an agreement per frame in [0, 1], 1 where the runs
published the same:

- `detection`: boxes matched one to one across runs, class-agnostic, at IoU >= 0.5 (the
  tracker's IoU and gated optimal assignment); a matched pair of another class is a class
  change. Agreement is the F1 of the new run against the old counting only same-class matches,
  2 x same / (old + new), 1.0 on a frame where neither run found a box;
- `identity`: tracked boxes matched as above; the old and new track ids are paired once over the
  drive (the assignment IDF1 makes: most frames together), and a frame's agreement is the share
  of its tracked boxes whose pair follows it. Over the drive IDF1 itself comes from
  py-motmetrics, with the old run as truth, and its fragmentations both ways;
- `lanes`: the new run's lanes against the old by CULane's protocol (the lane scoring's width,
  IoU > 0.5, one-to-one matching), F1 per frame; matched lanes whose side changed are counted;
- `ego_lane`: 1 when both runs found the ego lane (a left and a right line) or neither did;
- `drivable_area`: IoU of the two masks where both runs recorded one (1.0 when both are empty).

A frame is paired only when both runs published it; the others are listed, never paired.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Mapping, Sequence

import numpy as np
from numpy.typing import NDArray
from scipy.optimize import linear_sum_assignment

from triton_perception.scoring import culane_lane_width, culane_pairs, f1_of, score_tracks
from triton_perception.tracking import iou_matrix, match

MATCH_IOU = 0.5
FIGURES = ('detection', 'identity', 'lanes', 'ego_lane', 'drivable_area')
EGO_SIDES = {-1, 1}
Boxes = NDArray[np.float64]
Lanes = Sequence[NDArray[np.float64]]


@dataclass(frozen=True)
class RunOutputs:
    """One run's outputs per frame: detection rows, track rows, lanes, sides and packed masks."""

    detections: Mapping[int, Boxes]
    tracks: Mapping[int, Boxes]
    lanes: Mapping[int, Lanes]
    lane_sides: Mapping[int, Sequence[int]]
    masks: Mapping[int, NDArray[np.bool_]] = field(default_factory=dict)


@dataclass
class Pairing:
    """
    Two runs paired: each figure's per-frame agreement and the counts behind them.

    `per_frame` maps a figure to {stamp: agreement}; `counts` the boxes, matches, changes and
    lanes; `per_class` each class's boxes in one run only and class changes from and to it
    (class ids); `tracking` IDF1 and fragmentations; `unpaired` the stamps published by one run
    only, per output ('detections_old_only', ...).
    """

    per_frame: dict[str, dict[int, float]] = field(default_factory=dict)
    counts: Counter[str] = field(default_factory=Counter)
    per_class: dict[int, Counter[str]] = field(default_factory=dict)
    iou_sum: float = 0.0
    tracking: dict[str, float] = field(default_factory=dict)
    unpaired: dict[str, list[int]] = field(default_factory=dict)

    def mean_iou(self) -> float:
        """Return the mean IoU of the boxes matched across runs (1.0 without any)."""
        matched = self.counts['boxes_matched']
        return self.iou_sum / matched if matched else 1.0


def paired_stamps(old: Mapping[int, object], new: Mapping[int, object],
                  what: str, pairing: Pairing) -> list[int]:
    """Return the stamps both runs published, in order; note the others in `pairing.unpaired`."""
    pairing.unpaired[f'{what}_old_only'] = sorted(set(old) - set(new))
    pairing.unpaired[f'{what}_new_only'] = sorted(set(new) - set(old))
    return sorted(set(old) & set(new))


def pair_boxes(old: Boxes, new: Boxes) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
    """Return the one-to-one pairs (old row, new row) at IoU >= MATCH_IOU and their IoUs."""
    similarity = iou_matrix(old[:, :4], new[:, :4])
    pairs, _old_free, _new_free = match(similarity, MATCH_IOU)
    return pairs, similarity[pairs[:, 0], pairs[:, 1]]


def pair_detections(old: Mapping[int, Boxes], new: Mapping[int, Boxes],
                    pairing: Pairing) -> None:
    """Add the detection agreement per frame, and the box and class counts, to `pairing`."""
    agreement = pairing.per_frame.setdefault('detection', {})
    for stamp in paired_stamps(old, new, 'detections', pairing):
        before, after = old[stamp], new[stamp]
        pairs, ious = pair_boxes(before, after)
        old_class, new_class = before[pairs[:, 0], 5], after[pairs[:, 1], 5]
        same = int(np.count_nonzero(old_class == new_class))
        agreement[stamp] = f1_of(same, len(after) - same, len(before) - same)
        pairing.counts.update(boxes_old=len(before), boxes_new=len(after),
                              boxes_matched=len(pairs), class_changes=len(pairs) - same,
                              boxes_old_only=len(before) - len(pairs),
                              boxes_new_only=len(after) - len(pairs))
        pairing.iou_sum += float(ious.sum())
        for column, rows, key in ((5, before, 'old_only'), (5, after, 'new_only')):
            taken = pairs[:, 0] if key == 'old_only' else pairs[:, 1]
            free = np.ones(len(rows), dtype=bool)
            free[taken] = False
            for class_id in rows[free, column].astype(int).tolist():
                pairing.per_class.setdefault(class_id, Counter())[key] += 1
        for was, now in zip(old_class.astype(int).tolist(), new_class.astype(int).tolist()):
            if was != now:
                pairing.per_class.setdefault(was, Counter())['changed_from'] += 1
                pairing.per_class.setdefault(now, Counter())['changed_to'] += 1


def pair_tracks(old: Mapping[int, Boxes], new: Mapping[int, Boxes], pairing: Pairing) -> None:
    """Add the identity agreement per frame and IDF1 of the new tracks against the old."""
    stamps = paired_stamps(old, new, 'tracks', pairing)
    frame_pairs = {}
    together: Counter[tuple[int, int]] = Counter()
    for stamp in stamps:
        pairs, _ious = pair_boxes(old[stamp], new[stamp])
        ids = [(int(old[stamp][row, 6]), int(new[stamp][column, 6])) for row, column in pairs]
        frame_pairs[stamp] = ids
        together.update(ids)
    old_ids = sorted({pair[0] for pair in together})
    new_ids = sorted({pair[1] for pair in together})
    frames_together = np.zeros((len(old_ids), len(new_ids)))
    for (was, now), frames in together.items():
        frames_together[old_ids.index(was), new_ids.index(now)] = frames
    rows, columns = linear_sum_assignment(frames_together, maximize=True)
    assigned = {(old_ids[row], new_ids[column]) for row, column in zip(rows, columns)
                if frames_together[row, column] > 0}
    agreement = pairing.per_frame.setdefault('identity', {})
    for stamp in stamps:
        kept = sum(1 for pair in frame_pairs[stamp] if pair in assigned)
        tracked = len(old[stamp]) + len(new[stamp])
        agreement[stamp] = 2.0 * kept / tracked if tracked else 1.0
    if not any(len(old[stamp]) + len(new[stamp]) for stamp in stamps):
        return
    truth = {stamp: old[stamp][:, [0, 1, 2, 3, 5, 6]] for stamp in stamps}
    forward = score_tracks(truth, {stamp: new[stamp] for stamp in stamps})
    backward = score_tracks({stamp: new[stamp][:, [0, 1, 2, 3, 5, 6]] for stamp in stamps},
                            {stamp: old[stamp] for stamp in stamps})
    pairing.tracking = {'IDF1': forward['IDF1'], 'id_switches': forward['id_switches'],
                        # The new run breaks an old track: a fragmentation added; the old run
                        # broke a track the new one keeps whole: one removed.
                        'fragmentations_added': forward['fragmentations'],
                        'fragmentations_removed': backward['fragmentations']}


def pair_lanes(old: RunOutputs, new: RunOutputs, frame_size: tuple[int, int],
               pairing: Pairing) -> None:
    """Add lane F1 of the new run against the old, ego-lane agreement and side changes."""
    width = culane_lane_width(frame_size[0])
    lanes = pairing.per_frame.setdefault('lanes', {})
    ego = pairing.per_frame.setdefault('ego_lane', {})
    for stamp in paired_stamps(old.lanes, new.lanes, 'lanes', pairing):
        before, after = old.lanes[stamp], new.lanes[stamp]
        pairs = culane_pairs(before, after, frame_size, width)
        lanes[stamp] = f1_of(len(pairs), len(after) - len(pairs), len(before) - len(pairs))
        sides_before, sides_after = old.lane_sides[stamp], new.lane_sides[stamp]
        changed = sum(1 for row, column in pairs if sides_before[row] != sides_after[column])
        ego_before = EGO_SIDES <= set(sides_before)
        ego_after = EGO_SIDES <= set(sides_after)
        ego[stamp] = float(ego_before == ego_after)
        pairing.counts.update(lanes_old=len(before), lanes_new=len(after),
                              lanes_matched=len(pairs), sides_changed=changed,
                              ego_lane_old_only=int(ego_before and not ego_after),
                              ego_lane_new_only=int(ego_after and not ego_before))


def pair_masks(old: Mapping[int, NDArray[np.bool_]], new: Mapping[int, NDArray[np.bool_]],
               pairing: Pairing) -> None:
    """Add the drivable-area IoU per frame where both runs recorded a mask."""
    if not old or not new:
        return
    areas = pairing.per_frame.setdefault('drivable_area', {})
    for stamp in paired_stamps(old, new, 'masks', pairing):
        before, after = old[stamp], new[stamp]
        if before.shape != after.shape:
            areas[stamp] = 0.0
            continue
        union = int(np.count_nonzero(before | after))
        areas[stamp] = np.count_nonzero(before & after) / union if union else 1.0


def pair_runs(old: RunOutputs, new: RunOutputs, frame_size: tuple[int, int]) -> Pairing:
    """Pair every output of two runs frame by frame (see the module docstring)."""
    pairing = Pairing()
    pair_detections(old.detections, new.detections, pairing)
    pair_tracks(old.tracks, new.tracks, pairing)
    pair_lanes(old, new, frame_size, pairing)
    pair_masks(old.masks, new.masks, pairing)
    return pairing


def frame_scores(per_frame: Mapping[str, Mapping[int, float]]) -> dict[int, float]:
    """
    Return each paired frame's change score: 1 - its lowest agreement over the figures.

    0 where the runs agree on everything; the frames to look at (and label) first score highest.
    """
    lowest: dict[int, float] = {}
    for values in per_frame.values():
        for stamp, value in values.items():
            lowest[stamp] = min(lowest.get(stamp, 1.0), value)
    return {stamp: round(1.0 - value, 6) for stamp, value in sorted(lowest.items())}


def most_changed(scores: Mapping[int, float], count: int) -> list[int]:
    """Return up to `count` stamps with the highest score above 0, highest first (then by time)."""
    changed = [stamp for stamp, score in scores.items() if score > 0]
    return sorted(changed, key=lambda stamp: (-scores[stamp], stamp))[:count]
