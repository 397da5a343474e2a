"""
The bare processing: the model steps run in this process, timed without Triton or ROS.

The model repository's own model steps, run in this process (no ROS, no Triton) with the CPU
profile's settings, as the yardstick Triton and ROS are measured against.
"""
from __future__ import annotations

from pathlib import Path
from typing import Callable

import numpy as np
from numpy.typing import NDArray

from triton_perception.bench.session import detection_request_inputs
from triton_perception.graphs import FRAME_INPUT
from triton_perception.lanes import NUM_POINTS, postprocess_runs
from triton_perception.parameters import LANES, specs_by_name
from triton_perception.serving import (check_detections, load_step_module, parameters_of,
                                       step_config, Tensors)


def onnx_model(repository: Path, step: str,
               precision: str = 'fp') -> Callable[[Tensors], Tensors]:
    """
    Return the CPU profile's model step: its ONNX runner with the configs/cpu.pbtxt settings.

    With precision int8, the INT8 graph of `models quantize` beside the float one.
    """
    config = step_config(repository, step, 'cpu')
    parameters = parameters_of(config)
    onnx_file = 'model_int8.onnx' if precision == 'int8' else parameters['onnx_file']
    runner = load_step_module(repository, step, 'onnx_runner').OnnxRunner(
        str(repository / step / '1' / onnx_file),
        intra_op_threads=int(parameters['intra_op_threads']),
        inter_op_threads=int(parameters['inter_op_threads']),
        allow_spinning=parameters['allow_spinning'].lower() == 'true')
    runner.warm_up()
    output_names = [tensor.name for tensor in config.output]

    def run(inputs: Tensors) -> Tensors:
        return dict(zip(output_names, runner.run(inputs, output_names)))
    return run


def detection_reference(repository: Path,
                        precision: str = 'fp') -> Callable[[NDArray[np.uint8]], object]:
    """yolov5_model (the served graph, frame in), with the node's default thresholds."""
    model = onnx_model(repository, 'yolov5_model', precision)
    thresholds = {name.lower(): value for name, value in detection_request_inputs().items()}

    def detect(rgb: NDArray[np.uint8]) -> object:
        outputs = model({FRAME_INPUT: rgb, **thresholds})
        return check_detections({'DETECTIONS': outputs['detections'],
                                 'NUM_DETECTIONS': outputs['num_detections']})
    return detect


def lane_reference(repository: Path,
                   precision: str = 'fp') -> Callable[[NDArray[np.uint8]], object]:
    """
    Run lane_model (the served graph, frame in) and the package's lane geometry.

    As lane_node runs them, with the node's default lane length.
    """
    model = onnx_model(repository, 'lane_model', precision)
    min_lane_length = specs_by_name(LANES)['min_lane_length'].default
    assert isinstance(min_lane_length, float)

    def detect(rgb: NDArray[np.uint8]) -> object:
        outputs = model({FRAME_INPUT: rgb})
        return postprocess_runs(outputs['lane_runs'], outputs['lane_run_counts'],
                                outputs['drivable_area'], outputs['lane_probability'].shape[1],
                                (rgb.shape[0], rgb.shape[1]), NUM_POINTS, min_lane_length)
    return detect


REFERENCES = {'detection_node': detection_reference, 'lane_node': lane_reference}
