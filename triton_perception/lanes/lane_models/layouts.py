"""
Which outputs a layout reads and its default settings, checked against a model's shapes.

A layout that does not fit the shapes is an error naming the shapes and every layout's
expected shapes, so a user learns at install, not at the first frame, what is wrong.
"""
from __future__ import annotations

from typing import Any

from triton_perception.lanes.lane_models.proposals import FIXED_COLUMNS
from triton_perception.lanes.lane_models.row_anchors import default_row_anchors, default_v2_anchors
from triton_perception.lanes.lane_models.spec import (ACTIVATIONS, LaneConfigError, Preprocessing,
                                                      SCORE_FORMATS)

SUPPORTED = ('proposals: one output [N, 5 + offsets] or [1, N, 5 + offsets] (LaneATT); '
             'row-anchor: one output [1, griding_num + 1, rows, lanes] (UFLD v1) or four '
             'loc_row [1, grid, rows, 4], loc_col [1, grid, cols, 4], exist_row [1, 2, rows, 4], '
             'exist_col [1, 2, cols, 4] (UFLD v2); segmentation: outputs [1, C, h, w] (lane '
             'channel, optional drivable-area output)')
V2_NAMES = ('loc_row', 'loc_col', 'exist_row', 'exist_col')
DECODE_KEYS = {'proposals': {'scores'},
               'row-anchor': {'row_anchors', 'column_anchors'},
               'segmentation': {'lane_output', 'lane_channel', 'activation', 'drivable_output',
                                'drivable_channel'}}
V2_CROP = {(72, 81): 0.4, (56, 41): 0.2}  # 1 - crop_ratio of the CULane and TuSimple configs


# (outputs in decode order, decode settings, default preprocessing)
Resolved = tuple[tuple[str, ...], dict[str, Any], Preprocessing]


class LaneLayoutError(LaneConfigError):
    """The model's outputs do not fit the layout asked for."""


def _mismatch(layout: str, shapes: dict[str, list[int]], why: str) -> LaneLayoutError:
    found = ', '.join(f'{name} {shape}' for name, shape in shapes.items())
    return LaneLayoutError(f'outputs {found} do not fit the {layout} layout ({why}); '
                           f'supported: {SUPPORTED}')


def resolve_layout(layout: str, shapes: dict[str, list[int]], input_height: int,
                   decode: dict[str, Any]) -> Resolved:
    """Return (outputs in decode order, decode settings, default preprocessing) of `layout`."""
    if layout not in DECODE_KEYS:
        raise LaneConfigError(f'unknown layout {layout!r}; supported: {SUPPORTED}')
    unknown = set(decode) - DECODE_KEYS[layout]
    if unknown:
        raise LaneConfigError(f'decode: unknown keys {sorted(unknown)} for the {layout} layout; '
                              f'known: {sorted(DECODE_KEYS[layout])}')
    if layout == 'proposals':
        return _proposals(shapes, decode)
    if layout == 'row-anchor':
        return _row_anchors(shapes, input_height, decode)
    return _segmentation(shapes, decode)


def _proposals(shapes: dict[str, list[int]], decode: dict[str, Any]) -> Resolved:
    if len(shapes) != 1:
        raise _mismatch('proposals', shapes, 'it reads one output')
    (name, shape), = shapes.items()
    rows = shape[1:] if len(shape) == 3 and shape[0] == 1 else shape
    if len(rows) != 2 or rows[1] < FIXED_COLUMNS + 2 or rows[0] < 1:
        raise _mismatch('proposals', shapes, 'expected [N, 5 + offsets]')
    scores = decode.get('scores', 'auto')
    if scores not in SCORE_FORMATS:
        raise LaneConfigError(f"decode.scores: {scores!r} is not one of {', '.join(SCORE_FORMATS)}")
    return (name,), {'scores': scores}, Preprocessing(channel_order='bgr', normalize='unit')


def _row_anchors(shapes: dict[str, list[int]], input_height: int,
                 decode: dict[str, Any]) -> Resolved:
    if len(shapes) == 1:
        (name, shape), = shapes.items()
        if len(shape) != 4 or shape[0] != 1 or shape[1] < 3:
            raise _mismatch('row-anchor', shapes, 'v1 expects [1, griding_num + 1, rows, lanes]')
        anchors = decode.get('row_anchors') or default_row_anchors(shape[2], input_height)
        _check_anchors('row_anchors', anchors, shape[2])
        return (name,), {'version': 1, 'row_anchors': [float(a) for a in anchors]}, \
            Preprocessing(normalize='imagenet')
    by_name = {name: shapes[name] for name in V2_NAMES if name in shapes}
    if len(shapes) != 4 or len(by_name) != 4:
        raise _mismatch('row-anchor', shapes, f'v2 expects four outputs named {V2_NAMES}')
    loc_row, loc_col, exist_row, exist_col = (by_name[name] for name in V2_NAMES)
    if (any(len(shape) != 4 for shape in by_name.values()) or exist_row[1] != 2
            or exist_col[1] != 2 or loc_row[2] != exist_row[2] or loc_col[2] != exist_col[2]):
        raise _mismatch('row-anchor', shapes, 'v2 shapes disagree')
    rows, columns = loc_row[2], loc_col[2]
    if 'row_anchors' in decode or 'column_anchors' in decode:
        row_anchors, column_anchors = decode.get('row_anchors', ()), decode.get(
            'column_anchors', ())
    else:
        row_anchors, column_anchors = default_v2_anchors(rows, columns)
    _check_anchors('row_anchors', row_anchors, rows)
    _check_anchors('column_anchors', column_anchors, columns)
    return V2_NAMES, {'version': 2, 'row_anchors': [float(a) for a in row_anchors],
                      'column_anchors': [float(a) for a in column_anchors]}, Preprocessing(
        normalize='imagenet', top_crop=V2_CROP.get((rows, columns), 0.0))


def _check_anchors(key: str, anchors: Any, count: int) -> None:
    if not isinstance(anchors, (list, tuple)) or len(anchors) != count or not all(
            isinstance(a, (int, float)) and not isinstance(a, bool) for a in anchors):
        raise LaneConfigError(f'decode.{key}: expected {count} numbers (one per output '
                              f'anchor), got {anchors!r}')


def _segmentation(shapes: dict[str, list[int]], decode: dict[str, Any]) -> Resolved:
    heads = {name: shape for name, shape in shapes.items() if len(shape) == 4 and shape[0] == 1}
    if not heads:
        raise _mismatch('segmentation', shapes, 'no [1, C, h, w] output')
    lane_output = decode.get('lane_output', next(iter(heads)))
    if lane_output not in heads:
        raise _mismatch('segmentation', shapes, f'lane_output {lane_output!r} is not a '
                        '[1, C, h, w] output')
    channels = heads[lane_output][1]
    channel = decode.get('lane_channel', 1 if channels > 1 else 0)
    activation = decode.get('activation', 'softmax' if channels > 1 else 'sigmoid')
    if activation not in ACTIVATIONS:
        raise LaneConfigError(f'decode.activation: {activation!r} is not one of '
                              f"{', '.join(ACTIVATIONS)}")
    if not isinstance(channel, int) or not 0 <= channel < channels or (
            activation == 'softmax' and channels < 2):
        raise LaneConfigError(f'decode.lane_channel: {channel!r} does not fit {lane_output} '
                              f'{heads[lane_output]} with {activation}')
    settings: dict[str, Any] = {'lane_output': lane_output, 'lane_channel': channel,
                                'activation': activation, 'drivable_output': '',
                                'drivable_channel': 1}
    drivable = decode.get('drivable_output', '')
    if drivable:
        if drivable not in heads or heads[drivable][1] < 2 or heads[drivable][2:] != heads[
                lane_output][2:]:
            raise _mismatch('segmentation', shapes, f'drivable_output {drivable!r} must be a '
                            "[1, C >= 2, h, w] output of the lane output's size")
        settings.update(drivable_output=drivable,
                        drivable_channel=int(decode.get('drivable_channel', 1)))
    outputs = ('LANE_PROBABILITY', 'DRIVABLE_MARGIN') if drivable else ('LANE_PROBABILITY',)
    return outputs, settings, Preprocessing()
