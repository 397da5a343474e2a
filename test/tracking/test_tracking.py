"""
The tracker on synthetic scenes with known truth (test/support/tracking_scenes.py).

Identities scored with py-motmetrics, lifetimes and confirmation in seconds, ground velocity in odom
and the time to collision against their analytic values. Pure: no ROS, no server.
"""
from __future__ import annotations

import math

import motmetrics
import numpy as np
import pytest

from support.tracking_scenes import CAMERA, Ego, Frame, PEDESTRIAN, render, WorldObject
from triton_perception.parameters import TRACKING, TrackingSettings
from triton_perception.tracking.association import iou_matrix, match
from triton_perception.tracking.camera_tracking import (CameraTracking, FrameTracks,
                                                        tracker_settings)
from triton_perception.tracking.ground_motion import Pose2D, time_to_collision
from triton_perception.tracking.tracker import Tracker, TrackerSettings
from triton_perception.tracking.tracking_benchmark import tracking_update_ms

RATE_HZ = 30.0


def stamps(seconds: float, rate: float = RATE_HZ, start: float = 1000.0) -> np.ndarray:
    """Return frame times in seconds, far from zero, as header stamps are."""
    return start + np.arange(int(round(seconds * rate))) / rate


def run(frames: list[Frame], tracking: CameraTracking | None = None,
        odom: bool = True) -> list[FrameTracks]:
    """Return the tracking results of `frames`, with the ego's odometry unless `odom` is False."""
    tracking = tracking or CameraTracking()
    return [tracking.update(frame.stamp, frame.detections, CAMERA,
                            frame.ego if odom else None) for frame in frames]


def mot_scores(frames: list[Frame], results: list[FrameTracks]) -> tuple[dict, list]:
    """
    IDF1, switches and fragmentations of the published (confirmed) ids against the truth.

    And the switch events (object names).
    """
    accumulator = motmetrics.MOTAccumulator(auto_id=True)
    # motmetrics keeps ids in numeric columns: number the names and track ids.
    object_numbers: dict[str, int] = {}
    for frame, result in zip(frames, results):
        names = list(frame.truth)
        truth = np.array([frame.truth[name] for name in names]).reshape(-1, 4)
        published = result.published_ids(include_unconfirmed=False)
        rows = [row for row, track_id in enumerate(published) if track_id]
        hypotheses = frame.detections[rows, :4]
        distances = 1.0 - iou_matrix(truth, hypotheses)
        distances[distances > 0.5] = np.nan
        accumulator.update([object_numbers.setdefault(name, len(object_numbers))
                            for name in names],
                           [int(published[row]) for row in rows], distances)
    summary = motmetrics.metrics.create().compute(
        accumulator, metrics=['idf1', 'num_switches', 'num_fragmentations', 'mota'])
    events = accumulator.events
    names_by_number = {number: name for name, number in object_numbers.items()}
    switched = [names_by_number[number] for number in events[events.Type == 'SWITCH'].OId]
    return {name: float(summary[name].iloc[0]) for name in summary.columns}, switched


def traffic() -> list[WorldObject]:
    """
    Build a scene: ego at 10 m/s among cars, a parked car, and two crossing pedestrians.

    The pedestrians are on the right; the nearer hides the farther for a moment.
    """
    return [
        WorldObject('lead', (30.0, 0.0), (8.0, 0.0)),
        WorldObject('left', (15.0, 3.5), (13.0, 0.0)),
        WorldObject('parked', (55.0, -3.5), (0.0, 0.0)),
        WorldObject('walker_a', (45.0, -9.0), (0.0, 1.5), PEDESTRIAN, 0),
        WorldObject('walker_b', (48.0, -5.0), (0.0, -1.5), PEDESTRIAN, 0),
    ]


def test_noisy_traffic_keeps_identities() -> None:
    """
    Through noise, misses and false positives every object keeps its identity (IDF1 >= 0.9).

    At most one id switch, at the walkers' crossing.
    """
    frames = render(traffic(), Ego(10.0), stamps(5.0), seed=1, pixel_noise=0.03,
                    miss_rate=0.1, false_positives_per_frame=0.3)
    # The scene holds what it claims: the walkers cross (hidden for a while) and are seen after.
    walker_b_seen = ''.join('1' if 'walker_b' in frame.truth else '0' for frame in frames)
    assert '10' in walker_b_seen.strip('0') and '01' in walker_b_seen.strip('0')
    scores, switched = mot_scores(frames, run(frames))
    print(scores)
    assert scores['idf1'] >= 0.9
    # One crossing: at most one id switch, and none elsewhere.
    assert len(switched) <= 1 and set(switched) <= {'walker_a', 'walker_b'}, switched


def test_identities_over_noise_draws() -> None:
    """
    The same scene with 20 other noise draws.

    IDF1 >= 0.9 in each, no switch away from the crossing, and the crossing swaps the walkers (two
    switches) in at most 4 of the 20.

    An IoU tracker cannot always tell apart two people who overlap fully while the visible one
    is missed: over 100 draws (seeds 1000-1099) the walkers swapped in 14, once twice; IDF1
    was 0.874 at worst, 0.936 on average.
    """
    swaps = 0
    for seed in range(100, 120):
        frames = render(traffic(), Ego(10.0), stamps(5.0), seed=seed, pixel_noise=0.03,
                        miss_rate=0.1, false_positives_per_frame=0.3)
        scores, switched = mot_scores(frames, run(frames))
        assert scores['idf1'] >= 0.9, (seed, scores)
        assert set(switched) <= {'walker_a', 'walker_b'} and len(switched) <= 2, (seed, switched)
        swaps += len(switched) > 1
    assert swaps <= 4


def single_car_ids(stamps_s: np.ndarray, hidden: tuple[float, float] | None = None,
                   settings: TrackerSettings = TrackerSettings()) -> list[str]:
    """Return the published ids of one car ahead, undetected inside the `hidden` interval."""
    frames = render([WorldObject('car', (25.0, 3.5), (2.0, 0.0))], Ego(0.0), stamps_s, seed=3)
    tracker = Tracker(settings)
    ids = []
    for frame in frames:
        detections = frame.detections
        if hidden and hidden[0] <= frame.stamp < hidden[1]:
            detections = detections[:0]
        published = tracker.update(frame.stamp, detections).published_ids(False)
        ids.extend(published)
    return [track_id for track_id in ids if track_id]


def test_an_id_survives_a_gap_shorter_than_its_lifetime() -> None:
    """A car undetected for 0.8 s, less than a track's lifetime, keeps its id."""
    times = stamps(4.0)
    ids = single_car_ids(times, hidden=(times[0] + 1.0, times[0] + 1.8))
    assert len(set(ids)) == 1


def test_a_new_id_follows_a_gap_longer_than_its_lifetime() -> None:
    """A car undetected for 1.2 s, longer than a track's lifetime, comes back with a new id."""
    times = stamps(4.0)
    ids = single_car_ids(times, hidden=(times[0] + 1.0, times[0] + 2.2))
    assert len(set(ids)) == 2 and ids[0] != ids[-1]


def test_lifetime_is_in_seconds_not_frames() -> None:
    """The same 0.8 s gap at 5 Hz (4 frames) and at 60 Hz (48 frames) keeps the id."""
    for rate in (5.0, 60.0):
        times = stamps(4.0, rate)
        assert len(set(single_car_ids(times, hidden=(times[0] + 1.0, times[0] + 1.8)))) == 1


def test_variable_frame_rate_and_a_paused_bag_keep_the_id() -> None:
    """Irregular frame intervals keep the id: time comes from the stamps, not the frame count."""
    random = np.random.default_rng(5)
    times = 1000.0 + np.cumsum(random.uniform(0.015, 0.12, 60))
    # A paused bag: the stamps stop with the clock, then go on where they were.
    assert len(set(single_car_ids(times))) == 1


def test_confirmation_takes_its_time_in_seconds() -> None:
    """A track is confirmed confirmation_s after its first frame, at 10 Hz and at 30 Hz alike."""
    settings = TrackerSettings(confirmation_s=0.3)
    for rate in (10.0, 30.0):
        frames = render([WorldObject('car', (25.0, 0.0), (0.0, 0.0))], Ego(0.0),
                        stamps(1.0, rate), seed=2)
        tracker = Tracker(settings)
        first_published = next(frame.stamp for frame in frames
                               if any(tracker.update(frame.stamp, frame.detections)
                                      .published_ids(False)))
        assert first_published - frames[0].stamp == pytest.approx(0.3, abs=1e-6)


def test_time_going_back_starts_again() -> None:
    """A looped bag: stamps jump back; old tracks must not be matched across the jump."""
    frames = render([WorldObject('car', (25.0, 0.0), (0.0, 0.0))], Ego(0.0), stamps(1.0))
    tracker = Tracker(TrackerSettings(confirmation_s=0.0))
    first = [tracker.update(frame.stamp, frame.detections).ids[0] for frame in frames]
    again = [tracker.update(frame.stamp, frame.detections).ids[0] for frame in frames]
    assert len(set(first)) == 1 and len(set(again)) == 1 and first[0] != again[0]


def test_low_score_detections_keep_tracks_but_start_none() -> None:
    """
    Keep a car's id through ByteTrack's second stage when its score drops (occluded, blurred).

    Low-score boxes alone never become tracks.
    """
    frames = render([WorldObject('car', (25.0, 0.0), (1.0, 0.0))], Ego(0.0), stamps(3.0))
    tracker = Tracker()
    ids = []
    for index, frame in enumerate(frames):
        detections = frame.detections.copy()
        if 30 <= index < 60:
            detections[:, 4] = 0.3
        ids.append(tracker.update(frame.stamp, detections).published_ids(False)[0])
    assert all(ids[5:]) and len(set(ids[5:])) == 1
    low_only = Tracker()
    for frame in frames:
        detections = frame.detections.copy()
        detections[:, 4] = 0.3
        assert low_only.update(frame.stamp, detections).ids == ['']


def test_one_frame_false_positives_are_never_confirmed() -> None:
    """A box that appears for one frame at random places is never confirmed, so never published."""
    tracker = Tracker()
    random = np.random.default_rng(0)
    published = []
    for stamp in stamps(3.0):
        x, y = random.uniform(0, 1000, 2)
        published += tracker.update(stamp, np.array([[x, y, x + 50, y + 50, 0.9, 2]]))\
            .published_ids(False)
    assert not any(published)


def test_match_respects_the_gate() -> None:
    """Matching pairs only similarities above the gate and leaves the rest free."""
    similarity = np.array([[0.9, 0.1], [0.15, 0.05]])
    pairs, free_rows, free_columns = match(similarity, 0.2)
    assert pairs.tolist() == [[0, 0]] and free_rows.tolist() == [1]
    assert free_columns.tolist() == [1]


def velocity_at_end(frames: list[Frame]) -> np.ndarray:
    """Return the odom velocity of the only object at the last frame that has it."""
    results = run(frames)
    return next(result.ground[0].velocity for result in reversed(results)
                if result.ground and result.ground[0] is not None)


def test_velocity_does_not_depend_on_the_frame_rate() -> None:
    """
    10 Hz, 30 Hz and 30 Hz with every third frame dropped.

    The same velocity (10 %), and the true one.
    """
    car = [WorldObject('car', (20.0, 3.5), (14.0, 1.0))]
    ego = Ego(10.0)
    at_10 = velocity_at_end(render(car, ego, stamps(4.0, 10.0), seed=4))
    at_30 = render(car, ego, stamps(4.0, 30.0), seed=4)
    velocities = {'10 Hz': at_10, '30 Hz': velocity_at_end(at_30),
                  'dropped': velocity_at_end([frame for index, frame in enumerate(at_30)
                                              if index % 3 != 2])}
    truth = np.array(car[0].velocity)
    for name, velocity in velocities.items():
        assert np.linalg.norm(velocity - truth) <= 0.1 * np.linalg.norm(truth), (name, velocity)
    for velocity in velocities.values():
        assert np.linalg.norm(velocity - at_10) <= 0.1 * np.linalg.norm(at_10)


def test_a_parked_car_stands_still_in_odom_while_the_ego_drives() -> None:
    """
    A parked car stands still in odom while the ego drives.

    In the vehicle frame it approaches at the ego's speed.
    """
    frames = render([WorldObject('parked', (60.0, -3.5), (0.0, 0.0))], Ego(12.0), stamps(3.5),
                    seed=6, pixel_noise=0.02)
    results = run(frames)
    speeds = [float(np.linalg.norm(result.ground[0].velocity)) for result in results[30:]
              if result.ground and result.ground[0] is not None]
    assert len(speeds) > 50 and max(speeds) < 0.5, max(speeds)
    # In the vehicle frame it comes closer at the ego's speed.
    relative = [result.ground[0].relative_velocity for result in results[30:]
                if result.ground and result.ground[0] is not None]
    assert np.mean([velocity[0] for velocity in relative]) == pytest.approx(-12.0, rel=0.1)


def test_without_odom_the_velocity_is_relative_to_the_vehicle() -> None:
    """Without odometry a parked car's velocity is relative to the vehicle: the ego's, negated."""
    frames = render([WorldObject('parked', (60.0, -3.5), (0.0, 0.0))], Ego(12.0), stamps(3.0),
                    seed=6)
    last = run(frames, odom=False)[-1].ground[0]
    assert last.velocity[0] == pytest.approx(-12.0, rel=0.1)


def test_time_to_collision_matches_the_analytic_value() -> None:
    """
    Ego at 15 m/s behind a car at 5 m/s whose rear is 42.75 m ahead of base_link at t = 0.

    TTC(t) = (42.75 - 10 t) / 10.
    """
    lead = WorldObject('lead', (45.0, 0.0), (5.0, 0.0))
    frames = render([lead], Ego(15.0), stamps(3.0), seed=7, pixel_noise=0.01)
    results = run(frames)
    checked = 0
    for frame, result in zip(frames[45:], results[45:]):
        track = result.ground[0]
        elapsed = frame.stamp - frames[0].stamp
        expected = (45.0 - lead.size[0] / 2 - 10.0 * elapsed) / 10.0
        assert track.time_to_collision == pytest.approx(expected, rel=0.1), elapsed
        checked += 1
    assert checked > 30
    # A car in the next lane passes beside the path: no collision.
    beside = render([WorldObject('beside', (45.0, 3.5), (5.0, 0.0))], Ego(15.0), stamps(2.0))
    assert math.isinf(run(beside)[-1].ground[0].time_to_collision)


def test_time_to_collision_cases() -> None:
    """Time to collision for closing, opening, crossing, passing and touching objects."""
    positions = np.array([[20.0, 0.0], [20.0, 0.0], [20.0, 4.0], [20.0, 8.0], [-1.0, 0.5]])
    velocities = np.array([[-10.0, 0.0], [1.0, 0.0], [-10.0, -2.0], [-10.0, 0.0], [0.0, 0.0]])
    # Closing; opening; crossing into the path (at y = 0 after 2 s); passing beside; touching.
    assert time_to_collision(positions, velocities, 1.0).tolist() == [2.0, math.inf, 2.0,
                                                                      math.inf, 0.0]


def test_pose_from_matrix() -> None:
    """A 4x4 transform becomes the 2D pose of its yaw and translation."""
    matrix = np.eye(4)
    matrix[:2, :2] = [[0.0, -1.0], [1.0, 0.0]]
    matrix[:2, 3] = [3.0, 4.0]
    pose = Pose2D.from_matrix(matrix)
    assert pose.yaw == pytest.approx(math.pi / 2) and pose.translation.tolist() == [3.0, 4.0]


def test_the_bench_measures_an_update_with_50_objects() -> None:
    """The figure `triton-perception bench` prints; only its shape is checked here."""
    figures = tracking_update_ms(objects=50, frames=40)
    assert figures['objects'] == 50
    assert figures['image_ms']['median'] > 0 and figures['with_ground_ms']['p95'] > 0


def test_every_detection_keeps_its_row_when_some_miss_the_ground() -> None:
    """
    Keep every row's own ground width and height when a box misses the ground.

    A box whose bottom is above the horizon has no ground track.
    """
    frames = render([WorldObject('car', (25.0, 0.0), (0.0, 0.0))], Ego(0.0), stamps(0.5))
    tracking = CameraTracking(TrackerSettings(confirmation_s=0.0))
    sky = np.array([[600.0, 100.0, 700.0, 150.0, 0.9, 4]])  # an aeroplane
    for frame in frames:
        result = tracking.update(frame.stamp, np.vstack([sky, frame.detections]), CAMERA)
    assert result.ground[0] is None and result.ground[1] is not None
    assert len(result.widths) == len(result.heights) == 2
    assert np.isnan(result.widths[0]) and result.widths[1] == pytest.approx(1.8, rel=0.15)
    assert result.heights[1] == pytest.approx(1.5, rel=0.15)


def test_the_tracker_defaults_are_the_node_parameters_defaults() -> None:
    """
    Both say what an unconfigured tracker does: tests and library users get the node's tracker.

    parameters/ stays free of numpy and scipy (launch files import it), so the defaults are
    written in both places and held equal here.
    """
    from_parameters = tracker_settings(TrackingSettings.from_values(TRACKING, {}))
    assert from_parameters == TrackerSettings()
