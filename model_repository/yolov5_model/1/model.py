"""
Triton wrapper of onnx_runner.py: serves `<version dir>/<onnx_file>` with onnxruntime on the CPU.

Model-agnostic: tensor names come from the model config and are checked against the ONNX file,
so yolov5_model and lane_model share this file (lane_model/1/model.py is a symlink to it).
A frame outside the config's min_frame..max_frame is refused as the Orin's TensorRT engine,
built for that range, refuses it, so that both profiles accept the same frames.
"""
import json
import os
import sys

# The python backend imports this file as module `1.model`; put its own directory first on the
# path so the sibling module is found by name. Not resolving symlinks on purpose: the sibling
# is looked up next to the path Triton loaded, which is inside the serving model's directory.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import triton_python_backend_utils as pb_utils  # noqa: E402

from onnx_runner import FRAME_INPUT, frame_range, frame_size_error, OnnxRunner  # noqa: E402


class TritonPythonModel:
    """One onnxruntime session per instance, warmed up before the model reports READY."""

    def initialize(self, args: dict) -> None:
        """
        Load the config's ONNX file into a CPU session, check its tensors, and warm it up.

        The config's parameters give the file (`onnx_file`), onnxruntime's thread counts and
        spinning, and the frame range (min_frame, max_frame).

        Raises TritonModelException if the ONNX file is missing, or lacks a tensor the config names.
        """
        config = json.loads(args['model_config'])
        parameters = {key: value['string_value']
                      for key, value in config.get('parameters', {}).items()}
        path = os.path.join(args['model_repository'], args['model_version'],
                            parameters['onnx_file'])
        if not os.path.isfile(path):
            raise pb_utils.TritonModelException(
                f"{args['model_name']}: ONNX file {path} is missing; install the model weights "
                'first')
        self.runner = OnnxRunner(
            path,
            intra_op_threads=int(parameters['intra_op_threads']),
            inter_op_threads=int(parameters['inter_op_threads']),
            allow_spinning=parameters['allow_spinning'].lower() == 'true',
        )
        self.input_names = [tensor['name'] for tensor in config['input']]
        self.output_names = [tensor['name'] for tensor in config['output']]
        missing = (set(self.input_names) - set(self.runner.input_names)) | (
            set(self.output_names) - set(self.runner.output_names))
        if missing:
            raise pb_utils.TritonModelException(
                f"{args['model_name']}: config tensors {sorted(missing)} are not in {path} "
                f'(inputs {self.runner.input_names}, outputs {self.runner.output_names})')
        # Parsed once; a config without the parameters (a step that takes no frame) has no limit.
        self.frame_sizes = frame_range(parameters.get('min_frame', '1x1'),
                                       parameters.get('max_frame', f'{2 ** 31}x{2 ** 31}'))
        self.model_name = args['model_name']
        self.runner.warm_up()
        pb_utils.Logger.log_info(
            f"{args['model_name']}: {path} on onnxruntime CPU, "
            f"{parameters['intra_op_threads']} intra-op thread(s), "
            f"spinning {parameters['allow_spinning']}; warmed up")

    def execute(self, requests: list) -> list:
        """Run each request; a frame outside the frame range is answered with INVALID_ARG."""
        responses = []
        for request in requests:
            inputs = {name: pb_utils.get_input_tensor_by_name(request, name).as_numpy()
                      for name in self.input_names}
            error = frame_size_error(self.model_name, inputs.get(FRAME_INPUT), self.frame_sizes)
            if error:
                responses.append(pb_utils.InferenceResponse(
                    error=pb_utils.TritonError(error, pb_utils.TritonError.INVALID_ARG)))
                continue
            outputs = self.runner.run(inputs, self.output_names)
            responses.append(pb_utils.InferenceResponse(output_tensors=[
                pb_utils.Tensor(name, value) for name, value in zip(self.output_names, outputs)]))
        return responses
