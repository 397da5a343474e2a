"""
The row-anchor layout: Ultra-Fast-Lane-Detection v1 and v2, decoded as upstream's demos do.

v1 (cfzd/Ultra-Fast-Lane-Detection, demo.py): one output ``[1, griding_num + 1, rows, lanes]``.
Per row and lane, the softmax over the first griding_num bins gives an expected bin ``loc``
(counted from 1); when the argmax is the last bin there is no point. A lane needs more than two
points. The point is at ``x = loc * w_step - 1`` and ``y = row_anchor - 1`` in model-input pixels,
with ``w_step = (input_width - 1) / (griding_num - 1)`` (upstream's own pixel convention, kept so
that its published accuracy holds). Row anchors are per dataset (data/constant.py).

v2 (cfzd/Ultra-Fast-Lane-Detection-v2, demo.py `pred2coords`): outputs loc_row
``[1, grid_row, rows, 4]``, loc_col ``[1, grid_col, cols, 4]``, exist_row ``[1, 2, rows, 4]``
and exist_col ``[1, 2, cols, 4]``. Lanes 1 and 2 come from the row anchors (kept when more than
half their rows exist), lanes 0 and 3 from the column anchors (more than a quarter). A point is
the softmax expectation over the argmax bin and its two neighbours, plus 0.5, over
``grid - 1``; anchors are normalised to the whole frame.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import cast, ClassVar, NamedTuple, Sequence, TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from triton_perception.lanes.lane_geometry import LaneResult
from triton_perception.lanes.lane_model import (DecodeConfig, DecodeRecord, DecodeSettings,
                                                InputMapping, LaneConfigError, LaneModel,
                                                LayoutMismatch, Preprocessing, Resolved, Shapes)
from triton_perception.lanes.polylines import finish

if TYPE_CHECKING:
    from triton_perception.graphs import GraphBuilder

# data/constant.py of v1, in pixels of its 288-row input.
CULANE_ROW_ANCHORS = (121, 131, 141, 150, 160, 170, 180, 189, 199, 209, 219, 228, 238, 248, 258,
                      267, 277, 287)
TUSIMPLE_ROW_ANCHORS = tuple(range(64, 288, 4))
V1_ANCHOR_HEIGHT = 288
V2_ROW_LANES = (1, 2)
V2_COLUMN_LANES = (0, 3)
V2_LOCAL_WIDTH = 1
V2_NAMES = ('loc_row', 'loc_col', 'exist_row', 'exist_col')
V2_CROP = {(72, 81): 0.4, (56, 41): 0.2}  # 1 - crop_ratio of the CULane and TuSimple configs


class RowAnchorSettings(NamedTuple):
    """What the output shapes do not say: the anchors (and, for v2, its crop)."""

    version: int                     # 1 or 2
    row_anchors: tuple[float, ...]   # v1: model-input pixel rows; v2: fractions of frame height
    column_anchors: tuple[float, ...] = ()  # v2: fractions of frame width


def default_row_anchors(rows: int, input_height: int) -> tuple[float, ...]:
    """
    Return v1's published anchors for its CULane (18 rows) or TuSimple (56) models.

    They are scaled from its 288-row input to this model's input height.
    """
    for anchors in (CULANE_ROW_ANCHORS, TUSIMPLE_ROW_ANCHORS):
        if len(anchors) == rows:
            return tuple(float(a) * input_height / V1_ANCHOR_HEIGHT for a in anchors)
    raise ValueError(f'{rows} row anchors match neither CULane (18) nor TuSimple (56): give '
                     'row_anchors in the lane config (pixels of the model input)')


def default_v2_anchors(rows: int, columns: int) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """
    Return v2's row and column anchors, as fractions of the frame.

    These are its CULane/CurveLanes (72 x 81) and TuSimple (56 x 41) configs (configs/*.py:
    row_anchor, col_anchor).
    """
    if (rows, columns) == (72, 81):
        return tuple(np.linspace(0.42, 1.0, rows)), tuple(np.linspace(0.0, 1.0, columns))
    if (rows, columns) == (56, 41):
        return tuple(np.linspace(160, 710, rows) / 720), tuple(np.linspace(0.0, 1.0, columns))
    raise ValueError(f'{rows} row and {columns} column anchors match no published v2 config '
                     '(72 x 81 CULane, 56 x 41 TuSimple): give row_anchors and column_anchors '
                     'in the lane config (fractions of the frame)')


def _softmax(values: NDArray[np.float64], axis: int) -> NDArray[np.float64]:
    shifted = np.exp(values - values.max(axis=axis, keepdims=True))
    normalised: NDArray[np.float64] = shifted / shifted.sum(axis=axis, keepdims=True)
    return normalised


def decode_v1(output: NDArray[np.float32], input_width: int,
              row_anchors: Sequence[float]
              ) -> tuple[list[NDArray[np.float64]], NDArray[np.float32]]:
    """
    [1, griding_num + 1, rows, lanes] -> polylines in model-input px (bottom first), scores.

    A lane's score is the mean probability of its chosen bins' rows having a point.
    """
    logits = output[0].astype(np.float64) if output.ndim == 4 else output.astype(np.float64)
    bins, rows, lane_count = logits.shape
    if len(row_anchors) != rows:
        raise ValueError(f'{len(row_anchors)} row anchors for {rows} output rows')
    griding = bins - 1
    probability = _softmax(logits[:griding], axis=0)
    loc = (probability * np.arange(1, griding + 1)[:, None, None]).sum(axis=0)
    present = logits.argmax(axis=0) != griding
    point_probability = 1.0 - _softmax(logits, axis=0)[griding]
    width_step = (input_width - 1) / (griding - 1)
    lanes, scores = [], []
    for lane in range(lane_count):
        rows_with_point = np.nonzero(present[:, lane])[0]
        if len(rows_with_point) <= 2:
            continue
        xs = loc[rows_with_point, lane] * width_step - 1
        ys = np.asarray(row_anchors, dtype=np.float64)[rows_with_point] - 1
        order = np.argsort(-ys)
        lanes.append(np.stack([xs[order], ys[order]], axis=1))
        scores.append(point_probability[rows_with_point, lane].mean())
    return lanes, np.asarray(scores, dtype=np.float32)


def _local_expectation(locations: NDArray[np.float64], index: int) -> float:
    """Softmax expectation over the argmax bin and its neighbours (v2's local_width 1)."""
    grid = len(locations)
    window = np.arange(max(0, index - V2_LOCAL_WIDTH), min(grid - 1, index + V2_LOCAL_WIDTH) + 1)
    weights = _softmax(locations[window], axis=0)
    return float((weights * window).sum()) + 0.5


def decode_v2(loc_row: NDArray[np.float32 | np.float64],
              loc_col: NDArray[np.float32 | np.float64],
              exist_row: NDArray[np.float32 | np.float64],
              exist_col: NDArray[np.float32 | np.float64], settings: RowAnchorSettings
              ) -> tuple[list[NDArray[np.float64]], NDArray[np.float32]]:
    """
    Return the four v2 outputs -> polylines in *frame fractions* (x, y in [0, 1], bottom first).

    Scores are the mean existence probability of the lane's points.
    """
    row_locations, column_locations = loc_row[0].astype(np.float64), loc_col[0].astype(np.float64)
    row_existence, column_existence = (exist_row[0].astype(np.float64),
                                       exist_col[0].astype(np.float64))
    lanes, scores = [], []
    for lane_ids, loc, exist, anchors, along_rows in (
            (V2_ROW_LANES, row_locations, row_existence, settings.row_anchors, True),
            (V2_COLUMN_LANES, column_locations, column_existence, settings.column_anchors,
             False)):
        grid, anchor_count = loc.shape[0], loc.shape[1]
        if len(anchors) != anchor_count:
            raise ValueError(f'{len(anchors)} anchors for {anchor_count} output '
                             f"{'rows' if along_rows else 'columns'}")
        valid = exist.argmax(axis=0)
        existence = _softmax(exist, axis=0)[1]
        needed = anchor_count / 2 if along_rows else anchor_count / 4
        for lane in lane_ids:
            if lane >= loc.shape[2] or valid[:, lane].sum() <= needed:
                continue
            points = []
            for k in np.nonzero(valid[:, lane])[0]:
                position = _local_expectation(loc[:, k, lane], int(loc[:, k, lane].argmax()))
                along = position / (grid - 1)
                points.append((along, anchors[k]) if along_rows else (anchors[k], along))
            polyline = np.asarray(points, dtype=np.float64)
            lanes.append(polyline[np.argsort(-polyline[:, 1])])
            scores.append(existence[valid[:, lane].astype(bool), lane].mean())
    return lanes, np.asarray(scores, dtype=np.float32)


@dataclass(frozen=True)
class RowAnchors:
    """The row-anchor layout (UFLD v1 and v2): its version and anchors."""

    name: ClassVar[str] = 'row-anchor'
    expects: ClassVar[str] = ('one output [1, griding_num + 1, rows, lanes] (UFLD v1) or four '
                              'loc_row [1, grid, rows, 4], loc_col [1, grid, cols, 4], exist_row '
                              '[1, 2, rows, 4], exist_col [1, 2, cols, 4] (UFLD v2)')
    config_keys: ClassVar[frozenset[str]] = frozenset({'row_anchors', 'column_anchors'})
    uint8_outputs: ClassVar[bool] = False
    wraps_served: ClassVar[bool] = True

    version: int                      # 1 or 2
    row_anchors: tuple[float, ...]    # v1: model-input pixel rows; v2: fractions of frame height
    column_anchors: tuple[float, ...] = ()  # v2: fractions of frame width

    @classmethod
    def resolve(cls, shapes: Shapes, input_height: int, config: DecodeConfig) -> Resolved:
        """Tell v1 (one output) from v2 (four named outputs); the published anchors by default."""
        if len(shapes) == 1:
            (name, shape), = shapes.items()
            if len(shape) != 4 or shape[0] != 1 or shape[1] < 3:
                raise LayoutMismatch('v1 expects [1, griding_num + 1, rows, lanes]')
            anchors = config.get('row_anchors') or default_row_anchors(shape[2], input_height)
            return Resolved((name,), cls(1, _checked_anchors('row_anchors', anchors, shape[2])),
                            Preprocessing(normalize='imagenet'))
        by_name = {name: shapes[name] for name in V2_NAMES if name in shapes}
        if len(shapes) != 4 or len(by_name) != 4:
            raise LayoutMismatch(f'v2 expects four outputs named {V2_NAMES}')
        loc_row, loc_col, exist_row, exist_col = (by_name[name] for name in V2_NAMES)
        if (any(len(shape) != 4 for shape in by_name.values()) or exist_row[1] != 2
                or exist_col[1] != 2 or loc_row[2] != exist_row[2] or loc_col[2] != exist_col[2]):
            raise LayoutMismatch('v2 shapes disagree')
        rows, columns = loc_row[2], loc_col[2]
        row_anchors: object  # the lane config's (parsed YAML), else the published ones
        column_anchors: object
        if 'row_anchors' in config or 'column_anchors' in config:
            row_anchors, column_anchors = config.get('row_anchors', ()), config.get(
                'column_anchors', ())
        else:
            row_anchors, column_anchors = default_v2_anchors(rows, columns)
        checked_rows = _checked_anchors('row_anchors', row_anchors, rows)
        checked_columns = _checked_anchors('column_anchors', column_anchors, columns)
        return Resolved(V2_NAMES, cls(2, checked_rows, checked_columns), Preprocessing(
            normalize='imagenet', top_crop=V2_CROP.get((rows, columns), 0.0)))

    @classmethod
    def from_record(cls, record: DecodeRecord) -> RowAnchors:
        """Return the settings of a lane record's `decode`."""
        return cls(int(record['version']), tuple(record['row_anchors']),
                   tuple(record.get('column_anchors', ())))

    def record(self) -> dict[str, object]:
        """Return the settings as a lane record's `decode` (v1 has no column anchors)."""
        anchors: dict[str, object] = {'version': self.version,
                                      'row_anchors': list(self.row_anchors)}
        if self.version == 2:
            anchors['column_anchors'] = list(self.column_anchors)
        return anchors

    def add_outputs(self, graph: GraphBuilder, shapes: Shapes, outputs: tuple[str, ...]) -> None:
        """Add the network's own outputs, as FP32."""
        from triton_perception.graphs import add_float_outputs  # noqa: PLC0415 (loads onnx)
        add_float_outputs(graph, outputs, shapes)

    def decode(self, arrays: list[NDArray[np.generic]], model: LaneModel, mapping: InputMapping,
               frame_size: tuple[int, int], settings: DecodeSettings) -> LaneResult:
        """Return v1's or v2's lanes in frame pixels."""
        floats = [cast(NDArray[np.float32], array) for array in arrays]  # add_outputs: FP32
        if self.version == 1:
            lanes, scores = decode_v1(floats[0], model.input_width, self.row_anchors)
        else:
            lanes, scores = decode_v2(floats[0], floats[1], floats[2], floats[3],
                                      RowAnchorSettings(2, self.row_anchors, self.column_anchors))
            lanes = [_frame_fractions_to_model(points, frame_size, mapping) for points in lanes]
        return finish([mapping.to_frame(points) for points in lanes], scores, frame_size,
                      settings)


def _checked_anchors(key: str, anchors: object, count: int) -> tuple[float, ...]:
    """Return `anchors` as floats, or raise LaneConfigError unless they are `count` numbers."""
    if not isinstance(anchors, (list, tuple)) or len(anchors) != count or not all(
            isinstance(a, (int, float)) and not isinstance(a, bool) for a in anchors):
        raise LaneConfigError(f'decode.{key}: expected {count} numbers (one per output '
                              f'anchor), got {anchors!r}')
    return tuple(float(a) for a in anchors)


def _frame_fractions_to_model(points: NDArray[np.float64], frame_size: tuple[int, int],
                              mapping: InputMapping) -> NDArray[np.float64]:
    """UFLD v2 gives frame fractions; take them to model-input px so one mapping serves all."""
    frame = points * np.array([frame_size[1], frame_size[0]], dtype=np.float64)
    model_pixels: NDArray[np.float64] = (frame - mapping.offset) / mapping.scale + mapping.pad
    return model_pixels
