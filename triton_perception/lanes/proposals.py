"""
The proposals layout: LaneATT's rows, decoded as its `proposals_to_pred` and lane NMS do.

Each row (lucastabelini/LaneATT, lib/models/laneatt.py) is
``[score_background, score_lane, start_y, start_x, length, x_0 .. x_{S-1}]`` with S offsets
(72) at rows ``y_i = (1 - i / (S - 1)) * input_height``, i = 0 at the bottom; x-values are pixels
of the model input. ``start_y`` is normalised (start strip ``round(start_y * (S - 1))``),
``length`` is in strips. The scores are logits in ``forward``; some exports add the softmax.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import cast, ClassVar, NamedTuple, TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from triton_perception.lanes.lane_geometry import LaneResult
from triton_perception.lanes.lane_model import (DecodeConfig, DecodeRecord, DecodeSettings,
                                                InputMapping, LaneConfigError, LaneModel,
                                                LayoutMismatch, Preprocessing, Resolved, Shapes)
from triton_perception.lanes.polylines import finish

if TYPE_CHECKING:
    from triton_perception.graphs import GraphBuilder

FIXED_COLUMNS = 5  # two scores, start_y, start_x, length
SCORE_FORMATS = ('auto', 'logits', 'softmax')


class ProposalSettings(NamedTuple):
    """Decode thresholds; LaneATT's published CULane test settings are the defaults."""

    confidence: float = 0.5    # lane probability a proposal needs
    nms_distance: float = 50.0  # mean |dx| (model-input px) under which two lanes are one
    top_k: int = 4             # lanes kept, best first
    scores: str = 'auto'       # 'logits', 'softmax' or 'auto' (tell them apart per frame)


def lane_probability(rows: NDArray[np.float32], scores: str) -> NDArray[np.float64]:
    """
    Return the lane class probability of each row.

    'auto' takes the two score columns as probabilities when every row's pair already sums to
    one within 1e-3 and lies in [0, 1] (an export with the softmax in the graph), else as logits.
    """
    pair = rows[:, :2].astype(np.float64)
    if scores == 'auto':
        is_softmax = bool(len(pair)) and bool(np.all((pair >= 0) & (pair <= 1))) and bool(
            np.allclose(pair.sum(axis=1), 1.0, atol=1e-3))
        scores = 'softmax' if is_softmax else 'logits'
    if scores == 'softmax':
        return pair[:, 1]
    shifted = pair - pair.max(axis=1, keepdims=True)
    exponent = np.exp(shifted)
    probability: NDArray[np.float64] = exponent[:, 1] / exponent.sum(axis=1)
    return probability


def _row_span(row: NDArray[np.float32], strips: int, offsets: int) -> tuple[int, int]:
    """First and last offset index of a proposal, rounded as LaneATT's NMS kernel does."""
    start = int(row[2] * strips + 0.5)
    length = float(row[4])
    end = int(start + length - 1 + 0.5 - (1 if length - 1 < 0 else 0))
    return start, min(end, offsets - 1)


def overlaps(a: NDArray[np.float32], b: NDArray[np.float32], distance: float, strips: int) -> bool:
    """
    Tell whether two lanes overlap by LaneATT's lane 'IoU'.

    They do when the mean |dx| over the rows both lanes cover is below `distance`.

    Lanes that share no row never suppress each other.
    """
    offsets = strips + 1
    start_a, end_a = _row_span(a, strips, offsets)
    start_b, end_b = _row_span(b, strips, offsets)
    start, end = max(start_a, start_b), min(end_a, end_b)
    if end < start:
        return False
    rows = slice(FIXED_COLUMNS + start, FIXED_COLUMNS + end + 1)
    return float(np.abs(a[rows] - b[rows]).sum()) < distance * (end - start + 1)


def nms(rows: NDArray[np.float32], probability: NDArray[np.float64], distance: float, top_k: int,
        strips: int) -> list[int]:
    """Greedy by score, stopping at top_k (LaneATT's lib/nms)."""
    kept: list[int] = []
    for index in np.argsort(-probability, kind='stable'):
        if len(kept) >= top_k:
            break
        if not any(overlaps(rows[index], rows[other], distance, strips) for other in kept):
            kept.append(int(index))
    return kept


def proposal_points(row: NDArray[np.float32], input_width: int,
                    input_height: int) -> NDArray[np.float64]:
    """
    One proposal's points (x, y) in model-input pixels, bottom first (`proposals_to_pred`).

    Below its start the proposal is extended with its own x-values while they stay inside the
    image, as LaneATT does, so a lane reaches the bottom border when its regression says so.
    """
    xs = row[FIXED_COLUMNS:].astype(np.float64) / input_width
    offsets = len(xs)
    strips = offsets - 1
    start = int(round(float(row[2]) * strips))
    end = min(start + int(round(float(row[4]))) - 1, offsets - 1)
    anchor_ys = np.linspace(1.0, 0.0, offsets)
    below = xs[:start]
    inside = (below >= 0.0) & (below <= 1.0)
    keep_below = inside[::-1].cumprod()[::-1].astype(bool)
    xs = xs.copy()
    xs[end + 1:] = -2.0
    xs[:start][~keep_below] = -2.0
    valid = xs >= 0
    return np.stack([xs[valid] * input_width, anchor_ys[valid] * input_height], axis=1)


def decode_proposals(rows: NDArray[np.float32], input_width: int, input_height: int,
                     settings: ProposalSettings
                     ) -> tuple[list[NDArray[np.float64]], NDArray[np.float32]]:
    """[N, 5 + S] proposals -> polylines (model-input px, bottom first) and their scores."""
    if rows.ndim == 3 and rows.shape[0] == 1:
        rows = rows[0]
    if rows.ndim != 2 or rows.shape[1] <= FIXED_COLUMNS + 1:
        raise ValueError(f'proposals must be [N, 5 + offsets], got {list(rows.shape)}')
    probability = lane_probability(rows, settings.scores)
    candidates = np.nonzero(probability > settings.confidence)[0]
    strips = rows.shape[1] - FIXED_COLUMNS - 1
    kept = nms(rows[candidates], probability[candidates], settings.nms_distance,
               settings.top_k, strips)
    lanes, scores = [], []
    for index in candidates[kept]:
        points = proposal_points(rows[index], input_width, input_height)
        if len(points) > 1:
            lanes.append(points)
            scores.append(probability[index])
    return lanes, np.asarray(scores, dtype=np.float32)


@dataclass(frozen=True)
class Proposals:
    """The proposals layout (LaneATT): one output of rows, and how its scores are given."""

    name: ClassVar[str] = 'proposals'
    expects: ClassVar[str] = 'one output [N, 5 + offsets] or [1, N, 5 + offsets] (LaneATT)'
    config_keys: ClassVar[frozenset[str]] = frozenset({'scores'})
    uint8_outputs: ClassVar[bool] = False
    wraps_served: ClassVar[bool] = True

    scores: str = 'auto'  # 'logits', 'softmax' or 'auto' (told apart per frame)

    @classmethod
    def resolve(cls, shapes: Shapes, input_height: int, config: DecodeConfig) -> Resolved:
        """Check for one [N, 5 + offsets] output; LaneATT's BGR /255 input by default."""
        if len(shapes) != 1:
            raise LayoutMismatch('it reads one output')
        (name, shape), = shapes.items()
        rows = shape[1:] if len(shape) == 3 and shape[0] == 1 else shape
        if len(rows) != 2 or rows[1] < FIXED_COLUMNS + 2 or rows[0] < 1:
            raise LayoutMismatch('expected [N, 5 + offsets]')
        scores = config.get('scores', 'auto')
        if scores not in SCORE_FORMATS:
            raise LaneConfigError(f'decode.scores: {scores!r} is not one of '
                                  f"{', '.join(SCORE_FORMATS)}")
        return Resolved((name,), cls(scores), Preprocessing(channel_order='bgr', normalize='unit'))

    @classmethod
    def from_record(cls, record: DecodeRecord) -> Proposals:
        """Return the settings of a lane record's `decode`."""
        return cls(str(record.get('scores', 'auto')))

    def record(self) -> dict[str, object]:
        """Return the settings as a lane record's `decode`."""
        return {'scores': self.scores}

    def add_outputs(self, graph: GraphBuilder, shapes: Shapes, outputs: tuple[str, ...]) -> None:
        """Add the network's own output, as FP32."""
        from triton_perception.graphs import add_float_outputs  # noqa: PLC0415 (loads onnx)
        add_float_outputs(graph, outputs, shapes)

    def decode(self, arrays: list[NDArray[np.generic]], model: LaneModel, mapping: InputMapping,
               frame_size: tuple[int, int], settings: DecodeSettings) -> LaneResult:
        """Return the proposals above the score threshold, after LaneATT's NMS, as lanes."""
        lanes, scores = decode_proposals(
            cast(NDArray[np.float32], arrays[0]),  # add_outputs serves it as FP32
            model.input_width, model.input_height,
            ProposalSettings(confidence=settings.score_threshold,
                             nms_distance=settings.nms_distance_px, top_k=settings.max_lanes,
                             scores=self.scores))
        return finish([mapping.to_frame(points) for points in lanes], scores, frame_size,
                      settings)
