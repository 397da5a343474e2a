"""
Triton wrapper of preprocessing.py: IMAGE (uint8 HxWx3 RGB) -> model input + side info.

Shared by yolov5_preprocess and lane_preprocess (whose 1/ links to these files). The config
names the function (parameter `preprocess`, "module:function"); the function returns the
config's outputs in order. Config parameters `arg_NAME` are keyword arguments of the function
(defaults); an optional input NAME in a request overrides `arg_name` for that request.
"""
import importlib
import json
import os
import sys

# The python backend imports this file as module `1.model`; put its own directory first on the
# path so the sibling processing module is found by name, ahead of any installed namesake.
# Not resolving symlinks on purpose: the module is looked up in the serving model's directory.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import triton_python_backend_utils as pb_utils  # noqa: E402


class TritonPythonModel:
    """Preprocess each frame to the model input size given in the config parameters."""

    def initialize(self, args: dict) -> None:
        config = json.loads(args['model_config'])
        parameters = {key: value['string_value']
                      for key, value in config.get('parameters', {}).items()}
        module_name, _, function_name = parameters['preprocess'].partition(':')
        self.preprocess = getattr(importlib.import_module(module_name), function_name)
        self.width = int(parameters['input_width'])
        self.height = int(parameters['input_height'])
        self.output_names = [tensor['name'] for tensor in config['output']]
        self.defaults = {key[len('arg_'):]: value for key, value in parameters.items()
                         if key.startswith('arg_')}
        self.overrides = [tensor['name'] for tensor in config['input'] if tensor['name'] != 'IMAGE']

    def execute(self, requests: list) -> list:
        responses = []
        for request in requests:
            image = pb_utils.get_input_tensor_by_name(request, 'IMAGE').as_numpy()
            arguments = dict(self.defaults)
            for name in self.overrides:
                tensor = pb_utils.get_input_tensor_by_name(request, name)
                if tensor is not None:
                    arguments[name.lower()] = tensor.as_numpy()
            try:
                outputs = self.preprocess(image, self.width, self.height, **arguments)
            except ValueError as error:
                responses.append(pb_utils.InferenceResponse(
                    error=pb_utils.TritonError(str(error), pb_utils.TritonError.INVALID_ARG)))
                continue
            responses.append(pb_utils.InferenceResponse(output_tensors=[
                pb_utils.Tensor(name, value) for name, value in zip(self.output_names, outputs)]))
        return responses
