"""
Python-backend model for the fault tests, copied into a temporary repository as 1/model.py.

One file, many misbehaviours: the config parameter `behaviour` selects what the model returns
and `delay_s` how long it takes, so each fault is a model name the nodes can be pointed at.
Weights are never involved.
"""
import json
import time

import numpy as np
import triton_python_backend_utils as pb_utils

ROWS = 300  # padded rows of DETECTIONS, as the served detection graph returns them


def detections(height: int, width: int) -> list:
    """One well-formed detection, a person in the middle of the frame, in padded rows."""
    rows = np.zeros((ROWS, 6), dtype=np.float32)
    rows[0] = [width * 0.25, height * 0.25, width * 0.75, height * 0.75, 0.9, 0.0]
    return padded(rows, 1)


def padded(rows: np.ndarray, count: int) -> list:
    """
    Return `rows` as DETECTIONS with `count` as NUM_DETECTIONS, the model's two outputs.

    `count` need not match the rows: some behaviours lie about it on purpose.
    """
    return [pb_utils.Tensor('DETECTIONS', rows),
            pb_utils.Tensor('NUM_DETECTIONS', np.array([count], dtype=np.int32))]


def lane_outputs(height: int, width: int, count_rows: int) -> list:
    """
    Return lane_detection's runs contract for a mask at the frame's size (`count_rows` counts).

    Two straight ego lines 3 px wide in the lower half, drivable below the middle.
    """
    runs = np.zeros((height, 16, 3), dtype=np.int32)
    for slot, x in enumerate((int(width * 0.3), int(width * 0.7))):
        start, end = max(0, x - 1), min(width, x + 2)
        runs[height // 2:, slot] = (start, end, 230 * (end - start))
    counts = np.zeros(count_rows, dtype=np.int32)
    counts[height // 2:] = 2
    area = np.zeros((height, width), dtype=np.uint8)
    area[height // 2:] = 255
    return [pb_utils.Tensor('LANE_RUNS', runs), pb_utils.Tensor('LANE_RUN_COUNTS', counts),
            pb_utils.Tensor('DRIVABLE_AREA', area)]


class TritonPythonModel:
    """The misbehaving model: its `behaviour` parameter chooses the answer."""

    def initialize(self, args: dict) -> None:
        """
        Read `behaviour` and `delay_s` from the model's config.

        A `fail_load` model raises here, so that the server reports it as failed to load; a
        `slow_load` one takes `delay_s` to load.
        """
        parameters = json.loads(args['model_config']).get('parameters', {})
        self.behaviour = parameters['behaviour']['string_value']
        self.delay_s = float(parameters.get('delay_s', {}).get('string_value', '0'))
        if self.behaviour == 'fail_load':
            raise RuntimeError('fault test: this model refuses to load')
        if self.behaviour == 'slow_load':
            time.sleep(self.delay_s)

    def execute(self, requests: list) -> list:
        """Answer each request as `behaviour` says, after `delay_s`."""
        return [self._respond(request) for request in requests]

    def _respond(self, request) -> 'pb_utils.InferenceResponse':
        height, width = pb_utils.get_input_tensor_by_name(request, 'IMAGE').as_numpy().shape[:2]
        if not self._sleep(request):
            return pb_utils.InferenceResponse(error=pb_utils.TritonError('cancelled by the client'))
        outputs = {
            'ok': lambda: detections(height, width),
            'bad_shape': lambda: padded(np.ones((3, 5), np.float32), 1),
            'bad_dtype': lambda: padded(np.zeros((ROWS, 6), np.float64), 1),
            'nan': lambda: padded(np.full((ROWS, 6), np.nan, dtype=np.float32), 2),
            'bad_count': lambda: padded(np.zeros((ROWS, 6), np.float32), ROWS + 1),
            'lanes_ok': lambda: lane_outputs(height, width, height),
            'lanes_bad_area': lambda: lane_outputs(height, width, height // 2 + 1),
        }[self.behaviour]()
        return pb_utils.InferenceResponse(output_tensors=outputs)

    def _sleep(self, request) -> bool:
        """
        Sleep `delay_s`, giving up early once the client has gone (its deadline passed).

        Timed-out requests then do not pile up in the server.
        """
        deadline = time.monotonic() + self.delay_s
        while time.monotonic() < deadline:
            if request.is_cancelled():
                return False
            time.sleep(0.01)
        return True
