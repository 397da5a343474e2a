"""Triton wrapper of detection_postprocess.py: output0 + LETTERBOX -> DETECTIONS [N, 6].

Thresholds default to the config parameters; the optional inputs SCORE_THRESHOLD,
IOU_THRESHOLD and MAX_DETECTIONS override them for one request.
"""
import json
import os
import sys

# The python backend imports this file as module `1.model`; put its own directory first on the
# path so the sibling processing module is found by name, ahead of any installed namesake.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import triton_python_backend_utils as pb_utils  # noqa: E402

from detection_postprocess import postprocess  # noqa: E402


def optional_scalar(request, name: str, default):
    """The value of an optional [1] input as the default's type, or the default if it was left out."""
    tensor = pb_utils.get_input_tensor_by_name(request, name)
    return default if tensor is None else type(default)(tensor.as_numpy().reshape(-1)[0])


class TritonPythonModel:
    """Score threshold, class-aware NMS and letterbox undo for each request."""

    def initialize(self, args: dict) -> None:
        parameters = json.loads(args['model_config']).get('parameters', {})
        self.score_threshold = float(parameters['score_threshold']['string_value'])
        self.iou_threshold = float(parameters['iou_threshold']['string_value'])
        self.max_detections = int(parameters['max_detections']['string_value'])

    def execute(self, requests: list) -> list:
        responses = []
        for request in requests:
            prediction = pb_utils.get_input_tensor_by_name(request, 'output0').as_numpy()
            letterbox = pb_utils.get_input_tensor_by_name(request, 'LETTERBOX').as_numpy()
            try:
                detections = postprocess(
                    prediction, letterbox,
                    optional_scalar(request, 'SCORE_THRESHOLD', self.score_threshold),
                    optional_scalar(request, 'IOU_THRESHOLD', self.iou_threshold),
                    optional_scalar(request, 'MAX_DETECTIONS', self.max_detections))
            except ValueError as error:
                responses.append(pb_utils.InferenceResponse(
                    error=pb_utils.TritonError(str(error), pb_utils.TritonError.INVALID_ARG)))
                continue
            responses.append(pb_utils.InferenceResponse(
                output_tensors=[pb_utils.Tensor('DETECTIONS', detections)]))
        return responses
