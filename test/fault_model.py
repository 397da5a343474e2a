"""Python-backend model for the fault tests, copied into a temporary repository as 1/model.py.

One file, many misbehaviours: the config parameter `behaviour` selects what the model returns
and `delay_s` how long it takes, so each fault is a model name the nodes can be pointed at.
Weights are never involved.
"""
import json
import time

import numpy as np
import triton_python_backend_utils as pb_utils

NUM_POINTS = 20


def detections(height: int, width: int) -> np.ndarray:
    """One well-formed detection: a person in the middle of the frame."""
    return np.array([[width * 0.25, height * 0.25, width * 0.75, height * 0.75, 0.9, 0.0]],
                    dtype=np.float32)


def lane_outputs(height: int, width: int, drivable_shape: tuple) -> list:
    """Two straight ego lanes and a drivable area of `drivable_shape`."""
    rows = np.linspace(height - 1, height / 2, NUM_POINTS, dtype=np.float32)
    lanes = np.stack([np.stack([np.full(NUM_POINTS, x, np.float32), rows], axis=1)
                      for x in (width * 0.3, width * 0.7)]).astype(np.float32)
    area = np.zeros(drivable_shape, dtype=np.uint8)
    area[drivable_shape[0] // 2:] = 255
    return [pb_utils.Tensor('LANES', lanes),
            pb_utils.Tensor('LANE_SCORES', np.array([0.9, 0.8], dtype=np.float32)),
            pb_utils.Tensor('LANE_SIDES', np.array([-1, 1], dtype=np.int8)),
            pb_utils.Tensor('DRIVABLE_AREA', area)]


class TritonPythonModel:
    def initialize(self, args: dict) -> None:
        parameters = json.loads(args['model_config']).get('parameters', {})
        self.behaviour = parameters['behaviour']['string_value']
        self.delay_s = float(parameters.get('delay_s', {}).get('string_value', '0'))
        if self.behaviour == 'fail_load':
            raise RuntimeError('fault test: this model refuses to load')

    def execute(self, requests: list) -> list:
        return [self._respond(request) for request in requests]

    def _respond(self, request) -> 'pb_utils.InferenceResponse':
        height, width = pb_utils.get_input_tensor_by_name(request, 'IMAGE').as_numpy().shape[:2]
        if not self._sleep(request):
            return pb_utils.InferenceResponse(error=pb_utils.TritonError('cancelled by the client'))
        outputs = {
            'ok': lambda: [pb_utils.Tensor('DETECTIONS', detections(height, width))],
            'bad_shape': lambda: [pb_utils.Tensor('DETECTIONS', np.ones((3, 5), np.float32))],
            'bad_dtype': lambda: [pb_utils.Tensor('DETECTIONS',
                                                  detections(height, width).astype(np.float64))],
            'nan': lambda: [pb_utils.Tensor('DETECTIONS',
                                            np.full((2, 6), np.nan, dtype=np.float32))],
            'lanes_ok': lambda: lane_outputs(height, width, (height, width)),
            'lanes_bad_area': lambda: lane_outputs(height, width, (height // 2 + 1, width)),
        }[self.behaviour]()
        return pb_utils.InferenceResponse(output_tensors=outputs)

    def _sleep(self, request) -> bool:
        """Sleep `delay_s`, giving up early once the client has gone (its deadline passed), so
        that timed-out requests do not pile up in the server."""
        deadline = time.monotonic() + self.delay_s
        while time.monotonic() < deadline:
            if request.is_cancelled():
                return False
            time.sleep(0.01)
        return True
