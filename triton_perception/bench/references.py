"""
The bare processing.

The model repository's own steps, run in this process (no ROS, no Triton) with the CPU profile's
settings, as the yardstick Triton and ROS are measured against.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import numpy as np

from triton_perception.bench.settings import detection_request_inputs
from triton_perception.lane_geometry import NUM_POINTS
from triton_perception.lane_geometry import postprocess as lane_postprocess
from triton_perception.parameters import LANES, specs_by_name
from triton_perception.triton.model_config import load_step_module, parameters_of, step_config
from triton_perception.validation import check_detections


def onnx_model(repository: Path,
               step: str) -> Callable[[dict[str, np.ndarray]], dict[str, np.ndarray]]:
    """Return the CPU profile's model step: its ONNX runner with the configs/cpu.pbtxt settings."""
    config = step_config(repository, step, 'cpu')
    parameters = parameters_of(config)
    runner = load_step_module(repository, step, 'onnx_runner').OnnxRunner(
        str(repository / step / '1' / parameters['onnx_file']),
        intra_op_threads=int(parameters['intra_op_threads']),
        inter_op_threads=int(parameters['inter_op_threads']),
        allow_spinning=parameters['allow_spinning'].lower() == 'true')
    runner.warm_up()
    output_names = [tensor.name for tensor in config.output]

    def run(inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        return dict(zip(output_names, runner.run(inputs, output_names)))
    return run


def detection_reference(repository: Path) -> Callable[[np.ndarray], Any]:
    """yolov5_preprocess -> yolov5_model (the served graph), with the node's default thresholds."""
    detection_inputs = load_step_module(repository, 'yolov5_preprocess',
                                        'preprocessing').detection_inputs
    parameters = parameters_of(step_config(repository, 'yolov5_preprocess'))
    width, height = int(parameters['input_width']), int(parameters['input_height'])
    model = onnx_model(repository, 'yolov5_model')
    thresholds = [value.item() for value in detection_request_inputs().values()]
    names = ('images', 'letterbox', 'score_threshold', 'iou_threshold', 'max_detections')

    def detect(rgb: np.ndarray) -> Any:
        inputs = detection_inputs(rgb, width, height, *thresholds,
                                  parameters['arg_most_detections'])
        outputs = model(dict(zip(names, inputs)))
        return check_detections({'DETECTIONS': outputs['detections'],
                                 'NUM_DETECTIONS': outputs['num_detections']})
    return detect


def lane_reference(repository: Path) -> Callable[[np.ndarray], Any]:
    """
    Run lane_preprocess, lane_model (the served graph) and the package's lane geometry.

    As lane_node runs them, with the node's default lane length.
    """
    resize_frame = load_step_module(repository, 'lane_preprocess', 'preprocessing').resize_frame
    size = parameters_of(step_config(repository, 'lane_preprocess'))
    width, height = int(size['input_width']), int(size['input_height'])
    model = onnx_model(repository, 'lane_model')
    min_lane_length = specs_by_name(LANES)['min_lane_length'].default
    assert isinstance(min_lane_length, float)

    def detect(rgb: np.ndarray) -> Any:
        (tensor,) = resize_frame(rgb, width, height)
        maps = model({'images': tensor})
        return lane_postprocess(maps['lane_probability'], maps['drivable_margin'],
                                (rgb.shape[0], rgb.shape[1]), NUM_POINTS, min_lane_length)
    return detect


REFERENCES = {'detection_node': detection_reference, 'lane_node': lane_reference}
