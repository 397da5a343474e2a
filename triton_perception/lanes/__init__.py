"""
Lanes from a lane model's outputs: polylines, ego sides and the drivable area.

Owns: the shipped model's decoding (lane_geometry), ego-relative sides (lane_sides) and other
lane models' layouts, specs and decoding (lane_models/).
Public names: lane_geometry.postprocess and LaneResult, lane_models.decode.decode_lanes.
Imports: `frames/`, `graphs/`.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from triton_perception.system.faces import lazy_face

if TYPE_CHECKING:
    from triton_perception.lanes.lane_geometry import NUM_POINTS, postprocess
    from triton_perception.lanes.lane_models.decode import decode_lanes, DecodeSettings
    from triton_perception.lanes.lane_models.lane_model_graph import (build_input_graph,
                                                                      build_lane_model_graph,
                                                                      input_type_of, output_shapes)
    from triton_perception.lanes.lane_models.layouts import resolve_layout
    from triton_perception.lanes.lane_models.spec import (installed_lane_models, lane_model_for,
                                                          LaneConfigError, LaneModel, LAYOUTS,
                                                          preprocessing_from, read_lane_config,
                                                          SEGMENTATION_OUTPUTS, shipped_lane_model,
                                                          SHIPPED_LANES, write_lane_record)

__all__ = ['build_input_graph', 'build_lane_model_graph', 'decode_lanes', 'DecodeSettings',
           'input_type_of', 'installed_lane_models', 'lane_model_for', 'LaneConfigError',
           'LaneModel', 'LAYOUTS', 'NUM_POINTS', 'output_shapes', 'postprocess',
           'preprocessing_from', 'read_lane_config', 'resolve_layout', 'SEGMENTATION_OUTPUTS',
           'shipped_lane_model', 'SHIPPED_LANES', 'write_lane_record']
__getattr__ = lazy_face(__name__, {
    'lane_geometry': ('NUM_POINTS', 'postprocess'),
    'lane_models.decode': ('decode_lanes', 'DecodeSettings'),
    'lane_models.lane_model_graph': ('build_input_graph', 'build_lane_model_graph',
                                     'input_type_of', 'output_shapes'),
    'lane_models.layouts': ('resolve_layout',),
    'lane_models.spec': ('installed_lane_models', 'lane_model_for', 'LaneConfigError',
                         'LaneModel', 'LAYOUTS', 'preprocessing_from', 'read_lane_config',
                         'SEGMENTATION_OUTPUTS', 'shipped_lane_model', 'SHIPPED_LANES',
                         'write_lane_record'),
})
