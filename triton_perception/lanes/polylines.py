"""
Every layout's polylines, finished alike: long enough, the best few, left to right, with sides.

A layout's decoder gives polylines in frame pixels and their scores; `finish` keeps those long
enough, the best `max_lanes`, resamples each to `num_points` rows and gives the ego sides
(lane_sides.py), so every lane model publishes the same LaneResult.
"""
from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from triton_perception.lanes.lane_geometry import LaneResult
from triton_perception.lanes.lane_model import DecodeSettings
from triton_perception.lanes.lane_sides import assign_sides, bottom_x, ego_eligible


def resample(points: NDArray[np.float64], num_points: int) -> NDArray[np.float64]:
    """num_points along a polyline's rows, from its bottom upward (x interpolated in y)."""
    order = np.argsort(points[:, 1], kind='stable')
    ys, xs = points[order, 1], points[order, 0]
    rows = np.linspace(ys[-1], ys[0], num_points)
    return np.stack([np.interp(rows, ys, xs), rows], axis=1)


def finish(polylines: list[NDArray[np.float64]], scores: NDArray[np.float32],
           frame_size: tuple[int, int], settings: DecodeSettings) -> LaneResult:
    """Frame-pixel polylines -> LaneResult: long enough, best max_lanes, left to right, sides."""
    frame_height, frame_width = frame_size
    keep = [index for index, points in enumerate(polylines) if len(points) > 1 and np.ptp(
        points[:, 1]) >= settings.min_lane_length * frame_height]
    keep = sorted(keep, key=lambda index: -scores[index])[:settings.max_lanes]
    chosen = [polylines[index] for index in keep]
    bottoms = np.array([bottom_x(points, frame_height) for points in chosen])
    eligible = ego_eligible(chosen, bottoms, np.array([p[:, 1].min() for p in chosen]),
                            np.array([p[:, 1].max() for p in chosen]), float(frame_width),
                            float(frame_height))
    sides = assign_sides(bottoms, frame_width / 2, eligible)
    order = np.argsort(bottoms, kind='stable')
    lanes = np.array([resample(chosen[index], settings.num_points) for index in order],
                     dtype=np.float32).reshape(len(order), settings.num_points, 2)
    return LaneResult(lanes=lanes, scores=np.asarray(scores, np.float32)[keep][order]
                      if keep else np.zeros(0, np.float32),
                      sides=sides[order], drivable_area=None)


def best_lanes(result: LaneResult, max_lanes: int) -> LaneResult:
    """Return the max_lanes best-scoring lanes, still left to right with their sides."""
    if len(result.scores) <= max_lanes:
        return result
    keep = np.sort(np.argsort(-result.scores, kind='stable')[:max_lanes])
    return result._replace(lanes=result.lanes[keep], scores=result.scores[keep],
                           sides=result.sides[keep])
