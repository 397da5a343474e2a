"""
An inference node's /diagnostics status: its state, its frame accounting and where time goes.

Published every `diagnostics_period_s`, whether or not frames arrive, so a stopped camera or a
lost Triton shows, and at once when the node stops or resumes publishing. The level says what
changed since the last report: ERROR while Triton is not ready, or while frames arrive and no
result has been published for a second (or the camera's period, when slower: judged from what
was published, whatever the workers report, naming the last failure); WARN when frames failed,
were rejected or were lost before the node.
"""
from __future__ import annotations

import time
from typing import Callable

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from rclpy.node import Node
from std_msgs.msg import Header

from triton_perception.frames import (AccountingSnapshot, FrameAccounting, reason_key, stage_key,
                                      status_name, TIMED_KEY)
from triton_perception.nodes.executors import hot_path_choice
from triton_perception.nodes.frame_intake import ImageInput
from triton_perception.nodes.overlay_gate import OverlayGate
from triton_perception.parameters import InferenceSettings, LiveSettings
from triton_perception.qos import DIAGNOSTICS_QOS
from triton_perception.serving import FrameWorker

# How often the node looks whether it stopped or resumed publishing: a stall shows within
# STALL_S plus this, whatever `diagnostics_period_s` is.
STALL_CHECK_S = 0.25


class NodeDiagnostics:
    """The /diagnostics publisher and timer of one inference node, and the status it sends."""

    def __init__(self, node: Node, settings: LiveSettings[InferenceSettings],
                 accounting: FrameAccounting,
                 image_input: ImageInput, overlays: OverlayGate,
                 worker: Callable[[], FrameWorker | None],
                 extra: Callable[[], dict[str, str]]) -> None:
        """
        Report on `node` every `diagnostics_period_s` of `settings()`.

        `accounting`, `image_input` and `overlays` give the counts; `worker` returns the node's
        worker (None while inactive) and `extra` the values the node kind adds.
        """
        self._node = node
        self._settings = settings
        self._accounting = accounting
        self._image_input = image_input
        self._overlays = overlays
        self._worker = worker
        self._extra = extra
        self._previous: AccountingSnapshot | None = None
        self._published_at = time.monotonic()
        self._stalled = False
        self._publisher = node.create_publisher(DiagnosticArray, '/diagnostics', DIAGNOSTICS_QOS)
        node.create_timer(min(STALL_CHECK_S, settings().diagnostics_period_s), self._tick)

    def _tick(self) -> None:
        """Publish every `diagnostics_period_s`, and at once when publishing stops or resumes."""
        stalled = self._accounting.stalled()
        due = time.monotonic() - self._published_at >= self._settings().diagnostics_period_s
        if due or stalled != self._stalled:
            self.publish()

    def publish(self) -> None:
        """Publish the node's status now, with what changed since the last report."""
        snapshot = self._accounting.snapshot()
        self._published_at = time.monotonic()
        self._stalled = snapshot.stalled()
        previous, self._previous = self._previous, snapshot
        worker = self._worker()
        level, summary = self._level(snapshot, previous, worker)
        status = DiagnosticStatus(
            level=level, name=status_name(self._node.get_fully_qualified_name()),
            message=summary, hardware_id=self._settings().triton_url,
            values=[KeyValue(key=key, value=str(value))
                    for key, value in self._values(snapshot, worker).items()])
        self._publisher.publish(DiagnosticArray(
            header=Header(stamp=self._node.get_clock().now().to_msg()), status=[status]))

    @staticmethod
    def _level(snapshot: AccountingSnapshot, previous: AccountingSnapshot | None,
               worker: FrameWorker | None) -> tuple[bytes, str]:
        new_failures = snapshot.counts['failed'] - (previous.counts['failed'] if previous else 0)
        new_rejections = snapshot.counts['rejected'] - (
            previous.counts['rejected'] if previous else 0)
        new_losses = snapshot.lost_before_node - (previous.lost_before_node if previous else 0)
        if worker is None:
            return DiagnosticStatus.OK, 'inactive (lifecycle): not subscribed'
        if not worker.ready:
            return DiagnosticStatus.ERROR, f'Triton not ready: {worker.status}'
        if snapshot.stalled():
            return DiagnosticStatus.ERROR, (
                f'frames arrive and nothing was published for {snapshot.unanswered_s:.1f} s; '
                f'last failure: {snapshot.last_error or "none"}')
        if new_failures or new_rejections or new_losses:
            return DiagnosticStatus.WARN, (
                f'{new_failures} failed, {new_rejections} rejected, {new_losses} lost '
                'before the node since the last report')
        figures = worker.figures()
        if figures.get('gate_min_rate_held') == 'no':
            return DiagnosticStatus.WARN, (
                f"the camera's minimum rate is not held: served {figures['gate_served_hz']} Hz, "
                f"{figures['gate_priority']} (camera_priorities)")
        return DiagnosticStatus.OK, 'ok'

    def _values(self, snapshot: AccountingSnapshot,
                worker: FrameWorker | None) -> dict[str, str | int]:
        return {
            'model': self._settings().model_name, 'triton_url': self._settings().triton_url,
            'active': str(worker is not None).lower(),
            'triton_ready': str(worker is not None and worker.ready).lower(),
            # A replayer starts once this is >= 1: a volatile reader misses what a writer sends
            # before the reader has matched it, even when the writer has matched the reader.
            'image_publishers': self._node.count_publishers(self._image_input.topic),
            'received': snapshot.received,
            'lost_before_node': snapshot.lost_before_node,
            'loss_counting': self._image_input.loss_counting,
            'hot_path_executor': hot_path_choice()[0],
            **self._image_input.video_values(),
            **snapshot.counts, 'pending': snapshot.pending,
            'input_rate_hz': f'{snapshot.input_rate_hz:.1f}',
            'output_rate_hz': f'{snapshot.output_rate_hz:.1f}',
            **{f'latency_{key}_ms': f'{value:.1f}' for key, value in snapshot.latency_ms.items()},
            # Where that latency goes, summed over the timed frames (the bench divides deltas).
            **{stage_key(stage): f'{value:.3f}' for stage, value in snapshot.stage_ms_sums.items()},
            TIMED_KEY: snapshot.timed,
            'last_error': snapshot.last_error,
            'overlays_published': self._overlays.published,
            'annotations_published': self._overlays.annotations_published,
            **{reason_key(reason): count for reason, count in sorted(snapshot.reasons.items())},
            **(worker.figures() if worker is not None else {}),
            **self._extra(),
        }
