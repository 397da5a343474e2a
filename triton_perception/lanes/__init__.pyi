"""The public face of lanes/: read by type checkers and by faces.lazy_face."""
from triton_perception.lanes.decode import decode_lanes as decode_lanes
from triton_perception.lanes.lane_geometry import (
    NUM_POINTS as NUM_POINTS,
    postprocess as postprocess,
)
from triton_perception.lanes.lane_model import (
    DecodeSettings as DecodeSettings,
    LaneConfigError as LaneConfigError,
    LaneModel as LaneModel,
    SEGMENTATION_OUTPUTS as SEGMENTATION_OUTPUTS,
    SHIPPED_LANES as SHIPPED_LANES,
)
from triton_perception.lanes.lane_model_graph import (
    build_input_graph as build_input_graph,
    build_lane_model_graph as build_lane_model_graph,
    input_type_of as input_type_of,
    output_shapes as output_shapes,
)
from triton_perception.lanes.lane_records import (
    installed_lane_models as installed_lane_models,
    lane_model_for as lane_model_for,
    preprocessing_from as preprocessing_from,
    read_lane_config as read_lane_config,
    shipped_lane_model as shipped_lane_model,
    write_lane_record as write_lane_record,
)
from triton_perception.lanes.layouts import (
    LAYOUTS as LAYOUTS,
    resolve_layout as resolve_layout,
)
from triton_perception.lanes.run_decoding import (
    dropped_runs as dropped_runs,
    postprocess_runs as postprocess_runs,
)
