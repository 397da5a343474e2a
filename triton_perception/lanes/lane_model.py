"""
What an installed lane model is, and what every lane layout is held to.

`models install --lanes` writes a LaneModel as NAME/lane_model.json beside the ensemble
(lane_records.py); lane_node reads it to know which outputs to ask for and how to decode them.
A layout (proposals.py, row_anchors.py, segmentation.py) is one class that satisfies LaneLayout:
its decode settings as typed fields, its checks against a model's output shapes, the outputs
it adds to the served graph and its decoder. layouts.py's LAYOUTS is the one table of them.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
import json
from typing import ClassVar, Mapping, NamedTuple, Protocol, TYPE_CHECKING, TypedDict

import numpy as np
from numpy.typing import NDArray

from triton_perception.errors import TritonPerceptionError
from triton_perception.lanes.lane_geometry import LaneResult

if TYPE_CHECKING:  # the graph builder loads onnx, which a node process never imports
    from triton_perception.graphs import GraphBuilder
    from triton_perception.system import JsonValue

LANE_RECORD = 'lane_model.json'
CHANNEL_ORDERS = ('rgb', 'bgr')
NORMALIZATIONS = ('unit', 'imagenet', 'none')
RESIZES = ('stretch', 'letterbox')
INPUT_TYPES = ('float32', 'float16')
SHIPPED_LANES = 'lane_detection'
SEGMENTATION_OUTPUTS = ('LANE_PROBABILITY', 'DRIVABLE_MARGIN')

Shapes = Mapping[str, list[int]]  # a model's outputs by name: their shapes, -1 where not fixed
# An installed model's outputs by name: uint8 maps (segmentation) or float32 tensors, by layout.
LaneOutputs = dict[str, NDArray[np.generic]]
# A lane config's `decode` section: parsed YAML, checked by the layout's `resolve`.
DecodeConfig = Mapping[str, 'JsonValue']


class DecodeRecord(TypedDict, total=False):
    """A lane_model.json's `decode` section: what a layout's `record` wrote, its fields only."""

    lane_output: str  # segmentation
    lane_channel: int
    activation: str
    drivable_output: str
    drivable_channel: int
    scores: str  # proposals
    version: int  # row anchors
    row_anchors: list[float]
    column_anchors: list[float]


class LaneConfigError(TritonPerceptionError, ValueError):
    """A lane model's settings are wrong; the message names the setting and what is accepted."""


class LayoutMismatch(LaneConfigError):
    """The model's outputs do not fit a layout: why (layouts.py adds what every layout expects)."""


@dataclass(frozen=True)
class Preprocessing:
    """
    How a frame becomes the model input (in the served graphs, never in model code).

    top_crop: fraction of the frame's rows cut from the top before resizing (CLRNet's
    cut_height / height, UFLD v2's 1 - crop_ratio). normalize: 'unit' = /255, 'imagenet' =
    /255 then ImageNet mean/std, 'none' = 0-255 floats.
    """

    channel_order: str = 'rgb'
    normalize: str = 'unit'
    top_crop: float = 0.0
    resize: str = 'stretch'


@dataclass(frozen=True, kw_only=True)
class DecodeSettings:
    """lane_node's run-time decode parameters, by keyword: three are thresholds of one type."""

    num_points: int = 20
    min_lane_length: float = 0.1   # fraction of the frame height a lane must span
    score_threshold: float = 0.5   # proposals: lane probability needed
    nms_distance_px: float = 50.0  # proposals: mean |dx| (model-input px) that makes a duplicate
    max_lanes: int = 8             # every layout: lanes kept, best score first


class InputMapping(NamedTuple):
    """
    Where the model input's pixels come from in the frame.

    The served graph's crop and stretch or letterbox, undone:
    frame = offset + (model - pad) * scale, per axis.
    """

    offset: NDArray[np.float64]  # (x, y) frame px
    pad: NDArray[np.float64]     # (x, y) model px
    scale: NDArray[np.float64]   # (x, y) frame px per model px
    content: tuple[int, int, int, int]  # model-input rows/cols holding the frame: y0, y1, x0, x1

    def to_frame(self, points: NDArray[np.float64]) -> NDArray[np.float64]:
        """Return model-input points [..., 2] (x, y, model px) as frame pixels."""
        frame: NDArray[np.float64] = self.offset + (points - self.pad) * self.scale
        return frame


class Resolved(NamedTuple):
    """What a layout reads from an installed model's output shapes."""

    outputs: tuple[str, ...]  # the ensemble's outputs, in decode order
    layout: LaneLayout  # the layout with its decode settings
    preprocessing: Preprocessing  # the layout's default preprocessing


class LaneLayout(Protocol):
    """
    One output layout of lane models, holding one model's decode settings.

    A layout is one class in a module of its own, a frozen dataclass whose fields are its
    settings (lane_model.json's `decode`), and one line in layouts.LAYOUTS.
    """

    name: ClassVar[str]            # as `models install --layout` and lane_model.json name it
    expects: ClassVar[str]         # the outputs it reads, for the error of a model that misfits
    config_keys: ClassVar[frozenset[str]]  # the `decode` keys a lane config may give
    uint8_outputs: ClassVar[bool]  # its ensemble returns uint8 maps, not FP32 tensors
    wraps_served: ClassVar[bool]   # it can be put around a model the repository already serves

    @classmethod
    def resolve(cls, shapes: Shapes, input_height: int, config: DecodeConfig) -> Resolved:
        """Check the model's output shapes; return its outputs, settings and preprocessing."""

    @classmethod
    def from_record(cls, record: DecodeRecord) -> LaneLayout:
        """Return the settings a lane_model.json's `decode` section holds."""

    def record(self) -> dict[str, object]:
        """Return the settings as lane_model.json's `decode` section."""

    def add_outputs(self, graph: GraphBuilder, shapes: Shapes, outputs: tuple[str, ...]) -> None:
        """Add the served graph's outputs (named `outputs`) after the network's own."""

    def decode(self, arrays: list[NDArray[np.generic]], model: LaneModel, mapping: InputMapping,
               frame_size: tuple[int, int], settings: DecodeSettings) -> LaneResult:
        """Return the ensemble's outputs (in model.outputs' order) as lanes in frame pixels."""


@dataclass(frozen=True)
class LaneModel:
    """An installed lane model, as lane_node and `models list` see it."""

    name: str
    input_width: int
    input_height: int
    input_type: str
    outputs: tuple[str, ...]          # the ensemble's outputs, in the order the decoder takes
    decode: LaneLayout                # its layout, with the model's decode settings
    preprocessing: Preprocessing = Preprocessing()
    source: str = ''
    sha256: str = ''

    @property
    def layout(self) -> str:
        """Return the name of the model's layout."""
        return self.decode.name

    @property
    def uint8_outputs(self) -> bool:
        """Tell whether the ensemble returns uint8 maps (else FP32 tensors)."""
        return self.decode.uint8_outputs

    def to_json(self) -> str:
        """Return the model as the JSON text of its lane record (ends with a newline)."""
        record = {'name': self.name, 'layout': self.layout, 'input_width': self.input_width,
                  'input_height': self.input_height, 'input_type': self.input_type,
                  'outputs': list(self.outputs), 'preprocessing': asdict(self.preprocessing),
                  'decode': self.decode.record(), 'source': self.source,
                  'sha256': self.sha256}
        return json.dumps(record, indent=2) + '\n'
