"""
How the sensitivity pass judges a quantized lane graph: the guard's lanes figure, per frame.

The guard of `models quantize` pairs the float and the INT8 runs' lanes as `bag compare` does
(CULane's one-to-one matching of the drawn lanes, F1 per frame). The pass scores each trial
graph the same way on calibration frames, decoding the graph's runs as lane_node does (with
its default lane length), so that what it keeps float is chosen by the figure the guard then
judges; the lane mask's IoU breaks its ties, being finer (a lane lost is a step of F1, a
thinner lane a share of the mask).
"""
from __future__ import annotations

from typing import cast, Sequence

import numpy as np
from numpy.typing import NDArray

from triton_perception.lanes import NUM_POINTS, postprocess_runs
from triton_perception.models.int8_sensitivity import Feed, FrameScore, mask_score, Outputs
from triton_perception.parameters import LANES, specs_by_name
from triton_perception.scoring import culane_lane_width, culane_pairs, f1_of

# lane_graph.py: lane_probability >= 128 exactly where the float head says lane.
LANE_THRESHOLD = 128


def _lanes(outputs: Outputs, frame_size: tuple[int, int]) -> list[NDArray[np.float64]]:
    """Return the lanes lane_node publishes for these outputs, as (x, y) points."""
    min_lane_length = specs_by_name(LANES)['min_lane_length'].default
    assert isinstance(min_lane_length, float)
    result = postprocess_runs(cast(NDArray[np.int32], outputs['lane_runs']),
                              cast(NDArray[np.int32], outputs['lane_run_counts']), None,
                              outputs['lane_probability'].shape[1], frame_size, NUM_POINTS,
                              min_lane_length)
    return [lane[np.isfinite(lane).all(axis=1)].astype(np.float64) for lane in result.lanes]


def lane_score(before: Outputs, after: Outputs, feed: Feed) -> float:
    """Return one frame's lane F1 of the candidate's lanes against the float graph's."""
    height, width = feed['image'].shape[:2]
    old, new = (_lanes(outputs, (height, width)) for outputs in (before, after))
    pairs = culane_pairs(old, new, (width, height), culane_lane_width(width))
    return f1_of(len(pairs), len(new) - len(pairs), len(old) - len(pairs))


def step_scores(step: str) -> Sequence[FrameScore]:
    """Return the scores `--keep-float auto` judges a step by; none: it keeps nothing float."""
    if step == 'lane_model':
        return (lane_score, mask_score('lane_probability', LANE_THRESHOLD))
    return ()
