"""
The /diagnostics format of the inference nodes, in one place: the status names and the keys.

The nodes write it (`nodes/base.py`, and `nodes/camera_health.py` a status per camera); `bag
evaluate`, the bench, the soak and the tests read it through `find_status`, `find_camera_status`
and `NodeStatus`, so a renamed key changes here only.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, TYPE_CHECKING, TypedDict

from triton_perception.frames.accounting import STAGES

if TYPE_CHECKING:  # rclpy's, or rosbags' messages of the same fields
    from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus

STATUS_PREFIX = 'triton_perception: '
CAMERA_STATUS_PREFIX = 'triton_perception camera: '
REASON_PREFIX = 'count '
FATES = ('published', 'dropped', 'rejected', 'failed')
COUNTS = ('received', *FATES, 'pending', 'lost_before_node')


class NodeCounts(TypedDict, total=False):
    """A node's frame counts under their /diagnostics names (COUNTS), as reports carry them."""

    received: int
    published: int
    dropped: int
    rejected: int
    failed: int
    pending: int
    lost_before_node: int


def status_name(node_fqn: str) -> str:
    """
    Return the name of a node's status in /diagnostics.

    Tools and tests find its counts by it.
    """
    return f'{STATUS_PREFIX}{node_fqn}'


def camera_status_name(image_topic: str) -> str:
    """Return the name of the health status of the camera on `image_topic` in /diagnostics."""
    return f'{CAMERA_STATUS_PREFIX}{image_topic}'


def stage_key(stage: str) -> str:
    """Return the key of a stage's summed time, e.g. 'stage_request_ms_sum' (accounting.STAGES)."""
    return f'stage_{stage}_ms_sum'


TIMED_KEY = 'stage_timed_frames'


def reason_key(reason: str) -> str:
    """Return the key of a per-reason count, e.g. 'count dropped: triton not ready'."""
    return f'{REASON_PREFIX}{reason}'


@dataclass(frozen=True)
class NodeStatus:
    """One node's (or camera's) status: the raw key/value strings and typed views of them."""

    values: dict[str, str]
    level: int = 0  # DiagnosticStatus.level: 0 OK, 1 WARN, 2 ERROR, 3 STALE
    message: str = ''

    @classmethod
    def from_status(cls, status: DiagnosticStatus) -> 'NodeStatus':
        """Return the NodeStatus of a diagnostic_msgs/DiagnosticStatus."""
        return cls({item.key: item.value for item in status.values},
                   int.from_bytes(status.level, 'little') if isinstance(status.level, bytes)
                   else int(status.level), status.message)

    def count(self, key: str) -> int:
        """Return the integer value of `key`, 0 when the status does not carry it."""
        return int(self.values.get(key, 0))

    @property
    def counts(self) -> dict[str, int]:
        """Received, each fate, pending and lost_before_node, by name (0 for a missing key)."""
        return {key: self.count(key) for key in COUNTS}

    @property
    def reasons(self) -> dict[str, int]:
        """Per-reason counts, keyed 'fate: reason' (the key without its 'count ' prefix)."""
        return {key[len(REASON_PREFIX):]: int(value) for key, value in self.values.items()
                if key.startswith(REASON_PREFIX)}

    @property
    def latency_ms(self) -> dict[str, float]:
        """Receive-to-publish latency in ms: p50, p95 and max, those the node reported."""
        return {key: float(self.values[f'latency_{key}_ms'])
                for key in ('p50', 'p95', 'max') if f'latency_{key}_ms' in self.values}

    @property
    def stage_ms_sums(self) -> dict[str, float]:
        """Ms per stage summed over `timed` published frames; empty from a node without them."""
        return {stage: float(self.values[stage_key(stage)]) for stage in STAGES
                if stage_key(stage) in self.values}

    @property
    def timed(self) -> int:
        """Return the number of published frames whose stage times `stage_ms_sums` sums."""
        return self.count(TIMED_KEY)

    @property
    def triton_ready(self) -> bool:
        """Whether the node's last readiness check found the Triton model ready."""
        return self.values.get('triton_ready') == 'true'

    @property
    def image_publishers(self) -> int:
        """Return the number of publishers matched to the node's image subscription."""
        return self.count('image_publishers')

    @property
    def balanced(self) -> bool:
        """Every frame the node received is settled or pending."""
        return self.count('received') == sum(self.count(key) for key in FATES) + self.count(
            'pending')

    @property
    def seen(self) -> int:
        """Frames the node knows were sent to it: received, plus lost on the way."""
        return self.count('received') + self.count('lost_before_node')


def find_status(arrays: Iterable[DiagnosticArray], node_fqn: str) -> NodeStatus | None:
    """Return the newest status of node `node_fqn` in DiagnosticArray messages, oldest first."""
    return find_named_status(arrays, status_name(node_fqn))


def find_camera_status(arrays: Iterable[DiagnosticArray], image_topic: str) -> NodeStatus | None:
    """Return the newest health status of the camera on `image_topic`, as `find_status`."""
    return find_named_status(arrays, camera_status_name(image_topic))


def find_named_status(arrays: Iterable[DiagnosticArray], name: str) -> NodeStatus | None:
    """Return the newest status called `name` in DiagnosticArray messages, oldest first."""
    for array in reversed(list(arrays)):
        for status in array.status:
            if status.name == name:
                return NodeStatus.from_status(status)
    return None
