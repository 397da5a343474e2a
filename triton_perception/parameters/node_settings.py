"""
Each node's parameters as a frozen dataclass, one field per row of its table (tables.py).

A misspelt name or a value of the wrong type is then a type checker's error instead of a
KeyError at run time. The dataclasses only name and type the rows: defaults, ranges and
descriptions stay in the tables, and test/nodes/test_node_settings.py holds each dataclass's
fields to its table. A live parameter change builds a new instance (`changed`); nothing is
modified in place, so a reader sees the values of one call or of the previous one, never a mix.
"""
from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Mapping, Protocol, TypeVar

from triton_perception.parameters.specs import ParameterSpec, ParameterValues, validate_all

SettingsT = TypeVar('SettingsT', bound='NodeSettings')
SettingsCo = TypeVar('SettingsCo', bound='NodeSettings', covariant=True)


class LiveSettings(Protocol[SettingsCo]):
    """
    A node's settings of the moment, for a collaborator that outlives a parameter change.

    Called for each use rather than kept, so the collaborator reads the values of the latest
    change (a new frozen instance) without being told of it.
    """

    def __call__(self) -> SettingsCo:
        """Return the node's settings now."""


@dataclass(frozen=True, kw_only=True)
class NodeSettings:
    """What every node's settings can do: be built from validated values and changed whole."""

    @classmethod
    def from_values(cls: type[SettingsT], specs: tuple[ParameterSpec, ...],
                    values: Mapping[str, object]) -> SettingsT:
        """
        Validate `values` against `specs` and return them as settings.

        Raises ParameterError naming every bad value, as `validate_all` does.
        """
        return cls(**validate_all(specs, values))

    def changed(self: SettingsT, updates: ParameterValues) -> SettingsT:
        """Return these settings with the validated `updates` (one accepted call) taken in."""
        return replace(self, **updates)

    @classmethod
    def names(cls) -> tuple[str, ...]:
        """Return the parameter names, in field order."""
        return tuple(field.name for field in fields(cls))


@dataclass(frozen=True, kw_only=True)
class HealthSettings(NodeSettings):
    """parameters.HEALTH: the camera health check of both inference nodes."""

    camera_health: bool
    health_every_n: int
    health_raise_hold_s: float
    health_clear_hold_s: float
    health_blocked_warn: float
    health_blocked_error: float
    health_blur_warn: float
    health_blur_error: float
    health_dark_fraction: float
    health_glare_fraction: float
    health_frozen_frames: int
    health_rate_fraction: float
    health_baseline_s: float


@dataclass(frozen=True, kw_only=True)
class InferenceSettings(HealthSettings):
    """parameters.COMMON and HEALTH, plus `model_name`: what detection_node and lane_node take."""

    autostart: bool
    triton_url: str
    input_transport: str
    video_decoder: str
    qos_reliability: str
    qos_depth: int
    transport: str
    max_in_flight: int
    request_timeout_s: float
    max_image_pixels: int
    diagnostics_period_s: float
    overlay: bool
    tls_root_certificates: str
    tls_private_key: str
    tls_certificate_chain: str
    model_name: str


@dataclass(frozen=True, kw_only=True)
class GroundSettings(NodeSettings):
    """parameters.GROUND: the ground-plane outputs of both inference nodes."""

    ground_outputs: bool
    target_frame: str
    camera_pose: list[float]
    max_ground_range_m: float


@dataclass(frozen=True, kw_only=True)
class TrackingSettings(NodeSettings):
    """parameters.TRACKING: object tracking in detection_node."""

    tracking: bool
    tracking_high_score: float
    tracking_low_score: float
    tracking_new_track_score: float
    tracking_iou_gate: float
    tracking_low_iou_gate: float
    tracking_unconfirmed_iou_gate: float
    tracking_lifetime_s: float
    tracking_confirmation_s: float
    tracking_publish_unconfirmed: bool
    odom_frame: str
    ego_half_width_m: float
    ego_front_m: float


@dataclass(frozen=True, kw_only=True)
class DetectionSettings(InferenceSettings, GroundSettings, TrackingSettings):
    """parameters.DETECTION: detection_node's parameters."""

    score_threshold: float
    iou_threshold: float
    max_detections: int
    class_filter: str
    labels_file: str


@dataclass(frozen=True, kw_only=True)
class LaneSettings(InferenceSettings, GroundSettings):
    """parameters.LANES: lane_node's parameters."""

    min_lane_length: float
    lane_score_threshold: float
    lane_nms_distance_px: float
    max_lanes: int
    publish_drivable_area: bool
    grid_length_m: float
    grid_width_m: float
    grid_resolution_m: float


@dataclass(frozen=True, kw_only=True)
class OverlaySettings(NodeSettings):
    """parameters.OVERLAY: overlay_node's parameters."""

    input_transport: str
    expect_detections: bool
    expect_lanes: bool
    cache_size: int
    max_wait_s: float
    qos_reliability: str
    max_image_pixels: int
    diagnostics_period_s: float
