"""
The overhead budget of a one-node case, gathered one frame at a time during the latency phase.

Around each frame it reads Triton's statistics, the node's /diagnostics status that counts the
frame and the result's DDS timestamps, and hands them to budget.py's arithmetic; kept apart
from the phases (benchmark.py) because waiting for those counters to settle is its own job.
"""
from __future__ import annotations

from collections import defaultdict
from pathlib import Path
import time
from typing import Sequence

import tritonclient.grpc as grpcclient

from triton_perception.bench.bench_schema import FrameBudgetSummary
from triton_perception.bench.budget import (counted_one_more, frame_budget, node_stages,
                                            summarise, triton_request)
from triton_perception.bench.session import (CaseWiring, ensemble_steps, inference_statistics,
                                             NodeKind, Stamp, STATUS_TIMEOUT_S)


class FrameBudgets:
    """
    The overhead budget of a one-node case, one frame at a time.

    Around each frame: Triton's statistics before and after, the node's /diagnostics status
    that counts the frame (its stage sums), and the result's DDS timestamps.
    """

    def __init__(self, url: str, wiring: CaseWiring, repository: Path,
                 kinds: Sequence[NodeKind]) -> None:
        """Prepare to budget frames of `kinds`' one node; with two nodes this does nothing."""
        self._enabled = len(kinds) == 1
        self._url = url
        self._wiring = wiring
        self._node = kinds[0].executable
        self._ensemble = kinds[0].model
        self._steps = ensemble_steps(repository, self._ensemble)
        self._client = grpcclient.InferenceServerClient(url) if self._enabled else None
        self._statistics: dict[str, dict[str, int]] = {}
        self._last_statistics: dict[str, dict[str, int]] | None = None
        self._status = (wiring.wait_status(self._node, 0, STATUS_TIMEOUT_S) if self._enabled
                        else None)
        self.frames: list[dict[str, float]] = []
        self.e2e_ms: list[float] = []
        self.skipped: dict[str, int] = defaultdict(int)  # reason -> frames

    def _statistics_after(self, earlier: dict[str, dict[str, int]] | None
                          ) -> dict[str, dict[str, int]]:
        """
        Return Triton's statistics once they count one more request than `earlier`.

        Triton updates them as it releases a request, which can follow the response; waiting
        keeps a request's timers from landing in the next frame's window.
        """
        assert self._client is not None
        deadline = time.monotonic() + STATUS_TIMEOUT_S
        while True:
            statistics = inference_statistics(self._url, self._client)
            if earlier is None or counted_one_more(earlier, statistics,
                                                   (self._ensemble, *self._steps)):
                return statistics
            if time.monotonic() > deadline:
                return statistics
            time.sleep(0.002)

    def before_frame(self) -> None:
        """Read Triton's statistics once they count the bench's own request for this frame."""
        if self._client is not None:
            self._statistics = self._statistics_after(self._last_statistics)

    def after_frame(self, stamp: Stamp, latency_ms: float | None, measured: bool) -> None:
        """
        Wait for the node's status and Triton's statistics that count this frame, and budget it.

        Frames with `measured` False (warm-up) only move the baselines on. A frame without a
        result, node stage sums or Triton statistics is counted as skipped, with the reason.
        """
        if self._client is None:
            return
        before = self._status
        published = before.count('published') + 1 if before is not None else 1
        status = self._wiring.wait_status(self._node, published, STATUS_TIMEOUT_S)
        statistics = self._statistics_after(self._statistics)
        self._last_statistics = statistics
        self._status = status or self._wiring.statuses.get(self._node)
        if not measured:
            return
        node = (node_stages(before.stage_ms_sums, before.timed, status.stage_ms_sums,
                            status.timed) if before is not None and status is not None else None)
        triton = triton_request(self._statistics, statistics, self._ensemble, self._steps)
        if latency_ms is None or node is None or triton is None:
            self.skipped['no result' if latency_ms is None else 'node stage sums'
                         if node is None else 'Triton statistics'] += 1
            return
        self.frames.append(frame_budget(latency_ms, node, triton,
                                        self._wiring.tracker.transport_ms(stamp)))
        self.e2e_ms.append(latency_ms)

    def summary(self, reference_median_ms: float | None) -> FrameBudgetSummary | None:
        """
        Return the budget's medians and p90s over the frames, and the skipped frames by reason.

        None for a case of two nodes.
        """
        if not self._enabled:
            return None
        return {**summarise(self.frames, self.e2e_ms, reference_median_ms),
                'skipped_frames': sum(self.skipped.values()),
                'skipped_why': dict(self.skipped), 'ensemble': self._ensemble,
                'steps': list(self._steps)}

    def close(self) -> None:
        """Close the gRPC client."""
        if self._client is not None:
            self._client.close()
