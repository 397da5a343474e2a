"""
The served detection and lane graphs, built from the shipped weights and run in-process.

Each graph is built once per directory and run with onnxruntime through the model step's own
`onnx_runner.py`, as the ensembles' one step runs it: the frame goes in, detections or the lane
maps come out (the lane maps then through the package's geometry, as lane_node chains them).
"""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from types import ModuleType
from typing import Any, Callable

import numpy as np

from support.checkout import REPO, shared_path
from triton_perception.graphs.detection_graph import build_detection_graph
from triton_perception.graphs.lane_graph import build_lane_graph
from triton_perception.lanes import lane_geometry as geometry
from triton_perception.serving.requests.output_checks import check_detections
from triton_perception.serving.server.model_config import load_step_module

REPOSITORY = REPO / 'model_repository'
SCORE_THRESHOLD = 0.25  # the nodes' default
NUM_POINTS = 20  # points per lane polyline


@lru_cache(maxsize=None)
def step_runner(step: str) -> ModuleType:
    """Return the `onnx_runner` module of model step `step`, loaded once."""
    return load_step_module(REPOSITORY, step, 'onnx_runner')


def session(path: Path, step: str = 'yolov5_model') -> Any:
    """Return an onnxruntime session of the model at `path`, as step `step` opens one."""
    return step_runner(step).OnnxRunner(str(path), intra_op_threads=2, inter_op_threads=1,
                                        allow_spinning=False)


def served_detection_graph(directory: Path) -> Path:
    """
    Return the detection graph built from the shipped yolov5n in `directory`.

    It is built only once per directory.
    """
    graph = directory / 'detection.onnx'
    if not graph.is_file():
        build_detection_graph(shared_path('models', 'yolov5n', 'yolov5n.onnx'), graph)
    return graph


def make_detector(directory: Path) -> Callable[..., np.ndarray]:
    """Return the shipped served graph, in-process, as the ensemble's one step runs it."""
    return graph_detector(served_detection_graph(directory))


def graph_detector(path: Path) -> Callable[..., np.ndarray]:
    """Return a served detection graph (frame and thresholds in), run in-process."""
    runner = session(path)

    def detect(image: np.ndarray, score: float = SCORE_THRESHOLD, iou: float = 0.45,
               max_det: int = 100) -> np.ndarray:
        rows, count = runner.run({'image': image,
                                  'score_threshold': np.array([score], np.float32),
                                  'iou_threshold': np.array([iou], np.float32),
                                  'max_detections': np.array([max_det], np.int32)},
                                 ['detections', 'num_detections'])
        return check_detections({'DETECTIONS': rows, 'NUM_DETECTIONS': count})
    return detect


def served_lane_graph(directory: Path) -> Path:
    """Return the lane graph built from the shipped weights in `directory`, once."""
    graph = directory / 'lanes.onnx'
    if not graph.is_file():
        build_lane_graph(shared_path('models', 'twinlitenet', 'twinlitenet.onnx'), graph)
    return graph


def make_lane_detector(directory: Path) -> Callable[..., Any]:
    """Return the served graph (frame in) -> the package's geometry, as lane_node chains them."""
    runner = session(served_lane_graph(directory), 'lane_model')

    def detect(frame: np.ndarray, min_lane_length: float = 0.1):
        probability, margin = runner.run({'image': frame}, ['lane_probability',
                                                            'drivable_margin'])
        return geometry.postprocess(probability, margin, frame.shape[:2], NUM_POINTS,
                                    min_lane_length)

    return detect
