"""
Lane records: lane_model.json beside each installed ensemble, and the lane config an install reads.

The shipped `lane_detection` is a segmentation model with the default settings (its record is
written at `models install`); a model without a record is taken to follow its contract.
"""
from __future__ import annotations

from dataclasses import asdict, fields, replace
import json
from pathlib import Path
from typing import TYPE_CHECKING

import yaml

from triton_perception.graphs import LANE_RUNS_OUTPUTS
from triton_perception.lanes.lane_model import (CHANNEL_ORDERS, LANE_RECORD, LaneConfigError,
                                                LaneModel, NORMALIZATIONS, Preprocessing,
                                                RESIZES, SHIPPED_LANES)
from triton_perception.lanes.layouts import layout_named
from triton_perception.lanes.segmentation import Segmentation

if TYPE_CHECKING:
    from triton_perception.system import JsonObject, JsonValue


def shipped_lane_model() -> LaneModel:
    """Return the contract of the package's own lane_detection ensemble (TwinLiteNet)."""
    return LaneModel(SHIPPED_LANES, 640, 360, 'float32', LANE_RUNS_OUTPUTS, Segmentation(
        lane_output='ll', lane_channel=1, activation='softmax', drivable_output='da',
        drivable_channel=1), Preprocessing(), 'twinlitenet.onnx')


def lane_model_from_json(text: str) -> LaneModel:
    """Return the LaneModel a lane record's JSON text describes (the inverse of `to_json`)."""
    record = json.loads(text)
    return LaneModel(record['name'], record['input_width'], record['input_height'],
                     record['input_type'], tuple(record['outputs']),
                     layout_named(record['layout']).from_record(record['decode']),
                     Preprocessing(**record['preprocessing']), record['source'],
                     record['sha256'])


def _choose(section: str, key: str, value: JsonValue, choices: tuple[str, ...]) -> str:
    if value not in choices:
        raise LaneConfigError(f'{section}.{key}: {value!r} is not one of {", ".join(choices)}')
    return str(value)


def read_lane_config(path: Path | None) -> dict[str, JsonObject]:
    """
    Return the optional --lane-config YAML: {preprocessing: {...}, decode.

    {...}}, checked here so that a typo fails at install, naming the key, not at the first frame.
    """
    if path is None:
        return {}
    if not path.is_file():
        raise LaneConfigError(f'lane config {path} does not exist')
    try:
        config = yaml.safe_load(path.read_text(encoding='utf-8')) or {}
    except yaml.YAMLError as error:
        raise LaneConfigError(f'lane config {path} is not YAML: {error}') from None
    unknown = set(config) - {'preprocessing', 'decode'}
    if unknown or not all(isinstance(config.get(key, {}), dict) for key in config):
        raise LaneConfigError(f'lane config {path}: top-level keys are preprocessing and decode '
                              f'(mappings); found {sorted(config)}')
    return config


def preprocessing_from(config: dict[str, JsonObject], defaults: Preprocessing) -> Preprocessing:
    """Return the layout's default preprocessing, overridden by the lane config's section."""
    section = dict(config.get('preprocessing', {}))
    known = {item.name for item in fields(Preprocessing)}
    if set(section) - known:
        raise LaneConfigError(f'preprocessing: unknown keys {sorted(set(section) - known)}; '
                              f'known: {sorted(known)}')
    merged = {**asdict(defaults), **section}
    _choose('preprocessing', 'channel_order', merged['channel_order'], CHANNEL_ORDERS)
    _choose('preprocessing', 'normalize', merged['normalize'], NORMALIZATIONS)
    _choose('preprocessing', 'resize', merged['resize'], RESIZES)
    top_crop = merged['top_crop']
    if isinstance(top_crop, bool) or not isinstance(top_crop, (int, float)) or not (
            0.0 <= top_crop < 1.0):
        raise LaneConfigError(f'preprocessing.top_crop: {top_crop!r} is not a fraction in [0, 1)')
    merged['top_crop'] = float(top_crop)
    return Preprocessing(**merged)


def record_path(repository: Path, name: str) -> Path:
    """Return where the lane record of model `name` lives in `repository`."""
    return repository / name / LANE_RECORD


def write_lane_record(repository: Path, model: LaneModel) -> None:
    """Write `model`'s lane record into its ensemble's directory, creating the directory."""
    path = record_path(repository, model.name)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(model.to_json(), encoding='utf-8')


def installed_lane_models(repository: Path) -> list[LaneModel]:
    """Every lane model with a record, the shipped one first."""
    found = [lane_model_from_json(path.read_text(encoding='utf-8'))
             for path in sorted(repository.glob(f'*/{LANE_RECORD}'))]
    return sorted(found, key=lambda model: (model.name != SHIPPED_LANES, model.name))


def lane_model_for(repository: Path, name: str) -> LaneModel:
    """
    Return the lane model lane_node serves as `model_name`.

    Its installed record, else the shipped lane_detection contract under that name (a model served
    elsewhere, e.g. by a remote Triton whose repository this machine cannot read, or an ensemble
    written by hand).
    """
    path = record_path(repository, name)
    if path.is_file():
        return lane_model_from_json(path.read_text(encoding='utf-8'))
    if name == SHIPPED_LANES:
        return shipped_lane_model()
    return replace(shipped_lane_model(), name=name, source='')
