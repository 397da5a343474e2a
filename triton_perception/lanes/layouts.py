"""
The one table of lane layouts: each layout's name and its class (proposals.py, ...).

A layout's class holds its decode settings, its checks against a model's output shapes, the
outputs it adds to the served graph and its decoder (lane_model.LaneLayout). A new layout is a
module with its class and one line in LAYOUTS. A layout that does not fit the shapes is an
error naming the shapes and every layout's expected shapes, so a user learns at install, not
at the first frame, what is wrong.
"""
from __future__ import annotations

from typing import Mapping

from triton_perception.lanes.lane_model import (DecodeConfig, LaneConfigError, LaneLayout,
                                                LayoutMismatch, Resolved, Shapes)
from triton_perception.lanes.proposals import Proposals
from triton_perception.lanes.row_anchors import RowAnchors
from triton_perception.lanes.segmentation import Segmentation

LAYOUTS: Mapping[str, type[LaneLayout]] = {
    Proposals.name: Proposals,
    RowAnchors.name: RowAnchors,
    Segmentation.name: Segmentation,
}
SUPPORTED = '; '.join(f'{name}: {layout.expects}' for name, layout in LAYOUTS.items())


class LaneLayoutError(LaneConfigError):
    """The model's outputs do not fit the layout asked for."""


def layout_named(name: str) -> type[LaneLayout]:
    """Return the layout of that name (a LaneConfigError names the layouts there are)."""
    if name not in LAYOUTS:
        raise LaneConfigError(f'unknown layout {name!r}; supported: {SUPPORTED}')
    return LAYOUTS[name]


def resolve_layout(name: str, shapes: Shapes, input_height: int,
                   config: DecodeConfig) -> Resolved:
    """Return (outputs in decode order, the layout's settings, default preprocessing)."""
    layout = layout_named(name)
    unknown = set(config) - layout.config_keys
    if unknown:
        raise LaneConfigError(f'decode: unknown keys {sorted(unknown)} for the {name} layout; '
                              f'known: {sorted(layout.config_keys)}')
    try:
        return layout.resolve(shapes, input_height, config)
    except LayoutMismatch as mismatch:
        found = ', '.join(f'{output} {shape}' for output, shape in shapes.items())
        raise LaneLayoutError(f'outputs {found} do not fit the {name} layout ({mismatch}); '
                              f'supported: {SUPPORTED}') from None
