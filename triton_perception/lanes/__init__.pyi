"""The public face of lanes/: read by type checkers and by faces.lazy_face."""
from triton_perception.lanes.lane_geometry import (
    NUM_POINTS as NUM_POINTS,
    postprocess as postprocess,
)
from triton_perception.lanes.lane_models import (
    decode_lanes as decode_lanes,
    DecodeSettings as DecodeSettings,
    build_input_graph as build_input_graph,
    build_lane_model_graph as build_lane_model_graph,
    input_type_of as input_type_of,
    output_shapes as output_shapes,
    resolve_layout as resolve_layout,
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
