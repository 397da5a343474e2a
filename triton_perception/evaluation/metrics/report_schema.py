"""
The shape of `bag evaluate`'s report.json, and its one writer and one reader.

report.json is a contract with its users' scripts and with later runs (`bag score`,
`--expected`, the several-drive sum read reports written earlier), so it is described here as
TypedDicts, the JSON shape itself, and checked by mypy where it is built and read.
`schema_version` says which shape a file has; a report without one is a version 0 report
(written before the field), which has the same shape and is read as it is.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import cast, TypedDict

from triton_perception.bag import BagError
from triton_perception.evaluation.metrics.camera_health_summary import CameraHealthFigures
from triton_perception.evaluation.metrics.metric import AccuracySection
from triton_perception.frames import NodeCounts

SCHEMA_VERSION = 1
REPORT_JSON = 'report.json'
REPORT_MARKDOWN = 'report.md'  # every report.md is written by write_report_files


class Criteria(TypedDict):
    """A criteria file: floors on report figures (dotted names), per-frame thresholds."""

    floors: dict[str, float]
    frames: dict[str, float]  # a per-frame figure's threshold, and pass_rate


class CriteriaResult(TypedDict):
    """Whether a replay met its criteria, the failing floors, and the failing frames' stamps."""

    passed: bool
    failing: list[str]
    failing_frames: list[int]


class FrameInterval(TypedDict):
    """
    One per-frame figure of two replays compared frame by frame (comparison/expected_frames.py).

    `changed_most` holds [stamp, old, new] of the frames that changed most.
    """

    frames: int
    mean_difference: float
    interval: list[float]
    regressed: bool
    changed_most: list[list[float]]


class _ReplayedBag(TypedDict):
    """The replayed bag and topic, its frames, and how it was replayed (timing, wall time)."""

    bag: str
    topic: str
    frames: int
    rate: float
    timing: str
    replay_s: float
    bag_s: float


class ReplayInput(_ReplayedBag, total=False):
    """
    A replay's input, and the ROS domain of its own the replay ran in.

    Reports written before the replays had a domain of their own have no `ros_domain_id`; it
    is an added field, so the schema_version stays.
    """

    ros_domain_id: int


class ServedModels(TypedDict):
    """The precision the nodes were served at, and the INT8 graphs' calibration (/diagnostics)."""

    precision: str
    calibration: str


class NodeFigures(NodeCounts):
    """One node's frame counts over the replay, and whether every frame is accounted for."""

    frames_in: int
    accounted: bool
    published_fraction: float
    lost_fraction: float
    latency_ms: dict[str, float]  # receive to publish: p50, p95, max, those the node reported
    reasons: dict[str, int]


class DetectionOutputs(TypedDict):
    """What was detected: per class, the share of frames with it and the boxes per frame."""

    frames: int
    frames_with_class: dict[str, float]
    mean_per_frame: dict[str, float]


class LaneOutputs(TypedDict):
    """Lanes per published frame, and the share of frames with both ego lines."""

    frames: int
    mean_lanes_per_frame: float
    ego_lane_rate: float


class Spread(TypedDict):
    """A mean and its standard deviation."""

    mean: float
    std: float


class GroundFigures(TypedDict):
    """The ego lane on the ground: its width and the car's lateral offset, in m."""

    frames: int
    ego_lane_frames: int
    ego_lane_width_m: Spread
    lateral_offset_m: Spread


class TrackLength(TypedDict):
    """How long tracks last, s."""

    median: float
    p90: float


class TrackingOutputs(TypedDict):
    """Tracks, tracks per frame, how long they last and new tracks per second."""

    tracks: int
    mean_tracks_per_frame: float
    track_length_s: TrackLength
    new_tracks_per_s: float


class ChangeFigure(TypedDict):
    """One figure's mean agreement, its 95 % interval, the threshold and whether it is flagged."""

    frames: int
    agreement: float
    interval: list[float]
    threshold: float
    flagged: bool


class RunComparison(TypedDict):
    """Two runs of one drive compared frame by frame (report.json's `comparison.runs`)."""

    old: str
    new: str
    frames: int
    figures: dict[str, ChangeFigure]
    detection: dict[str, float]
    per_class: dict[str, dict[str, int]]
    tracking: dict[str, float]
    lanes: dict[str, int]
    unpaired: dict[str, int]
    flagged: list[str]
    changed_frames: list[list[float]]  # [stamp, score], most changed first
    per_frame: dict[str, dict[str, float]]  # figure -> stamp (as JSON keys) -> agreement


class FleetComparison(TypedDict):
    """Drives of two runs compared: intervals over drives and over all frames, drives ranked."""

    drives: int
    over_drives: dict[str, ChangeFigure]
    over_frames: dict[str, ChangeFigure]
    changed_drives: list[tuple[str, float]]  # (drive, 1 - its lowest mean agreement)
    flagged: list[str]


class ComparedReports(TypedDict):
    """The comparison with an expected report: its path, the regressions, the frame intervals."""

    expected: str
    regressions: list[str]
    intervals: dict[str, FrameInterval]


class Comparison(ComparedReports, total=False):
    """With the expected run's outputs bag beside it: the two runs paired frame by frame."""

    runs: RunComparison


# report.json of one replay (`bag evaluate`, `bag score`). Always there: input, nodes, detection,
# lanes, outputs_bag. With ground truth in the outputs: ground; with track ids: tracking; with a
# camera health status: camera_health. With labels: accuracy (one section per metric),
# per_frame (each metric's per-frame figure, stamps as strings as JSON writes them),
# worst_frames and figures; with criteria: criteria; with an expected report: comparison.
# (The functional form, because `input` is a key of the contract.)
ReplayReport = TypedDict('ReplayReport', {
    'schema_version': int,
    'input': ReplayInput,
    'nodes': dict[str, NodeFigures],
    'served': ServedModels,
    'detection': DetectionOutputs,
    'lanes': LaneOutputs,
    'ground': GroundFigures,
    'tracking': TrackingOutputs,
    'outputs_bag': str,
    'camera_health': CameraHealthFigures,
    'accuracy': dict[str, AccuracySection],
    'per_frame': dict[str, dict[str, float]],
    'worst_frames': dict[str, list[tuple[int, float]]],
    'criteria': CriteriaResult,
    'comparison': Comparison,
    'figures': list[str],
}, total=False)


class DriveEntry(TypedDict, total=False):
    """One drive in a several-drive report: its nodes, accuracy and criteria, or its failure."""

    failed: str
    nodes: dict[str, NodeFigures]
    accuracy: dict[str, AccuracySection]
    criteria: CriteriaResult
    attempts: int
    comparison: RunComparison


class DrivesReport(TypedDict, total=False):
    """report.json of a directory of drives: each drive's entry, and accuracy over all."""

    schema_version: int
    drives: dict[str, DriveEntry]
    accuracy: dict[str, AccuracySection]
    criteria: CriteriaResult
    comparison: FleetComparison


def write_report_json(report: ReplayReport | DrivesReport, path: Path) -> None:
    """Write `report` to `path` as report.json, `schema_version` first."""
    versioned = {'schema_version': SCHEMA_VERSION,
                 **{key: value for key, value in report.items() if key != 'schema_version'}}
    path.write_text(json.dumps(versioned, indent=2), encoding='utf-8')


def write_report_files(output: Path, report: ReplayReport | DrivesReport, markdown: str,
                       json_name: str = REPORT_JSON) -> None:
    """
    Write `report` as JSON (report.json unless named) and `markdown` as report.md into `output`.

    The one writer of report.md: a replay's, several drives' and a comparison's.
    """
    output.mkdir(parents=True, exist_ok=True)
    write_report_json(report, output / json_name)
    (output / REPORT_MARKDOWN).write_text(markdown, encoding='utf-8')


def read_report(path: Path) -> ReplayReport:
    """
    Read the report.json of one replay written by this or an earlier version.

    Raises BagError naming the file when it cannot be read, is not a replay's report, or was
    written by a newer version of the package than this one.
    """
    try:
        document = json.loads(Path(path).read_text(encoding='utf-8'))
    except (OSError, ValueError) as error:
        raise BagError(f'{path}: cannot read the report ({error})') from None
    if not isinstance(document, dict) or not isinstance(document.get('input'), dict) \
            or 'bag' not in document['input'] or 'outputs_bag' not in document:
        raise BagError(f'{path} is no report.json of a `bag evaluate` run (no input.bag or '
                       'outputs_bag)')
    version = document.get('schema_version', 0)
    if not isinstance(version, int) or version > SCHEMA_VERSION:
        raise BagError(f'{path}: report schema_version {version!r}; this triton_perception '
                       f'reads up to {SCHEMA_VERSION}: update triton_perception to read it')
    return cast(ReplayReport, document)
