"""
Bring your own lane model.

Models built at test time (lane_model_fixtures) whose constant output encodes known lanes, installed
with the package's installer, served in-process, by a real tritonserver and through a real
lane_node; decoded lanes must match the generating geometry within 1 px at three or more rows, with
the right count and ego sides.
"""
from __future__ import annotations

from pathlib import Path
import subprocess
import sys
from typing import Any, Callable

import numpy as np
from onnx import TensorProto
import pytest

from conftest import copy_of_model_repository
from lane_model_fixtures import (constant_model, Curve, laneatt_rows, segmentation_output, through,
                                 ufld_v1_output, ufld_v2_outputs)
from triton_perception.bench.references import onnx_model
from triton_perception.frames.frame_preprocessing import cropped_top_rows
from triton_perception.graphs.contracts import FRAME_INPUT
from triton_perception.lanes.decode import decode_lanes
from triton_perception.lanes.lane_geometry import LaneResult
from triton_perception.lanes.lane_model import DecodeSettings, LaneConfigError
from triton_perception.lanes.lane_records import installed_lane_models, lane_model_for
from triton_perception.lanes.layouts import LaneLayoutError
from triton_perception.models.lane_model_install import (install_lane_model,
                                                         install_served_lane_model)

# Ego-left, ego-right and a line further right, in pixels of a 640 x 360 input.
CURVES = [through(300, 200, 150, 359, bend=6), through(340, 470, 150, 359, bend=-8),
          through(380, 620, 150, 300)]
SIDES = [-1, 1, 2]
FRAME = (540, 960)  # the frame is 1.5 x the model input: 1 px of tolerance holds 0.67 model px
NO_LOG = {'log': lambda _line: None}


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


@pytest.fixture(scope='module')
def repository(tmp_path_factory: pytest.TempPathFactory, triton_server: Any) -> Path:
    """Return a copy of the package's model repository, for one module."""
    return copy_of_model_repository(tmp_path_factory.mktemp('lane_models'))


def served_in_process(repository: Path, name: str, frame: np.ndarray) -> dict[str, np.ndarray]:
    """NAME_model on the frame, as the CPU profile's one step runs it."""
    model = lane_model_for(repository, name)
    outputs = onnx_model(repository, f'{name}_model')({FRAME_INPUT: frame})
    if model.uint8_outputs:
        return dict(zip(model.outputs, (outputs['lane_probability'],
                                        *([outputs['drivable_margin']] if len(
                                            model.outputs) > 1 else []))))
    return {name_: outputs[name_] for name_ in model.outputs}


def frame() -> np.ndarray:
    """Return a seeded random frame of FRAME's size: the lanes come from the model alone."""
    return np.random.default_rng(0).integers(0, 256, (*FRAME, 3), dtype=np.uint8)


@pytest.mark.parametrize('input_type', [TensorProto.FLOAT, TensorProto.FLOAT16])
def test_laneatt_proposals_decode_to_their_lanes(repository: Path, tmp_path: Path,
                                                 input_type: int) -> None:
    """
    The design document's contract: [2784, 77] rows, input [1, 3, 360, 640] FP32 or FP16.

    Duplicates 5 px apart removed by NMS, low-probability distractors dropped.
    """
    path = constant_model(tmp_path / 'laneatt.onnx', {'predict_lanes': laneatt_rows(CURVES)},
                          [1, 3, 360, 640], input_type)
    name = f'laneatt_{input_type}'
    model = install_lane_model(repository, path, name, 'proposals', **NO_LOG)
    assert model.input_type == ('float16' if input_type == TensorProto.FLOAT16 else 'float32')
    assert model.preprocessing.channel_order == 'bgr'
    result = decode_lanes(model, served_in_process(repository, name, frame()), FRAME,
                          DecodeSettings())
    check_lanes(result, CURVES, SIDES, (1.5, 1.5))
    assert result.drivable_area is None
    assert np.all(result.scores > 0.99)
    top_two = decode_lanes(model, served_in_process(repository, name, frame()), FRAME,
                           DecodeSettings(max_lanes=2))
    assert len(top_two.lanes) == 2


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


ROW_ANCHOR_AND_SEGMENTATION = ('ufld', 'ufld2', 'seg')


@pytest.mark.parametrize('name', ROW_ANCHOR_AND_SEGMENTATION)
def test_row_anchor_and_segmentation_models_decode_to_their_lanes(
        repository: Path, tmp_path: Path, name: str) -> None:
    """
    UFLD v1, UFLD v2 and segmentation models decode to the lanes their outputs encode.

    Each installs with its layout's version, normalisation, top crop and outputs.
    """
    path, layout, config, check = layout_case(name, tmp_path)
    model = install_lane_model(repository, path, name, layout, config, **NO_LOG)
    expected = {'ufld': (1, 'imagenet', 0.0, ('loc',)),
                'ufld2': (2, 'imagenet', 0.4, ('loc_row', 'loc_col', 'exist_row', 'exist_col')),
                'seg': (None, 'unit', 0.25, ('LANE_PROBABILITY',))}[name]
    assert (getattr(model.decode, 'version', None), model.preprocessing.normalize,
            model.preprocessing.top_crop, model.outputs) == expected
    check(decode_lanes(model, served_in_process(repository, name, frame()), FRAME,
                       DecodeSettings()))


def test_a_layout_that_does_not_fit_is_refused_naming_the_shapes(
        repository: Path, tmp_path: Path) -> None:
    """
    A model that does not fit the layout given is refused naming its outputs, leaving nothing.

    So are an unknown served model, a bad name, and a config with a bad value or unknown key.
    """
    path = constant_model(tmp_path / 'laneatt.onnx', {'predict_lanes': laneatt_rows(CURVES)},
                          [1, 3, 360, 640])
    with pytest.raises(LaneLayoutError, match=r'outputs predict_lanes \[2784, 77\] do not fit '
                                              r'the row-anchor layout .* supported: proposals'):
        install_lane_model(repository, path, 'wrong', 'row-anchor', **NO_LOG)
    assert not (repository / 'wrong').exists()
    # Without a record, the shipped contract under that name (a model served elsewhere).
    assert lane_model_for(repository, 'elsewhere').outputs == ('LANE_RUNS', 'LANE_RUN_COUNTS',
                                                               'DRIVABLE_AREA')
    with pytest.raises(LaneConfigError, match="no served model 'nosuch'"):
        install_served_lane_model(repository, 'nosuch', 'wrapped', 'proposals', **NO_LOG)
    for name in ('9lanes', 'lane_detection', 'has space'):
        with pytest.raises(LaneConfigError, match=f"lane model name '{name}'"):
            install_lane_model(repository, path, name, 'proposals', **NO_LOG)
    bad = tmp_path / 'bad.yaml'
    bad.write_text('preprocessing: {channel_order: bgrx}\n')
    with pytest.raises(LaneConfigError, match=r"preprocessing.channel_order: 'bgrx' is not one "
                                              r'of rgb, bgr'):
        install_lane_model(repository, path, 'badconfig', 'proposals', bad, **NO_LOG)
    bad.write_text('decode: {nms: 3}\n')
    with pytest.raises(LaneConfigError, match=r"decode: unknown keys \['nms'\]"):
        install_lane_model(repository, path, 'badconfig', 'proposals', bad, **NO_LOG)


def test_models_list_and_install_errors_on_the_command_line(repository: Path,
                                                            tmp_path: Path) -> None:
    """
    `models install --lanes` installs and `models list` shows the model's layout and input.

    A layout that does not fit is a usage error that leaves nothing installed.
    """
    path = constant_model(tmp_path / 'listed.onnx', {'predict_lanes': laneatt_rows(CURVES)},
                          [1, 3, 360, 640])
    command = [sys.executable, '-m', 'triton_perception.cli', 'models']
    where = ['--model-repository', str(repository)]
    installed = subprocess.run([*command, 'install', '--lanes', str(path), '--name', 'listed',
                                '--layout', 'proposals', *where], capture_output=True,
                               text=True, timeout=120)
    assert installed.returncode == 0, installed.stderr
    listed = subprocess.run([*command, 'list', *where], capture_output=True, text=True,
                            timeout=60)
    assert '| listed | proposals | 640 x 360, float32 | predict_lanes |' in listed.stdout
    assert '| lane_detection | segmentation |' in listed.stdout
    wrong = subprocess.run([*command, 'install', '--lanes', str(path), '--name', 'wrong2',
                            '--layout', 'segmentation', *where], capture_output=True, text=True,
                           timeout=120)
    assert wrong.returncode == 2 and 'do not fit the segmentation layout' in wrong.stderr
    assert not (repository / 'wrong2').exists()
    assert 'wrong2' not in [model.name for model in installed_lane_models(repository)]
