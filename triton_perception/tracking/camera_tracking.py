"""
One camera's tracking per frame: image tracks, then the ground motion of tracked boxes.

detection_node calls `CameraTracking.update` from its request threads with what it already has
(the frame's stamp, DETECTIONS, the ground camera and the vehicle's pose in the fixed frame);
the tests call the same function on synthetic scenes.

With more than one request in flight (`max_in_flight`) a frame can finish after one that
arrived later. `admits` keeps such a frame from the tracks: the tracker and the ground filters
only move forward, and the late frame's stamp, earlier than the last tracked one, would read as
time going back (a looped bag), which starts every track anew. The node publishes it without
track ids and counts it (`late_frames`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

import numpy as np
from numpy.typing import NDArray

from triton_perception.ground import ground_boxes, GroundCamera
from triton_perception.parameters import TrackingSettings
from triton_perception.tracking.ground_motion import (contact_covariance, GroundMotion,
                                                      GroundMotionSettings, GroundTrack, Pose2D)
from triton_perception.tracking.tracker import TrackedBoxes, Tracker, TrackerSettings

# Bottom-edge noise of a box, as a fraction of its height, for the contact point's covariance.
CONTACT_PIXEL_NOISE = 0.05
MIN_CONTACT_PIXEL_NOISE = 1.0


def tracker_settings(settings: TrackingSettings) -> TrackerSettings:
    """Convert the node parameters (parameters.TRACKING) to the tracker's settings."""
    return TrackerSettings(
        high_score=settings.tracking_high_score, low_score=settings.tracking_low_score,
        new_track_score=settings.tracking_new_track_score,
        iou_gate=settings.tracking_iou_gate, low_iou_gate=settings.tracking_low_iou_gate,
        unconfirmed_iou_gate=settings.tracking_unconfirmed_iou_gate,
        lifetime_s=settings.tracking_lifetime_s,
        confirmation_s=settings.tracking_confirmation_s)


def motion_settings(settings: TrackingSettings) -> GroundMotionSettings:
    """Convert the node parameters to the ground filters' settings."""
    return GroundMotionSettings(lifetime_s=settings.tracking_lifetime_s,
                                ego_half_width_m=settings.ego_half_width_m,
                                ego_front_m=settings.ego_front_m)


@dataclass(frozen=True)
class FrameTracks:
    """A frame's tracking result, row by row with its detections."""

    boxes: TrackedBoxes
    ground: list[GroundTrack | None]  # None: no track, or the box does not meet the ground
    # Each box's ground width and height (m), NaN where unknown
    # (ground/ground_projection.ground_boxes).
    widths: NDArray[np.float64]
    heights: NDArray[np.float64]

    def published_ids(self, include_unconfirmed: bool) -> list[str]:
        """Track ids to publish per detection ('' for none)."""
        return self.boxes.published_ids(include_unconfirmed)


class CameraTracking:
    """The tracker and the ground filters of one camera (one image frame_id)."""

    def __init__(self, tracker_settings: TrackerSettings = TrackerSettings(),
                 motion_settings: GroundMotionSettings = GroundMotionSettings(),
                 id_source: Iterator[int] | None = None) -> None:
        """
        Create the camera's tracker and ground filters; `id_source` numbers new tracks.

        Cameras of one node share `id_source`, so track ids stay unique across them.
        """
        self.tracker = Tracker(tracker_settings, id_source)
        self.motion = GroundMotion(motion_settings)
        self.late_frames = 0
        self._last_arrival: float | None = None

    def admits(self, arrival: float) -> bool:
        """
        Say whether a frame that reached the node at `arrival` (monotonic s) may be tracked.

        A frame that arrived before the last one admitted is late: refused and counted. One
        arriving after it is admitted even with an earlier stamp (a looped bag), which the
        tracker takes as time going back. Callers on several threads hold one lock around this
        and the `update` that follows.
        """
        if self._last_arrival is not None and arrival < self._last_arrival:
            self.late_frames += 1
            return False
        self._last_arrival = arrival
        return True

    def update(self, stamp: float, detections: NDArray[np.float32 | np.float64],
               camera: GroundCamera | None = None,
               vehicle: Pose2D | None = None) -> FrameTracks:
        """
        Track DETECTIONS [N, 6] at `stamp` (s) and, with a camera, their ground motion.

        The ground contact of every tracked box is filtered in the fixed frame where `vehicle`
        (target_frame's pose there; None: target_frame itself, so velocities are relative to
        the vehicle) puts it.
        """
        boxes = self.tracker.update(stamp, detections)
        ground: list[GroundTrack | None] = [None] * len(boxes.ids)
        unknown = np.full(len(boxes.ids), np.nan)
        if camera is None:
            return FrameTracks(boxes, ground, unknown, unknown)
        detections = np.asarray(detections, dtype=np.float64).reshape(-1, 6)
        contacts, widths, heights = ground_boxes(camera, detections)
        rows = np.flatnonzero(np.array([bool(track_id) for track_id in boxes.ids], dtype=bool)
                              & np.all(np.isfinite(contacts), axis=1)) if boxes.ids else \
            np.zeros(0, dtype=np.int64)
        pixels = np.stack([(detections[rows, 0] + detections[rows, 2]) / 2,
                           detections[rows, 3]], axis=1)
        box_heights = detections[rows, 3] - detections[rows, 1]
        covariances = contact_covariance(
            camera, pixels, np.maximum(CONTACT_PIXEL_NOISE * box_heights,
                                       MIN_CONTACT_PIXEL_NOISE))
        usable = np.all(np.isfinite(covariances.reshape(len(rows), 4)), axis=1)
        rows = rows[usable]
        tracks = self.motion.update(stamp, [boxes.ids[row] for row in rows.tolist()],
                                    contacts[rows, :2], covariances[usable],
                                    vehicle if vehicle is not None else Pose2D.identity())
        for row, track in zip(rows.tolist(), tracks):
            ground[row] = track
        return FrameTracks(boxes, ground, widths, heights)
