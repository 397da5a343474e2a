"""
Every lane layout's outputs -> the one LaneResult lane_node publishes (frame pixels).

Runs in the client (lane_node's worker thread, or any program holding the ensemble's outputs),
since JetPack's Triton cannot run a Python step after the GPU step.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import NDArray

from triton_perception.frames import cropped_top_rows, letterbox_geometry
from triton_perception.graphs import LANE_RUNS_OUTPUTS
from triton_perception.lanes.lane_geometry import drivable_area, LaneResult, postprocess
from triton_perception.lanes.lane_models.proposals import decode_proposals, ProposalSettings
from triton_perception.lanes.lane_models.row_anchors import decode_v1, decode_v2, RowAnchorSettings
from triton_perception.lanes.lane_models.spec import LaneConfigError, LaneModel
from triton_perception.lanes.lane_runs import postprocess_runs
from triton_perception.lanes.lane_sides import assign_sides, bottom_x, ego_eligible


@dataclass(frozen=True, kw_only=True)
class DecodeSettings:
    """lane_node's run-time decode parameters, by keyword: three are thresholds of one type."""

    num_points: int = 20
    min_lane_length: float = 0.1   # fraction of the frame height a lane must span
    score_threshold: float = 0.5   # proposals: lane probability needed
    nms_distance_px: float = 50.0  # proposals: mean |dx| (model-input px) that makes a duplicate
    max_lanes: int = 8             # every layout: lanes kept, best score first


class InputMapping(NamedTuple):
    """
    Where the model input's pixels come from in the frame.

    The served graph's crop and stretch or letterbox, undone:
    frame = offset + (model - pad) * scale, per axis.
    """

    offset: NDArray[np.float64]  # (x, y) frame px
    pad: NDArray[np.float64]     # (x, y) model px
    scale: NDArray[np.float64]   # (x, y) frame px per model px
    content: tuple[int, int, int, int]  # model-input rows/cols holding the frame: y0, y1, x0, x1

    def to_frame(self, points: NDArray[np.float64]) -> NDArray[np.float64]:
        """Return model-input points [..., 2] (x, y, model px) as frame pixels."""
        frame: NDArray[np.float64] = self.offset + (points - self.pad) * self.scale
        return frame


def input_mapping(model: LaneModel, frame_size: tuple[int, int]) -> InputMapping:
    """
    Return how model-input pixels map back to a frame of `frame_size` (height, width) px.

    Undoes what the served graph does to the frame: the top crop (`top_crop`, a fraction of the
    height), then a stretch to the input size or YOLOv5's letterbox (scale, then pad).
    """
    frame_height, frame_width = frame_size
    top = cropped_top_rows(frame_height, model.preprocessing.top_crop)
    height = frame_height - top
    width_in, height_in = model.input_width, model.input_height
    if model.preprocessing.resize == 'stretch':
        resized, pad = (width_in, height_in), (0, 0)
    else:  # YOLOv5's letterbox rules, as the served graph applies them
        resized_width, resized_height, pad_left, pad_top = letterbox_geometry(
            frame_width, height, width_in, height_in)
        resized, pad = (resized_width, resized_height), (pad_left, pad_top)
    return InputMapping(np.array([0.0, top]), np.array(pad, dtype=np.float64),
                        np.array([frame_width / resized[0], height / resized[1]]),
                        (pad[1], pad[1] + resized[1], pad[0], pad[0] + resized[0]))


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


# An installed model's outputs by name: uint8 maps (segmentation) or float32 tensors, by layout.
LaneOutputs = dict[str, NDArray[Any]]


def decode_lanes(model: LaneModel, outputs: LaneOutputs, frame_size: tuple[int, int],
                 settings: DecodeSettings) -> LaneResult:
    """Return the ensemble's outputs (named as model.outputs) -> lanes in frame pixels."""
    mapping = input_mapping(model, frame_size)
    arrays = [outputs[name] for name in model.outputs]
    if model.layout == 'segmentation':
        return best_lanes(_segmentation(model, arrays, mapping, frame_size, settings),
                          settings.max_lanes)
    if model.layout == 'proposals':
        lanes, scores = decode_proposals(
            arrays[0], model.input_width, model.input_height,
            ProposalSettings(confidence=settings.score_threshold,
                             nms_distance=settings.nms_distance_px, top_k=settings.max_lanes,
                             scores=model.decode.get('scores', 'auto')))
    elif model.layout == 'row-anchor' and model.decode['version'] == 1:
        lanes, scores = decode_v1(arrays[0], model.input_width, model.decode['row_anchors'])
    elif model.layout == 'row-anchor':
        lanes, scores = decode_v2(arrays[0], arrays[1], arrays[2], arrays[3],
                                  _v2_settings(model))
        lanes = [_frame_fractions_to_model(points, model, frame_size, mapping)
                 for points in lanes]
    else:
        raise LaneConfigError(f'unknown lane layout {model.layout!r}')
    return finish([mapping.to_frame(points) for points in lanes], scores, frame_size, settings)


def _v2_settings(model: LaneModel) -> RowAnchorSettings:
    return RowAnchorSettings(2, tuple(model.decode['row_anchors']),
                             tuple(model.decode['column_anchors']))


def _frame_fractions_to_model(points: NDArray[np.float64], model: LaneModel,
                              frame_size: tuple[int, int],
                              mapping: InputMapping) -> NDArray[np.float64]:
    """UFLD v2 gives frame fractions; take them to model-input px so one mapping serves all."""
    frame = points * np.array([frame_size[1], frame_size[0]], dtype=np.float64)
    model_pixels: NDArray[np.float64] = (frame - mapping.offset) / mapping.scale + mapping.pad
    return model_pixels


def _segmentation(model: LaneModel, arrays: list[NDArray[Any]], mapping: InputMapping,
                  frame_size: tuple[int, int], settings: DecodeSettings) -> LaneResult:
    """Decode the served segmentation graph's runs, or its compact maps (model resolution)."""
    if model.outputs == LANE_RUNS_OUTPUTS:  # the shipped graph: no crop, a stretch
        return postprocess_runs(arrays[0], arrays[1], arrays[2], model.input_width, frame_size,
                                settings.num_points, settings.min_lane_length)
    probability = arrays[0]
    has_drivable = len(arrays) > 1
    margin = arrays[1] if has_drivable else np.zeros_like(probability)
    if mapping.content == (0, model.input_height, 0, model.input_width) and not mapping.offset[1]:
        result = postprocess(probability, margin, frame_size, settings.num_points,
                             settings.min_lane_length)
        return result if has_drivable else result._replace(drivable_area=None)
    y0, y1, x0, x1 = (int(round(v * probability.shape[0] / model.input_height)) if i < 2 else
                      int(round(v * probability.shape[1] / model.input_width))
                      for i, v in enumerate(mapping.content))
    content_size = (frame_size[0] - int(mapping.offset[1]), frame_size[1])
    result = postprocess(np.ascontiguousarray(probability[y0:y1, x0:x1]),
                         np.ascontiguousarray(margin[y0:y1, x0:x1]), content_size,
                         settings.num_points, settings.min_lane_length)
    lanes = result.lanes + np.array([0.0, mapping.offset[1]], dtype=np.float32)
    area = np.zeros(frame_size, np.uint8)
    area[frame_size[0] - content_size[0]:] = drivable_area(
        np.ascontiguousarray(margin[y0:y1, x0:x1]), *content_size)
    return result._replace(lanes=lanes, drivable_area=area if has_drivable else None)
