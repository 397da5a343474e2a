"""
Every lane layout's outputs -> the one LaneResult lane_node publishes (frame pixels).

Runs in the client (lane_node's worker thread, or any program holding the ensemble's outputs),
since JetPack's Triton cannot run a Python step after the GPU step. The model's layout decodes
(model.decode, a class of layouts.LAYOUTS); here the served graph's crop and resize are undone.
"""
from __future__ import annotations

import numpy as np

from triton_perception.frames import cropped_top_rows, letterbox_geometry
from triton_perception.lanes.lane_geometry import LaneResult
from triton_perception.lanes.lane_model import (DecodeSettings, InputMapping, LaneModel,
                                                LaneOutputs)


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


def decode_lanes(model: LaneModel, outputs: LaneOutputs, frame_size: tuple[int, int],
                 settings: DecodeSettings) -> LaneResult:
    """
    Return the ensemble's outputs (named as model.outputs) -> lanes in frame pixels.

    An output left out of the request (the drivable area, when nothing uses it) is left out
    here too: the result has no drivable area.
    """
    arrays = [outputs[name] for name in model.outputs if name in outputs]
    return model.decode.decode(arrays, model, input_mapping(model, frame_size), frame_size,
                               settings)
