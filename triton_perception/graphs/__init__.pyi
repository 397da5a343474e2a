"""The public face of graphs/: read by type checkers and by faces.lazy_face."""
from triton_perception.graphs.build import build_graph as build_graph
from triton_perception.graphs.detection_graph import (
    build_detection_graph as build_detection_graph,
    HeadLayoutError as HeadLayoutError,
    inspect_head as inspect_head,
)
from triton_perception.graphs.fingerprint import builder_fingerprint as builder_fingerprint
from triton_perception.graphs.contracts import (
    FRAME_DIMS as FRAME_DIMS,
    FRAME_INPUT as FRAME_INPUT,
    HEAD_LAYOUTS as HEAD_LAYOUTS,
    HEALTH_STATISTICS as HEALTH_STATISTICS,
    LANE_RUNS_OUTPUTS as LANE_RUNS_OUTPUTS,
    MAX_RUNS as MAX_RUNS,
)
from triton_perception.graphs.frame_input import add_frame_input as add_frame_input
from triton_perception.graphs.graph_editing import (
    check_single_input as check_single_input,
    GraphBuilder as GraphBuilder,
    save_graph as save_graph,
)
from triton_perception.graphs.health_graph import (
    add_health_statistics as add_health_statistics,
    build_health_graph as build_health_graph,
)
from triton_perception.graphs.lane_graph import (
    add_compact_maps as add_compact_maps,
    add_float_outputs as add_float_outputs,
    add_run_outputs as add_run_outputs,
)
from triton_perception.graphs.onnx_target import (
    fit_to_target as fit_to_target,
    GraphTargetError as GraphTargetError,
    make_model as make_model,
    MAX_IR_VERSION as MAX_IR_VERSION,
    MAX_OPSET as MAX_OPSET,
    ONNXRUNTIME_FLOOR as ONNXRUNTIME_FLOOR,
    target_problems as target_problems,
)
from triton_perception.graphs.int8_scope import (
    at_quantization_opset as at_quantization_opset,
    float_step_problems as float_step_problems,
    network_nodes as network_nodes,
    QUANTIZED_OPSET as QUANTIZED_OPSET,
)
from triton_perception.graphs.tensorrt_qdq import (
    tensorrt_qdq_problems as tensorrt_qdq_problems,
)
