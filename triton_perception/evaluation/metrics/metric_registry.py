"""
Every replay metric, in the order report.json lists them: the one registration of a metric.

The scoring of a replay, the criteria (`frames:` thresholds), report.md's headlines, the
frame-by-frame comparison of `--expected` and the several-drive sum all ask `registered()`. To
add a metric, write its module (evaluation/metrics/metric.py says what it defines) and add it to
METRICS.
"""
from __future__ import annotations

from triton_perception.evaluation.metrics.detection_metric import DETECTION
from triton_perception.evaluation.metrics.lane_metric import LANES
from triton_perception.evaluation.metrics.metric import Metric
from triton_perception.evaluation.metrics.tracking_metric import TRACKING

METRICS: tuple[Metric, ...] = (DETECTION, TRACKING, LANES)


def registered() -> tuple[Metric, ...]:
    """Return the registered metrics (read when asked, so every reader sees one list)."""
    return METRICS


def frame_figures() -> dict[str, Metric]:
    """Return the metrics with a per-frame figure, by the figure's name."""
    return {metric.frame_figure: metric for metric in registered() if metric.frame_figure}
