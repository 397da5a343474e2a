"""
ByteTrack in the image, with time in seconds taken from header stamps.

ByteTrack (Zhang et al., ECCV 2022, MIT licence) associates in three stages:
1. confirmed tracks with the high-score detections, by IoU against the Kalman prediction
   (here less a small penalty per second a track has gone unseen);
2. the confirmed tracks matched on the previous frame and still free, with the low-score
   detections (an occluded or blurred object scores low; matching it keeps the track alive
   without letting low scores start tracks);
3. unconfirmed tracks with the high-score detections left; an unconfirmed track not matched
   here is dropped, since most one-frame tracks are false positives.
High-score detections still free start new tracks.

Unlike the reference implementation, which counts frames, every duration here is in seconds of
header stamps: the prediction step is the stamp difference, a lost track is dropped once it has
not been matched for `lifetime_s`, and a track is confirmed once its detections span
`confirmation_s`. A camera at another frame rate, frames dropped by the node's latest-frame slot
or a paused bag (whose stamps stop too) therefore neither break tracks nor shorten their life.
"""
from __future__ import annotations

from dataclasses import dataclass, field, fields
import itertools
from typing import Iterator

import numpy as np
from numpy.typing import NDArray

from triton_perception.tracking.association import iou_matrix, match
import triton_perception.tracking.kalman as kalman

# Confirmation compares spans of float stamps.
STAMP_TOLERANCE_S = 1e-6


@dataclass(frozen=True, kw_only=True)
class TrackerSettings:
    """
    ByteTrack's thresholds, with durations in seconds.

    ByteTrack's score thresholds (0.5 high, 0.6 to start a track) suit YOLOX-X on MOT17; the
    nano YOLOv5 this package serves scores cars a person sees clearly at 0.4-0.6 (the demo
    clip), so those two are lower here. The IoU gates are ByteTrack's.
    """

    high_score: float = 0.4
    low_score: float = 0.1
    new_track_score: float = 0.45
    iou_gate: float = 0.2
    low_iou_gate: float = 0.5
    unconfirmed_iou_gate: float = 0.3
    lifetime_s: float = 1.0
    confirmation_s: float = 0.05
    # Noise in units of the box height (or width, for the width): the measurement noise is
    # ByteTrack's 1/20; the acceleration lets a box's image velocity change by about one box
    # height per second each second (a car changing lanes at 20 m).
    position_noise: float = 0.05
    velocity_noise: float = 1.0
    acceleration_noise: float = 1.0
    # IoU taken off per second a track has gone unmatched: where two people cross, the one
    # hidden behind the other has a prediction as good as the visible one's by IoU alone, and
    # must not take its box (measured on test_tracking's crossing scene over 40 noise draws:
    # swaps in 3 instead of 6).
    unseen_penalty_per_s: float = 0.2


@dataclass(frozen=True)
class TrackedBoxes:
    """One frame's result, row by row with the detections handed to `Tracker.update`."""

    ids: list[str]
    confirmed: NDArray[np.bool_]  # [N]; False where ids[i] is ''
    # [N, 2] image velocity of the box centre (px/s); NaN without track
    velocities: NDArray[np.float64]

    def published_ids(self, include_unconfirmed: bool) -> list[str]:
        """Return the ids to publish: unconfirmed tracks' ids only when asked for."""
        return [track_id if (confirmed or include_unconfirmed) else ''
                for track_id, confirmed in zip(self.ids, self.confirmed.tolist())]


@dataclass
class _Tracks:
    """Every live track as parallel arrays, so that a frame is a few batched numpy calls."""

    mean: NDArray[np.float64] = field(default_factory=lambda: np.zeros((0, 8)))
    covariance: NDArray[np.float64] = field(default_factory=lambda: np.zeros((0, 8, 8)))
    ids: NDArray[np.object_] = field(default_factory=lambda: np.zeros(0, dtype=object))
    first_stamp: NDArray[np.float64] = field(default_factory=lambda: np.zeros(0))
    last_stamp: NDArray[np.float64] = field(default_factory=lambda: np.zeros(0))
    confirmed: NDArray[np.bool_] = field(default_factory=lambda: np.zeros(0, dtype=bool))
    matched_last_frame: NDArray[np.bool_] = field(default_factory=lambda: np.zeros(0, dtype=bool))

    def keep(self, selected: NDArray[np.bool_]) -> None:
        """Drop every track not selected (bool mask)."""
        for name in _TRACK_COLUMNS:
            setattr(self, name, getattr(self, name)[selected])

    def extend(self, other: '_Tracks') -> None:
        """Append new tracks."""
        for name in _TRACK_COLUMNS:
            setattr(self, name, np.concatenate([getattr(self, name), getattr(other, name)]))


_TRACK_COLUMNS = tuple(column.name for column in fields(_Tracks))
# Per state axis (cx, cy, w, h), the box dimension (w = 2, h = 3) its noise scales with.
_SCALE_AXES = np.array([3, 3, 2, 3])


def boxes_to_state(boxes: NDArray[np.float64]) -> NDArray[np.float64]:
    """(x1, y1, x2, y2) [N, >=4] -> (centre x, centre y, width, height) [N, 4]."""
    first, second = boxes[:, 0:2], boxes[:, 2:4]
    return np.concatenate([(first + second) / 2, second - first], axis=1)


def state_to_boxes(state: NDArray[np.float64]) -> NDArray[np.float64]:
    """(centre x, centre y, width, height) [N, >=4] -> (x1, y1, x2, y2) [N, 4]."""
    centre, half_size = state[:, 0:2], state[:, 2:4] / 2
    return np.concatenate([centre - half_size, centre + half_size], axis=1)


def _size_scale(state: NDArray[np.float64]) -> NDArray[np.float64]:
    """Per axis (cx, cy, w, h) the box dimension its noise scales with: h, h, w, h (>= 1 px)."""
    return np.maximum(state[:, _SCALE_AXES], 1.0)


def _object_array(items: list[str]) -> NDArray[np.object_]:
    """Make a 1-D object array (np.array would make a fixed-width string array)."""
    array = np.empty(len(items), dtype=object)
    array[:] = items
    return array


class Tracker:
    """One camera's tracks; `update` once per processed frame, in stamp order."""

    def __init__(self, settings: TrackerSettings = TrackerSettings(),
                 id_source: Iterator[int] | None = None) -> None:
        """Start with no tracks; new track ids are taken from `id_source` (1, 2, ... by default)."""
        self.settings = settings
        self._ids = id_source if id_source is not None else itertools.count(1)
        self._tracks = _Tracks()
        self._stamp: float | None = None

    @property
    def track_count(self) -> int:
        """Live tracks, lost ones included."""
        return len(self._tracks.ids)

    def reset(self) -> None:
        """Forget every track (time went backwards: a bag looped or a camera restarted)."""
        self._tracks = _Tracks()
        self._stamp = None

    def update(self, stamp: float, detections: NDArray[np.float32 | np.float64]) -> TrackedBoxes:
        """
        Associate one frame's DETECTIONS [N, 6] (x1, y1, x2, y2, score, class) at `stamp` (s).

        A stamp earlier than the previous one resets the tracker; the same stamp again is a
        zero time step.
        """
        if self._stamp is not None and stamp < self._stamp:
            self.reset()
        dt = 0.0 if self._stamp is None else stamp - self._stamp
        self._stamp = stamp
        tracks, settings = self._tracks, self.settings
        alive = stamp - tracks.last_stamp <= settings.lifetime_s + STAMP_TOLERANCE_S
        if not alive.all():
            tracks.keep(alive)
        if len(tracks.ids):
            tracks.mean, tracks.covariance = kalman.predict(
                tracks.mean, tracks.covariance, dt,
                settings.acceleration_noise * _size_scale(tracks.mean))

        detections = np.asarray(detections, dtype=np.float64).reshape(-1, 6)
        scores = detections[:, 4]
        high = np.flatnonzero(scores >= settings.high_score)
        low = np.flatnonzero((scores >= settings.low_score) & (scores < settings.high_score))
        track_of_detection = np.full(len(detections), -1, dtype=np.int64)
        # Every stage's similarities are a block of this one matrix.
        similarity = iou_matrix(state_to_boxes(tracks.mean), detections)
        similarity -= (settings.unseen_penalty_per_s * (stamp - tracks.last_stamp))[:, None]

        def associate(track_index: NDArray[np.intp], detection_index: NDArray[np.intp],
                      gate: float) -> tuple[NDArray[np.intp], NDArray[np.intp]]:
            if len(track_index) == 0 or len(detection_index) == 0:
                return track_index, detection_index
            pairs, free_tracks, free_detections = match(
                similarity[track_index][:, detection_index], gate)
            track_of_detection[detection_index[pairs[:, 1]]] = track_index[pairs[:, 0]]
            return track_index[free_tracks], detection_index[free_detections]

        free_confirmed, free_high = associate(np.flatnonzero(tracks.confirmed), high,
                                              settings.iou_gate)
        associate(free_confirmed[tracks.matched_last_frame[free_confirmed]], low,
                  settings.low_iou_gate)
        failed_unconfirmed, free_high = associate(np.flatnonzero(~tracks.confirmed), free_high,
                                                  settings.unconfirmed_iou_gate)

        self._correct(track_of_detection, detections, stamp)
        starting = free_high[scores[free_high] >= settings.new_track_score]
        if len(starting):
            track_of_detection[starting] = np.arange(len(starting)) + len(tracks.ids)
            tracks.extend(self._new_tracks(detections[starting], stamp))
        if len(failed_unconfirmed):
            # Renumber rows after dropping the failed unconfirmed tracks (never matched here).
            alive = np.ones(len(tracks.ids), dtype=bool)
            alive[failed_unconfirmed] = False
            new_row = np.cumsum(alive) - 1
            tracks.keep(alive)
            has_track = track_of_detection >= 0
            track_of_detection[has_track] = new_row[track_of_detection[has_track]]
        return self._result(track_of_detection)

    def _correct(self, track_of_detection: NDArray[np.int64], detections: NDArray[np.float64],
                 stamp: float) -> None:
        tracks = self._tracks
        matched = np.flatnonzero(track_of_detection >= 0)
        rows = track_of_detection[matched]
        tracks.matched_last_frame = np.zeros(len(tracks.ids), dtype=bool)
        if len(rows) == 0:
            return
        measured = boxes_to_state(detections[matched])
        # Image axes never couple: a diagonal noise keeps them four filters of their own.
        noise = (self.settings.position_noise * _size_scale(measured)) ** 2
        tracks.mean[rows], tracks.covariance[rows] = kalman.update_uncoupled(
            tracks.mean[rows], tracks.covariance[rows], measured, noise)
        tracks.last_stamp[rows] = stamp
        tracks.matched_last_frame[rows] = True
        span = stamp - tracks.first_stamp[rows]
        tracks.confirmed[rows] |= span >= self.settings.confirmation_s - STAMP_TOLERANCE_S

    def _new_tracks(self, detections: NDArray[np.float64], stamp: float) -> _Tracks:
        count = len(detections)
        state = boxes_to_state(detections)
        scale = _size_scale(state)
        mean, covariance = kalman.initial_state(
            state, 2 * self.settings.position_noise * scale,
            self.settings.velocity_noise * scale)
        return _Tracks(
            mean=mean, covariance=covariance,
            ids=_object_array([str(next(self._ids)) for _ in range(count)]),
            first_stamp=np.full(count, stamp), last_stamp=np.full(count, stamp),
            confirmed=np.full(count, self.settings.confirmation_s <= 0.0),
            matched_last_frame=np.ones(count, dtype=bool))

    def _result(self, rows: NDArray[np.int64]) -> TrackedBoxes:
        tracks = self._tracks
        has_track = rows >= 0
        matched = rows[has_track]
        confirmed = np.zeros(len(rows), dtype=bool)
        confirmed[has_track] = tracks.confirmed[matched]
        velocities = np.full((len(rows), 2), np.nan)
        velocities[has_track] = tracks.mean[matched, 4:6]
        return TrackedBoxes(
            ids=[str(tracks.ids[row]) if row >= 0 else '' for row in rows.tolist()],
            confirmed=confirmed, velocities=velocities)
