"""
Every node parameter in one table: default, unit, accepted values, whether it can change live.

Nodes declare their parameters from these specs and validate start-up and run-time values
with `validate`, so the messages (naming the parameter and the accepted values), the
defaults in config/params.yaml and the tables of docs/parameters.md all come from one place.
"""
from __future__ import annotations

import math
import os
import re

from triton_perception.parameters.specs import (choice, flag, number, ParameterError,
                                                ParameterSpec, text)
from triton_perception.parameters.transports import (IMAGE_TRANSPORTS, RAW,
                                                     subscription_description, TRANSPORTS,
                                                     VIDEO_TRANSPORTS)


def _is_host_port(value: str) -> bool:
    return re.fullmatch(r'[A-Za-z0-9.\-_\[\]:]+:\d{1,5}', value) is not None


def _overlay_transports() -> str:
    """'raw: draw on image (sensor_msgs/Image); compressed: on image/compressed'."""
    first, *rest = (TRANSPORTS[name] for name in IMAGE_TRANSPORTS)
    return '; '.join([f'{first.name}: draw on {first.topic} ({first.package_type})',
                      *(f'{each.name}: on {each.topic}' for each in rest)])


def _is_file_or_empty(value: str) -> bool:
    return value == '' or os.path.isfile(os.path.expanduser(value))


# One definition for every node that reports to /diagnostics, the overlay among them.
DIAGNOSTICS_PERIOD = number('diagnostics_period_s', 1.0, 'period of /diagnostics messages (s)',
                            low=0.1, high=60.0)

COMMON = (
    flag('autostart', True, 'configure and activate at start-up; false leaves the node '
         'unconfigured for a lifecycle manager (ros2 lifecycle set NODE configure, then '
         'activate)'),
    text('triton_url', '127.0.0.1:8001', 'Triton gRPC endpoint',
         accepted='HOST:PORT, e.g. 127.0.0.1:8001', check=_is_host_port),
    choice('input_transport', RAW.name, subscription_description(), options=tuple(TRANSPORTS)),
    text('video_decoder', '', 'decoder of a video input_transport '
         f"({', '.join(VIDEO_TRANSPORTS)}): empty: FFmpeg's h264 or hevc by the stream's "
         'codec, in the node (software); an FFmpeg '
         "decoder name that PyAV's FFmpeg has (h264, hevc; h264_cuvid on an x86 PC with an "
         'NVIDIA GPU); gst:ELEMENT: a GStreamer element in a gst-launch-1.0 child process, '
         'gst:nvv4l2decoder on a Jetson (its hardware decoder), gst:avdec in software '
         '(docs/orin.md, Video cameras)',
         accepted='empty, an FFmpeg decoder name (letters, digits, _) or gst:ELEMENT',
         check=lambda value: re.fullmatch(r'(gst:)?[A-Za-z0-9_]*', value) is not None),
    choice('qos_reliability', 'best_effort', 'reliability of the image subscription; '
           'best_effort matches every camera driver and bag player, reliable only reliable '
           'publishers', options=('best_effort', 'reliable')),
    number('qos_depth', 10, 'history depth of the image subscription (frames); the '
           'callback only moves a frame into the latest-frame slot, so a deeper reader adds no '
           'latency, and a frame arriving while the executor is late waits instead of being '
           'overwritten unseen', low=1, high=100),
    choice('transport', 'auto', 'how frames reach Triton and large fixed-size outputs (the lane '
           'maps) come back: shared_memory (system shared memory, no serialisation; server on '
           'this host), grpc (inside the request and response), auto (shared memory for a '
           'loopback triton_url, with a gRPC fallback)',
           options=('auto', 'grpc', 'shared_memory')),
    number('max_in_flight', 1, 'Triton requests in flight at once for this node (in a '
           "perception_process with several cameras: for the process's batched requests)",
           low=1, high=8),
    number('request_timeout_s', 5.0, 'seconds before a Triton request counts as failed (s)',
           low=0.05, high=120.0),
    number('max_image_pixels', 3840 * 2160, 'frames with more pixels (width x height) are '
           'rejected before decoding', low=1, high=100_000_000),
    DIAGNOSTICS_PERIOD,
    flag('overlay', True, 'publish the annotated image while someone subscribes to it'),
    text('tls_root_certificates', '', 'PEM file of the CA for a TLS gRPC connection to a remote '
         'Triton (empty: plain gRPC)',
         accepted='an existing file path or empty', check=_is_file_or_empty),
    text('tls_private_key', '', 'PEM client key for mutual TLS (empty: none)',
         accepted='an existing file path or empty', check=_is_file_or_empty),
    text('tls_certificate_chain', '', 'PEM client certificate chain for mutual TLS',
         accepted='an existing file path or empty', check=_is_file_or_empty),
)


def _is_camera_pose(value: list[float]) -> bool:
    return len(value) == 6 and all(math.isfinite(item) for item in value) and (
        value[2] > 0.0 or not any(value))


# Ground-plane outputs (docs/topics.md, "Lanes and objects on the ground").
GROUND = (
    flag('ground_outputs', True, 'publish the ground-plane outputs once CameraInfo and the '
         "camera's mounting are known (/diagnostics key ground says why they are off)"),
    text('target_frame', 'base_link', 'frame of the ground outputs, whose plane z = 0 is the '
         'ground (REP 103: x forward, y left, z up)',
         accepted='a frame name', check=lambda value: bool(value.strip())),
    ParameterSpec('camera_pose', [0.0] * 6, 'mounting used when TF has no transform '
                  'target_frame <- image frame_id: [x, y, z, roll, pitch, yaw] (m, rad) of the '
                  "camera's body frame (x forward, y left, z up) in target_frame, positive pitch "
                  'looking down; all zeros: unset', 'six finite numbers with z > 0, or all zero',
                  lambda value: isinstance(value, list) and _is_camera_pose(value), dynamic=True),
    number('max_ground_range_m', 100.0, 'ground points farther than this from the '
           'camera are dropped (m)', low=1.0, high=1000.0, dynamic=True),
)

# Object tracking in detection_node (docs/tracking.md). Durations are seconds of header stamps.
TRACKING = (
    flag('tracking', True, 'track objects: Detection2D.id and Detection3D.id carry the track id, '
         'detections/tracks (autoware_perception_msgs/TrackedObjects) and detections/tracks/'
         'markers are published; false leaves ids empty'),
    number('tracking_high_score', 0.4, 'detections at or above this score are matched '
           'first (ByteTrack first stage); lower ones down to tracking_low_score only keep '
           'tracks alive (second stage). Set score_threshold at or below tracking_low_score so '
           'that the low-score detections reach the tracker', low=0.0, high=1.0),
    number('tracking_low_score', 0.1, 'lowest score a detection may have to keep a '
           'track alive', low=0.0, high=1.0),
    number('tracking_new_track_score', 0.45, 'lowest score of a detection that starts '
           'a new track', low=0.0, high=1.0),
    number('tracking_iou_gate', 0.2, "lowest IoU between a track's predicted box and "
           'a high-score detection for a match', low=0.0, high=1.0),
    number('tracking_low_iou_gate', 0.5, 'lowest IoU for a match with a low-score '
           'detection', low=0.0, high=1.0),
    number('tracking_unconfirmed_iou_gate', 0.3, 'lowest IoU for a match of a track '
           'not yet confirmed', low=0.0, high=1.0),
    number('tracking_lifetime_s', 1.0, 'a track not matched for this long is '
           'dropped, and its id never comes back (s)', low=0.05, high=60.0),
    number('tracking_confirmation_s', 0.05, 'a track is confirmed (its id published) '
           'once its detections span this long; 0 confirms on the first detection (s)',
           low=0.0, high=10.0),
    flag('tracking_publish_unconfirmed', False, 'publish the ids of tracks not yet confirmed '
         '(most short-lived tracks are false positives)'),
    text('odom_frame', 'odom', 'fixed frame of the ground velocities, looked up in TF as '
         "odom_frame <- target_frame at each frame's stamp; without that transform velocities "
         'are relative to the vehicle (target_frame) and /diagnostics says so; empty: always '
         'relative', accepted='a frame name or empty'),
    number('ego_half_width_m', 1.0, 'half width of the ego path straight ahead in '
           'target_frame: objects whose predicted path enters it get a time to collision (m)',
           low=0.1, high=10.0),
    number('ego_front_m', 0.0, "x of the vehicle's front in target_frame: the time "
           'to collision is until an object reaches it (m)', low=-10.0, high=20.0),
)

# The camera health check of both inference nodes (docs/parameters.md, "Camera health"). Holds
# are seconds of arrival time; fractions are of the image's regions or pixels.
HEALTH = (
    flag('camera_health', True, "check the camera's frames (blocked, blurred, dark, glare, "
         'frozen, rate) and publish its status on /diagnostics'),
    number('health_every_n', 1, 'check the image of every Nth frame the node converts; stamps '
           'and rate are checked on every frame', low=1, high=100),
    number('health_raise_hold_s', 0.3, 'a condition must persist this long before the level '
           'rises (a stamp running backwards raises at once) (s)', low=0.0, high=10.0),
    number('health_clear_hold_s', 2.0, 'a condition must be gone this long before the level '
           'falls (s)', low=0.0, high=60.0),
    number('health_blocked_warn', 0.4, 'fraction of the image regions without texture from '
           'which the camera is WARN blocked', low=0.0, high=1.0),
    number('health_blocked_error', 0.65, 'fraction of the image regions without texture from '
           'which the camera is ERROR blocked', low=0.0, high=1.0),
    number('health_blur_warn', 0.5, "sharpness, relative to the camera's running baseline, "
           'under which the camera is WARN blurred', low=0.0, high=1.0),
    number('health_blur_error', 0.25, "sharpness, relative to the camera's running baseline, "
           'under which the camera is ERROR blurred', low=0.0, high=1.0),
    number('health_dark_fraction', 0.85, 'fraction of pixels near black (grey <= 20) from '
           'which the camera is ERROR dark', low=0.0, high=1.0),
    number('health_glare_fraction', 0.35, 'fraction of saturated pixels (grey >= 250) from '
           'which the camera is ERROR glare', low=0.0, high=1.0),
    number('health_frozen_frames', 5, 'identical checked frames in a row with advancing stamps, '
           'or frames in a row with one stamp, that make the camera ERROR frozen', low=2,
           high=1000),
    number('health_rate_fraction', 0.6, "frame rate, relative to the camera's own recent rate, "
           'under which the camera is WARN rate', low=0.0, high=1.0),
    number('health_baseline_s', 20.0, 'time constant of the running baselines of sharpness '
           'and rate, which learn only while their condition is OK (s)', low=1.0, high=3600.0),
)

DETECTION = COMMON + (
    text('model_name', 'yolov5', 'Triton ensemble that takes IMAGE and returns DETECTIONS',
         accepted='a model name served by Triton', check=lambda value: bool(value.strip())),
    number('score_threshold', 0.25, 'minimum objectness x class score',
           low=0.0, high=1.0, dynamic=True),
    number('iou_threshold', 0.45, 'IoU above which NMS suppresses a box of the same '
           'class', low=0.0, high=1.0, dynamic=True),
    number('max_detections', 100, 'most boxes per frame (the served graph returns at '
           'most 300)', low=1, high=300, dynamic=True),
    ParameterSpec('class_filter', '', 'comma-separated class names to keep (empty: all), '
                  'e.g. "person,car,bus"', 'comma-separated names from the labels, or empty',
                  lambda _value: True, dynamic=True),
    text('labels_file', '', 'text file with one class name per line, line n = class id n '
         '(empty: the labels installed with the detector model_name, else the 80 COCO names)',
         accepted='an existing file path or empty', check=_is_file_or_empty),
) + GROUND + TRACKING + HEALTH

LANES = COMMON + (
    text('model_name', 'lane_detection', 'lane ensemble that takes IMAGE: the shipped '
         'lane_detection or a lane model installed with `models install --lanes` (its '
         'lane_model.json in the model repository says its outputs and decoding)',
         accepted='a lane model name served by Triton', check=lambda value: bool(value.strip())),
    number('min_lane_length', 0.1, 'shortest lane kept, as a fraction of the image '
           'height', low=0.0, high=1.0, dynamic=True),
    number('lane_score_threshold', 0.5, 'proposals layout (LaneATT): lane '
           'probability a proposal needs (CULane test setting 0.5, TuSimple 0.2)',
           low=0.0, high=1.0, dynamic=True),
    number('lane_nms_distance_px', 50.0, 'proposals layout: mean horizontal '
           'distance (model-input px) over shared rows under which two lanes are one (CULane '
           '50, TuSimple 45)', low=0.0, high=1000.0, dynamic=True),
    number('max_lanes', 8, 'most lanes per frame, best score first, every layout '
           "(LaneATT's CULane top-k is 4)", low=1, high=32, dynamic=True),
    flag('publish_drivable_area', True, 'publish the drivable-area mask'),
) + GROUND + (
    number('grid_length_m', 40.0, 'drivable_area/grid: forward extent from the '
           'origin of target_frame (m)', low=1.0, high=500.0),
    number('grid_width_m', 20.0, 'drivable_area/grid: extent across, centred on '
           'the x axis of target_frame (m)', low=1.0, high=500.0),
    number('grid_resolution_m', 0.2, 'drivable_area/grid: cell size (m)', low=0.01, high=10.0),
) + HEALTH

OVERLAY = (
    choice('input_transport', RAW.name, _overlay_transports(), options=IMAGE_TRANSPORTS),
    flag('expect_detections', True, 'wait for detections before drawing a frame'),
    flag('expect_lanes', True, 'wait for lanes and drivable_area before drawing a frame'),
    number('cache_size', 30, 'frames kept while waiting for matching results', low=1, high=1000),
    number('max_wait_s', 1.0, 'how long a frame waits for the results of both '
           'nodes before it is drawn with what arrived (s)', low=0.0, high=30.0),
    choice('qos_reliability', 'best_effort', 'reliability of the image subscription',
           options=('best_effort', 'reliable')),
    number('max_image_pixels', 3840 * 2160, 'frames with more pixels (width x height) are ignored',
           low=1, high=100_000_000),
    DIAGNOSTICS_PERIOD,
)


def parse_class_filter(value: str, labels: list[str]) -> frozenset[int] | None:
    """Class ids to keep, or None for all; unknown names are an error naming the valid ones."""
    names = [name.strip() for name in value.split(',') if name.strip()]
    if not names:
        return None
    unknown = [name for name in names if name not in labels]
    if unknown:
        raise ParameterError(f"parameter 'class_filter': unknown class names {unknown}; "
                             f'known: {", ".join(labels)}')
    return frozenset(labels.index(name) for name in names)
