"""Triton wrapper of lane_geometry.py: da, ll, IMAGE_SIZE -> LANES, LANE_SCORES, LANE_SIDES, DRIVABLE_AREA.

The minimum lane length defaults to the config parameter; the optional input MIN_LANE_LENGTH
(fraction of image height) overrides it for one request.
"""
import json
import os
import sys

# The python backend imports this file as module `1.model`; put its own directory first on the
# path so the sibling processing module is found by name, ahead of any installed namesake.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import triton_python_backend_utils as pb_utils  # noqa: E402

from lane_geometry import postprocess  # noqa: E402


class TritonPythonModel:
    """Lane instances, sides and drivable area for each request."""

    def initialize(self, args: dict) -> None:
        parameters = json.loads(args['model_config']).get('parameters', {})
        self.num_points = int(parameters['num_points']['string_value'])
        self.min_lane_length = float(parameters['min_lane_length']['string_value'])

    def execute(self, requests: list) -> list:
        responses = []
        for request in requests:
            override = pb_utils.get_input_tensor_by_name(request, 'MIN_LANE_LENGTH')
            min_lane_length = (self.min_lane_length if override is None
                               else float(override.as_numpy().reshape(-1)[0]))
            try:
                result = postprocess(
                    pb_utils.get_input_tensor_by_name(request, 'da').as_numpy(),
                    pb_utils.get_input_tensor_by_name(request, 'll').as_numpy(),
                    pb_utils.get_input_tensor_by_name(request, 'IMAGE_SIZE').as_numpy(),
                    self.num_points, min_lane_length)
            except ValueError as error:
                responses.append(pb_utils.InferenceResponse(
                    error=pb_utils.TritonError(str(error), pb_utils.TritonError.INVALID_ARG)))
                continue
            responses.append(pb_utils.InferenceResponse(output_tensors=[
                pb_utils.Tensor('LANES', result.lanes),
                pb_utils.Tensor('LANE_SCORES', result.scores),
                pb_utils.Tensor('LANE_SIDES', result.sides),
                pb_utils.Tensor('DRIVABLE_AREA', result.drivable_area),
            ]))
        return responses
