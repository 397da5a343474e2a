"""
overlay_node's /diagnostics: the overlays it published and what it could not draw, by reason.

The overlay draws whatever arrives on its topics, from this package's nodes or any other
publisher. A frame or result it cannot read is counted here instead of raising on the executor,
where an exception would end the process (with every camera of a perception_process).
"""
from __future__ import annotations

import collections
import threading

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from rclpy.node import Node
from std_msgs.msg import Header

from triton_perception.frames import reason_key, status_name
from triton_perception.qos import DIAGNOSTICS_QOS


class OverlayCounts:
    """Overlays published, and frames not drawn by fate ('rejected', 'failed') and reason."""

    def __init__(self) -> None:
        """Start from zero; the counts are taken from the subscription and timer callbacks."""
        self._lock = threading.Lock()
        self.published = 0
        self._not_drawn: collections.Counter[str] = collections.Counter()
        self._reported = 0  # frames not drawn at the last report

    def count_published(self) -> None:
        """Count one overlay published."""
        with self._lock:
            self.published += 1

    def count_not_drawn(self, fate: str, reason: str) -> None:
        """Count one frame not drawn: `fate` 'rejected' (its input) or 'failed' (a bug here)."""
        with self._lock:
            self._not_drawn[f'{fate}: {reason}'] += 1

    def report(self) -> tuple[bytes, str, dict[str, str]]:
        """Return the level, summary and values of a report; WARN when frames went undrawn."""
        with self._lock:
            total = sum(self._not_drawn.values())
            new, self._reported = total - self._reported, total
            values = {'overlays_published': str(self.published),
                      **{fate: str(sum(count for key, count in self._not_drawn.items()
                                       if key.startswith(f'{fate}: ')))
                         for fate in ('rejected', 'failed')},
                      **{reason_key(key): str(count)
                         for key, count in sorted(self._not_drawn.items())}}
        if new:
            return DiagnosticStatus.WARN, f'{new} frames not drawn since the last report', values
        return DiagnosticStatus.OK, 'ok', values


class OverlayDiagnostics:
    """The /diagnostics publisher and timer of overlay_node, reporting its OverlayCounts."""

    def __init__(self, node: Node, period_s: float) -> None:
        """Report on `node` every `period_s`."""
        self.counts = OverlayCounts()
        self._node = node
        self._publisher = node.create_publisher(DiagnosticArray, '/diagnostics', DIAGNOSTICS_QOS)
        node.create_timer(period_s, self.publish)

    def publish(self) -> None:
        """Publish the overlay's status now."""
        level, summary, values = self.counts.report()
        status = DiagnosticStatus(level=level,
                                  name=status_name(self._node.get_fully_qualified_name()),
                                  message=summary,
                                  values=[KeyValue(key=key, value=value)
                                          for key, value in values.items()])
        self._publisher.publish(DiagnosticArray(
            header=Header(stamp=self._node.get_clock().now().to_msg()), status=[status]))
