"""
The segmentation layout: a lane channel (and optionally a drivable-area head) per pixel.

TwinLiteNet and its kin. The served graph turns the chosen channels into logit margins and
returns the compact uint8 maps of the shipped lane graph (graphs/lane_graph.py); the shipped
`lane_detection` returns the lane mask's runs instead (run_decoding.py). Both decode to lanes
with lane_geometry's pieces, grouping and sides.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import cast, ClassVar, TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from triton_perception.graphs import LANE_RUNS_OUTPUTS
from triton_perception.lanes.lane_geometry import drivable_area, LaneResult, postprocess
from triton_perception.lanes.lane_model import (DecodeConfig, DecodeRecord, DecodeSettings,
                                                InputMapping, LaneConfigError, LaneModel,
                                                LayoutMismatch, Preprocessing, Resolved,
                                                SEGMENTATION_OUTPUTS, Shapes)
from triton_perception.lanes.polylines import best_lanes
from triton_perception.lanes.run_decoding import postprocess_runs

if TYPE_CHECKING:
    from triton_perception.graphs import GraphBuilder

ACTIVATIONS = ('softmax', 'sigmoid')


@dataclass(frozen=True)
class Segmentation:
    """The segmentation layout: which output and channel hold the lanes, and the drivable area."""

    name: ClassVar[str] = 'segmentation'
    expects: ClassVar[str] = 'outputs [1, C, h, w] (lane channel, optional drivable-area output)'
    config_keys: ClassVar[frozenset[str]] = frozenset({
        'lane_output', 'lane_channel', 'activation', 'drivable_output', 'drivable_channel'})
    uint8_outputs: ClassVar[bool] = True
    wraps_served: ClassVar[bool] = False  # its compact maps are built into the served graph

    lane_output: str
    lane_channel: int
    activation: str                 # of the lane output's channels: softmax or sigmoid
    drivable_output: str = ''       # '' for a model without a drivable-area head
    drivable_channel: int = 1

    @classmethod
    def resolve(cls, shapes: Shapes, input_height: int, config: DecodeConfig) -> Resolved:
        """Choose the lane output and channel (the first [1, C, h, w] output, channel 1 of 2+)."""
        heads = {name: shape for name, shape in shapes.items()
                 if len(shape) == 4 and shape[0] == 1}
        if not heads:
            raise LayoutMismatch('no [1, C, h, w] output')
        lane_output = config.get('lane_output', next(iter(heads)))
        if lane_output not in heads:
            raise LayoutMismatch(f'lane_output {lane_output!r} is not a [1, C, h, w] output')
        channels = heads[lane_output][1]
        channel = config.get('lane_channel', 1 if channels > 1 else 0)
        activation = config.get('activation', 'softmax' if channels > 1 else 'sigmoid')
        if activation not in ACTIVATIONS:
            raise LaneConfigError(f'decode.activation: {activation!r} is not one of '
                                  f"{', '.join(ACTIVATIONS)}")
        if not isinstance(channel, int) or not 0 <= channel < channels or (
                activation == 'softmax' and channels < 2):
            raise LaneConfigError(f'decode.lane_channel: {channel!r} does not fit {lane_output} '
                                  f'{heads[lane_output]} with {activation}')
        drivable = config.get('drivable_output', '')
        if not drivable:
            return Resolved(SEGMENTATION_OUTPUTS[:1], cls(lane_output, channel, activation),
                            Preprocessing())
        if drivable not in heads or heads[drivable][1] < 2 or heads[drivable][2:] != heads[
                lane_output][2:]:
            raise LayoutMismatch(f'drivable_output {drivable!r} must be a [1, C >= 2, h, w] '
                                 "output of the lane output's size")
        drivable_channel = config.get('drivable_channel', 1)
        if not isinstance(drivable_channel, (int, float, str)):  # what int() takes of YAML
            raise LaneConfigError(f'decode.drivable_channel: {drivable_channel!r} is not a '
                                  'channel number')
        return Resolved(SEGMENTATION_OUTPUTS, cls(lane_output, channel, activation, drivable,
                                                  int(drivable_channel)), Preprocessing())

    @classmethod
    def from_record(cls, record: DecodeRecord) -> Segmentation:
        """Return the settings of a lane record's `decode`."""
        return cls(str(record['lane_output']), int(record['lane_channel']),
                   str(record['activation']), str(record.get('drivable_output', '')),
                   int(record.get('drivable_channel', 1)))

    def record(self) -> dict[str, object]:
        """Return the settings as a lane record's `decode`."""
        return asdict(self)

    def add_outputs(self, graph: GraphBuilder, shapes: Shapes, outputs: tuple[str, ...]) -> None:
        """Add the lane (and drivable) logit margins as the compact uint8 maps."""
        from triton_perception.graphs import add_compact_maps  # noqa: PLC0415 (loads onnx)
        lane = _margin(graph, self.lane_output, shapes[self.lane_output], self.lane_channel,
                       self.activation)
        drivable = (_margin(graph, self.drivable_output, shapes[self.drivable_output],
                            self.drivable_channel, 'softmax') if self.drivable_output else None)
        head = shapes[self.lane_output]
        add_compact_maps(graph, lane, drivable, head[-2], head[-1])

    def decode(self, arrays: list[NDArray[np.generic]], model: LaneModel, mapping: InputMapping,
               frame_size: tuple[int, int], settings: DecodeSettings) -> LaneResult:
        """Decode the served graph's runs, or its compact maps (model resolution)."""
        return best_lanes(_lanes(arrays, model, mapping, frame_size, settings),
                          settings.max_lanes)


def _margin(graph: GraphBuilder, head: str, shape: list[int], channel: int,
            activation: str) -> str:
    """
    [1, C, h, w] head -> [h, w] logit margin of `channel` (positive where it wins): softmax.

    Its logit minus the largest other one; sigmoid: the logit itself.
    """
    chosen = graph.slice(head, channel, channel + 1, axis=1)
    if activation == 'softmax':
        others = [graph.slice(head, c, c + 1, axis=1) for c in range(shape[1]) if c != channel]
        rival = others[0] if len(others) == 1 else graph.node(
            'ReduceMax', [graph.node('Concat', others, axis=1)], axes=[1], keepdims=1)
        chosen = graph.node('Sub', [chosen, rival])
    margin: str = graph.node('Squeeze', [chosen], axes=[0, 1])
    return margin


def _lanes(arrays: list[NDArray[np.generic]], model: LaneModel, mapping: InputMapping,
           frame_size: tuple[int, int], settings: DecodeSettings) -> LaneResult:
    """Decode the served segmentation graph's runs, or its compact maps (model resolution)."""
    if model.outputs == LANE_RUNS_OUTPUTS:  # the shipped graph: no crop, a stretch
        # graphs/lane_runs.py's outputs: int32 runs and counts, the uint8 drivable area
        return postprocess_runs(cast(NDArray[np.int32], arrays[0]),
                                cast(NDArray[np.int32], arrays[1]),
                                cast(NDArray[np.uint8], arrays[2]) if len(arrays) > 2 else None,
                                model.input_width, frame_size,
                                settings.num_points, settings.min_lane_length)
    probability = cast(NDArray[np.uint8], arrays[0])  # add_compact_maps: uint8 maps
    has_drivable = len(arrays) > 1
    margin = cast(NDArray[np.uint8], arrays[1]) if has_drivable else np.zeros_like(probability)
    if mapping.content == (0, model.input_height, 0, model.input_width) and not mapping.offset[1]:
        result = postprocess(probability, margin, frame_size, settings.num_points,
                             settings.min_lane_length)
        return result if has_drivable else result._replace(drivable_area=None)
    y0, y1, x0, x1 = (int(round(v * probability.shape[0] / model.input_height)) if i < 2 else
                      int(round(v * probability.shape[1] / model.input_width))
                      for i, v in enumerate(mapping.content))
    content_size = (frame_size[0] - int(mapping.offset[1]), frame_size[1])
    result = postprocess(np.ascontiguousarray(probability[y0:y1, x0:x1]),
                         np.ascontiguousarray(margin[y0:y1, x0:x1]), content_size,
                         settings.num_points, settings.min_lane_length)
    lanes = result.lanes + np.array([0.0, mapping.offset[1]], dtype=np.float32)
    area = np.zeros(frame_size, np.uint8)
    area[frame_size[0] - content_size[0]:] = drivable_area(
        np.ascontiguousarray(margin[y0:y1, x0:x1]), *content_size)
    return result._replace(lanes=lanes, drivable_area=area if has_drivable else None)
