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
from typing import Any

import numpy as np
from onnx import TensorProto
import pytest

from support.checkout import copy_of_model_repository
from support.lane_model_cases import (check_lanes, CURVES, FRAME, frame, layout_case, NO_LOG,
                                      ROW_ANCHOR_AND_SEGMENTATION, SIDES)
from support.lane_model_fixtures import constant_model, laneatt_rows
from triton_perception.bench.references import onnx_model
from triton_perception.graphs.contracts import FRAME_INPUT
from triton_perception.lanes.decode import decode_lanes
from triton_perception.lanes.lane_model import DecodeSettings, LaneConfigError
from triton_perception.lanes.lane_records import installed_lane_models, lane_model_for
from triton_perception.lanes.layouts import LaneLayoutError
from triton_perception.models.lane_model_install import (install_lane_model,
                                                         install_served_lane_model)


# Every test takes the module's repository, made beside the session's tritonserver.
pytestmark = [pytest.mark.server]


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
