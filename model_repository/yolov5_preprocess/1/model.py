"""Triton wrapper of letterbox.py: IMAGE (uint8 HxWx3 RGB) -> images (model input), LETTERBOX."""
import json
import os
import sys

# The python backend imports this file as module `1.model`; put its own directory first on the
# path so the sibling processing module is found by name, ahead of any installed namesake.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import triton_python_backend_utils as pb_utils  # noqa: E402

from letterbox import letterbox  # noqa: E402


class TritonPythonModel:
    """Letterbox each frame to the model input size given in the config parameters."""

    def initialize(self, args: dict) -> None:
        parameters = json.loads(args['model_config']).get('parameters', {})
        self.width = int(parameters['input_width']['string_value'])
        self.height = int(parameters['input_height']['string_value'])

    def execute(self, requests: list) -> list:
        responses = []
        for request in requests:
            image = pb_utils.get_input_tensor_by_name(request, 'IMAGE').as_numpy()
            try:
                tensor, params = letterbox(image, self.width, self.height)
            except ValueError as error:
                responses.append(pb_utils.InferenceResponse(
                    error=pb_utils.TritonError(str(error), pb_utils.TritonError.INVALID_ARG)))
                continue
            responses.append(pb_utils.InferenceResponse(output_tensors=[
                pb_utils.Tensor('images', tensor), pb_utils.Tensor('LETTERBOX', params)]))
        return responses
