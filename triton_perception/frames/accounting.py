"""
Per-frame fate and latency: every received frame ends as exactly one outcome.

Feeds /diagnostics and replay reports. The identity `received == published + dropped +
rejected + failed + pending` holds at every moment, where pending frames are waiting in the
slot or in flight. Frames that never reached the node (gaps in the publishers' sequence numbers,
or the middleware's message-lost events) are counted apart, as `lost_before_node`: for a
publisher that sent N frames, `N == received + lost_before_node`.
"""
from __future__ import annotations

import collections
from dataclasses import dataclass, field
import enum
import threading
import time

import numpy as np
from numpy.typing import NDArray

from triton_perception.errors import TritonPerceptionError


class FrameRejected(TritonPerceptionError, ValueError):
    """The frame itself is unusable (encoding, size, corrupt data); `reason` is a short code."""

    def __init__(self, reason: str, message: str) -> None:
        """Keep `reason`, the short code counted per reason, beside the human-readable `message`."""
        super().__init__(message)
        self.reason = reason


class Fate(enum.Enum):
    """The one outcome each received frame ends with; the values are the /diagnostics count keys."""

    PUBLISHED = 'published'
    DROPPED = 'dropped'      # replaced by a newer frame, or Triton was not ready
    REJECTED = 'rejected'    # the input itself was unusable (encoding, size, corrupt data)
    FAILED = 'failed'        # inference or publishing failed (timeout, server error)


LOST_BEFORE_NODE = 'lost before the node'
# A published frame's time in the node, in three stages (summed over published frames): the
# frame callback until the request is sent, the request until Triton's answer arrives, and the
# answer until every result is published.
STAGES = ('to_request', 'request', 'to_publish')
# Frames in and no result out for this long (or the camera's period, when slower) is a fault
# whatever the workers report: a node that says OK must be publishing.
STALL_S = 1.0


@dataclass(frozen=True)
class RequestTimes:
    """When a frame's request was sent and its answer arrived (time.monotonic())."""

    sent_at: float
    answered_at: float


@dataclass
class AccountingSnapshot:
    """
    A consistent copy of a node's frame counts, rates and latencies at one moment.

    `counts` holds one entry per Fate value, `reasons` the per-reason counts ('fate: reason'),
    `latency_ms` the p50/p95/max receive-to-publish latency in ms of the recent published frames
    (empty before the first), and the rates are frames per second over the last `rate_window_s`.
    """

    received: int
    pending: int
    counts: dict[str, int]
    reasons: dict[str, int]
    latency_ms: dict[str, float]
    input_rate_hz: float
    output_rate_hz: float
    last_error: str
    lost_before_node: int = 0
    # Per stage of STAGES: ms summed over the `timed` published frames.
    stage_ms_sums: dict[str, float] = field(default_factory=dict)
    timed: int = 0
    # How long the oldest frame received since the last published one has waited (0.0: none
    # waits), and the camera's period from its last two frames (0.0 before the second).
    unanswered_s: float = 0.0
    camera_period_s: float = 0.0

    def stalled(self, least_s: float = STALL_S) -> bool:
        """
        Whether frames arrive and nothing is published.

        That is, the oldest frame received since the last published one has waited longer than
        `least_s`, or than the camera's own period when that is longer.
        """
        return self.unanswered_s > max(least_s, self.camera_period_s)

    @property
    def balanced(self) -> bool:
        """Whether every received frame is settled or still pending (the accounting identity)."""
        return self.received == self.pending + sum(self.counts.values())


@dataclass
class FrameAccounting:
    """Thread-safe counters; the ROS callback and inference workers both report here."""

    latency_window: int = 1000
    rate_window_s: float = 5.0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _received: int = 0
    _counts: collections.Counter[str] = field(default_factory=collections.Counter)
    _reasons: collections.Counter[str] = field(default_factory=collections.Counter)
    _latencies_ms: collections.deque[float] = field(init=False)
    _received_times: collections.deque[float] = field(default_factory=collections.deque)
    _published_times: collections.deque[float] = field(default_factory=collections.deque)
    _last_error: str = ''
    _lost_before_node: int = 0
    _stage_ms_sums: dict[str, float] = field(default_factory=lambda: dict.fromkeys(STAGES, 0.0))
    _timed: int = 0
    _unanswered_since: float | None = None
    _last_received_at: float | None = None
    _camera_period_s: float = 0.0

    def __post_init__(self) -> None:
        """Create the latency window, which keeps the last `latency_window` latencies."""
        self._latencies_ms = collections.deque(maxlen=self.latency_window)

    def received(self) -> float:
        """Count a frame in; returns its receive time for the latency of its fate."""
        now = time.monotonic()
        with self._lock:
            self._received += 1
            self._received_times.append(now)
            if self._last_received_at is not None:
                self._camera_period_s = now - self._last_received_at
            self._last_received_at = now
            if self._unanswered_since is None:
                self._unanswered_since = now
        return now

    def settle(self, fate: Fate, received_at: float, reason: str = '',
               request: RequestTimes | None = None, detail: str = '') -> None:
        """
        Count a frame's fate; a published frame's `request` times add to the stage sums.

        `reason` is a short key from a bounded set (it names a /diagnostics count); `detail`, the
        words of the fault, becomes `last_error` in its place.
        """
        now = time.monotonic()
        with self._lock:
            self._counts[fate.value] += 1
            if reason:
                self._reasons[f'{fate.value}: {reason}'] += 1
            if fate is Fate.PUBLISHED:
                self._latencies_ms.append((now - received_at) * 1000.0)
                self._published_times.append(now)
                self._unanswered_since = None
                if request is not None:
                    for stage, start, end in zip(STAGES, (received_at, request.sent_at,
                                                          request.answered_at),
                                                 (request.sent_at, request.answered_at, now)):
                        self._stage_ms_sums[stage] += (end - start) * 1000.0
                    self._timed += 1
            elif fate in (Fate.FAILED, Fate.REJECTED) and (reason or detail):
                self._last_error = detail or reason

    def lost_before_node(self, count: int, reason: str) -> int:
        """
        Count frames that never reached the callback (not part of `received`).

        Returns the total so far.
        """
        with self._lock:
            if count > 0:
                self._lost_before_node += count
                self._reasons[f'{LOST_BEFORE_NODE}: {reason}'] += count
            return self._lost_before_node

    def stalled(self, least_s: float = STALL_S) -> bool:
        """Return AccountingSnapshot.stalled now, without building a whole snapshot."""
        with self._lock:
            waited = (0.0 if self._unanswered_since is None
                      else time.monotonic() - self._unanswered_since)
            return waited > max(least_s, self._camera_period_s)

    def count(self, fate: Fate) -> int:
        """Return how many frames have ended with `fate` so far."""
        with self._lock:
            return self._counts[fate.value]

    def note_error(self, message: str) -> None:
        """Record `message` as the last error /diagnostics shows, without counting a frame."""
        with self._lock:
            self._last_error = message

    def snapshot(self) -> AccountingSnapshot:
        """
        Return the counts, rates and latencies now, all read under one lock.

        Drops receive and publish times older than `rate_window_s` first, so the rates are frames
        per second over that window.
        """
        now = time.monotonic()
        with self._lock:
            for times in (self._received_times, self._published_times):
                while times and now - times[0] > self.rate_window_s:
                    times.popleft()
            latencies = np.array(self._latencies_ms, dtype=np.float64)
            counts = {fate.value: self._counts[fate.value] for fate in Fate}
            return AccountingSnapshot(
                received=self._received,
                pending=self._received - sum(counts.values()),
                counts=counts,
                reasons=dict(self._reasons),
                latency_ms=latency_summary(latencies),
                input_rate_hz=len(self._received_times) / self.rate_window_s,
                output_rate_hz=len(self._published_times) / self.rate_window_s,
                last_error=self._last_error,
                lost_before_node=self._lost_before_node,
                stage_ms_sums=dict(self._stage_ms_sums), timed=self._timed,
                unanswered_s=(0.0 if self._unanswered_since is None
                              else now - self._unanswered_since),
                camera_period_s=self._camera_period_s)


def latency_summary(latencies_ms: NDArray[np.float64]) -> dict[str, float]:
    """Return p50, p95 and max of the latencies (ms), or {} when there are none."""
    if latencies_ms.size == 0:
        return {}
    return {'p50': float(np.percentile(latencies_ms, 50)),
            'p95': float(np.percentile(latencies_ms, 95)),
            'max': float(latencies_ms.max())}
