"""
The one table of lane layouts: every layout's record round-trips, and names are the table's keys.

lane_model.json must read back to the same model for every layout (the installed records of
earlier versions included, which hold the same `decode` keys), and the shipped model's record
keeps its fields in their order.
"""
from __future__ import annotations

import json

import pytest

from triton_perception.lanes.lane_model import LaneModel, Preprocessing
from triton_perception.lanes.lane_records import lane_model_from_json, shipped_lane_model
from triton_perception.lanes.layouts import LaneLayoutError, LAYOUTS, resolve_layout

# One model's output shapes each layout accepts.
SHAPES = {'proposals': {'predict_lanes': [2784, 77]},
          'row-anchor': {'loc': [1, 201, 18, 4]},
          'segmentation': {'da': [1, 2, 360, 640], 'll': [1, 2, 360, 640]}}


def test_every_layout_is_in_the_table_under_its_own_name() -> None:
    """The table's keys are the layouts' names, and each layout has shapes tested here."""
    assert [layout.name for layout in LAYOUTS.values()] == list(LAYOUTS) == list(SHAPES)


@pytest.mark.parametrize('name', list(LAYOUTS))
def test_a_layouts_record_reads_back_as_the_same_model(name: str) -> None:
    """Resolved settings written as lane_model.json read back equal, and write the same text."""
    outputs, settings, preprocessing = resolve_layout(name, SHAPES[name], 288, {})
    model = LaneModel('mine', 800, 288, 'float32', outputs, settings, preprocessing, 'mine.onnx')
    text = model.to_json()
    assert lane_model_from_json(text) == model
    assert lane_model_from_json(text).to_json() == text
    assert json.loads(text)['layout'] == name


def test_the_shipped_record_keeps_its_fields() -> None:
    """lane_detection's record: the fields and decode keys lane_node and older records use."""
    record = json.loads(shipped_lane_model().to_json())
    assert list(record) == ['name', 'layout', 'input_width', 'input_height', 'input_type',
                            'outputs', 'preprocessing', 'decode', 'source', 'sha256']
    assert record['decode'] == {'lane_output': 'll', 'lane_channel': 1, 'activation': 'softmax',
                                'drivable_output': 'da', 'drivable_channel': 1}
    assert record['preprocessing'] == vars(Preprocessing())


def test_a_misfit_names_every_layouts_expected_outputs() -> None:
    """The error of a model that fits no layout lists what each layout of the table reads."""
    with pytest.raises(LaneLayoutError) as error:
        resolve_layout('proposals', SHAPES['row-anchor'], 288, {})
    assert all(f'{name}: {layout.expects}' in str(error.value)
               for name, layout in LAYOUTS.items())
