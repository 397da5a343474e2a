"""The public face of lanes/lane_models/: read by type checkers and by faces.lazy_face."""
from triton_perception.lanes.lane_models.decode import (
    decode_lanes as decode_lanes,
    DecodeSettings as DecodeSettings,
)
from triton_perception.lanes.lane_models.lane_model_graph import (
    build_input_graph as build_input_graph,
    build_lane_model_graph as build_lane_model_graph,
    input_type_of as input_type_of,
    output_shapes as output_shapes,
)
from triton_perception.lanes.lane_models.layouts import resolve_layout as resolve_layout
from triton_perception.lanes.lane_models.spec import (
    installed_lane_models as installed_lane_models,
    lane_model_for as lane_model_for,
    LaneConfigError as LaneConfigError,
    LaneModel as LaneModel,
    LAYOUTS as LAYOUTS,
    preprocessing_from as preprocessing_from,
    read_lane_config as read_lane_config,
    SEGMENTATION_OUTPUTS as SEGMENTATION_OUTPUTS,
    shipped_lane_model as shipped_lane_model,
    SHIPPED_LANES as SHIPPED_LANES,
    write_lane_record as write_lane_record,
)
