"""
The lane models the lane and graph tests install, and the lanes their serving must give.

The curves a constant LaneATT model encodes (lane_model_fixtures), the frame they are served on,
the row-anchor and segmentation cases with the check each one's lanes must pass, and a user's
existing LaneATT model added to a repository as a served model of its own.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Callable

import numpy as np

from support.lane_model_fixtures import (constant_model, Curve, laneatt_rows, segmentation_output,
                                         through, ufld_v1_output, ufld_v2_outputs)
from triton_perception.frames.frame_preprocessing import cropped_top_rows
from triton_perception.lanes.lane_geometry import LaneResult

# Ego-left, ego-right and a line further right, in pixels of a 640 x 360 input.
CURVES = [through(300, 200, 150, 359, bend=6), through(340, 470, 150, 359, bend=-8),
          through(380, 620, 150, 300)]
SIDES = [-1, 1, 2]
FRAME = (540, 960)  # the frame is 1.5 x the model input: 1 px of tolerance holds 0.67 model px
NO_LOG = {'log': lambda _line: None}
ROW_ANCHOR_AND_SEGMENTATION = ('ufld', 'ufld2', 'seg')


def frame() -> np.ndarray:
    """Return a seeded random frame of FRAME's size: the lanes come from the model alone."""
    return np.random.default_rng(0).integers(0, 256, (*FRAME, 3), dtype=np.uint8)


def check_lanes(result: LaneResult, curves: list[Curve], sides: list[int],
                scale: tuple[float, float], top_rows: int = 0) -> None:
    """
    Check each served lane against its curve.

    Within 1 frame px at every sampled row inside the curve (at least three), left to right,
    with the expected sides.
    """
    assert len(result.lanes) == len(curves), result.sides
    assert result.sides.tolist() == sides
    for lane, curve in zip(result.lanes, curves):
        model_y = (lane[:, 1] - top_rows) / scale[1]
        inside = (model_y >= curve.top + 1) & (model_y <= curve.bottom - 1)
        assert inside.sum() >= 3
        error = np.abs(lane[inside, 0] - curve.x(model_y[inside]) * scale[0])
        assert error.max() <= 1.0, error


def check_segmentation(result: LaneResult, curves: list[Curve], top_crop: float,
                       input_height: int) -> None:
    """Check lanes served from a drawn mask against the curves drawn (frame below the crop)."""
    top = cropped_top_rows(FRAME[0], top_crop)
    assert result.drivable_area is None
    assert len(result.lanes) == 2 and result.sides.tolist() == [-1, 1]
    for lane, curve in zip(result.lanes, curves):
        model_y = (lane[:, 1] - top) * input_height / (FRAME[0] - top)
        inside = (model_y >= curve.top + 3) & (model_y <= curve.bottom - 3)
        assert inside.sum() >= 3
        # Mask pixel (r, c) covers [c, c + 1) x [r, r + 1): a line drawn at x is centred at x + 0.5.
        error = np.abs(lane[inside, 0] - (curve.x(model_y[inside] - 0.5) + 0.5) * 1.5)
        assert error.max() <= 1.0, error


def layout_case(name: str, directory: Path) -> tuple[Path, str, Path | None,
                                                     Callable[[LaneResult], None]]:
    """
    Build one of the row-anchor and segmentation test models.

    Returns its ONNX file, layout, lane config and the check its served lanes must pass.
    ufld: CULane's 18 v1 row anchors on a 288 x 800 input, 800 bins (a bin is 1 model px);
    ufld2: v2's CULane config (72 row and 81 column anchors, the bottom 60 % of the frame), 800
    bins; seg: a one-head segmentation model (no drivable area) seeing the frame below its top
    25 %.
    """
    if name == 'ufld':
        anchors = [121, 131, 141, 150, 160, 170, 180, 189, 199, 209, 219, 228, 238, 248, 258,
                   267, 277, 287]
        curves = [through(360, 150, 120, 287, bend=5), through(440, 650, 120, 287)]
        output = ufld_v1_output(curves, anchors, griding=800, lanes=4, width=800)
        path = constant_model(directory / 'ufld.onnx', {'loc': output}, [1, 3, 288, 800])
        return path, 'row-anchor', None, lambda result: check_lanes(
            result, curves, [-1, 1], (960 / 800, 540 / 288))
    if name == 'ufld2':
        curves = [through(420, 200, 240, 540), through(540, 800, 240, 540, bend=-6)]
        outputs = ufld_v2_outputs(curves, np.linspace(0.42, 1.0, 72), FRAME[1], FRAME[0],
                                  grid=800, columns=81)
        path = constant_model(directory / 'ufld2.onnx', outputs, [1, 3, 320, 1600])
        return path, 'row-anchor', None, lambda result: check_lanes(
            result, curves, [-1, 1], (1.0, 1.0))
    curves = [through(290, 100, 40, 250), through(350, 540, 40, 250, bend=4)]
    path = constant_model(directory / 'seg.onnx', {'lanes': segmentation_output(
        curves, 640, 256)}, [1, 3, 256, 640])
    config = directory / 'seg.yaml'
    config.write_text('preprocessing: {top_crop: 0.25}\n')
    return path, 'segmentation', config, lambda result: check_segmentation(
        result, curves, 0.25, 256)


def add_served_model(repository: Path, name: str, triton_type: str, onnx_type: int,
                     directory: Path) -> None:
    """
    Add a user's existing lane model to the repository.

    Batching config with a float input, as the design document's TensorRT plan has it; here served
    by onnxruntime in the Python backend.
    """
    step = repository / name
    (step / '1').mkdir(parents=True)
    constant_model(step / '1' / 'model.onnx', {'predict_lanes': laneatt_rows(CURVES)[None]},
                   [1, 3, 360, 640], onnx_type)
    for code in ('model.py', 'onnx_runner.py'):
        (step / '1' / code).symlink_to(os.path.relpath(
            (repository / 'yolov5_model' / '1' / code).resolve(), step / '1'))
    (step / 'config.pbtxt').write_text(f"""name: "{name}"
backend: "python"
max_batch_size: 1
input [ {{ name: "input" data_type: {triton_type} dims: [ 3, 360, 640 ] }} ]
output [ {{ name: "predict_lanes" data_type: TYPE_FP32 dims: [ 2784, 77 ] }} ]
parameters {{ key: "onnx_file" value {{ string_value: "model.onnx" }} }}
parameters {{ key: "intra_op_threads" value {{ string_value: "1" }} }}
parameters {{ key: "inter_op_threads" value {{ string_value: "1" }} }}
parameters {{ key: "allow_spinning" value {{ string_value: "false" }} }}
instance_group [ {{ count: 1 kind: KIND_CPU }} ]
""")
