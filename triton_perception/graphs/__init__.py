"""
ONNX graphs the model steps serve, built from upstream weights (model_repository/README.md).

Owns: the frame input (letterbox or resize as operators), the detection and lane graphs, the
operator helpers they share, and what an installed graph was built by (fingerprint). Pure
onnx/numpy.
Imports: nothing of the package.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from triton_perception.system.faces import lazy_face

if TYPE_CHECKING:
    from triton_perception.graphs.build import build_graph
    from triton_perception.graphs.detection_graph import (build_detection_graph, HeadLayoutError,
                                                          inspect_head)
    from triton_perception.graphs.fingerprint import builder_fingerprint
    from triton_perception.graphs.frame_input import add_frame_input, FRAME_DIMS, FRAME_INPUT
    from triton_perception.graphs.graph_editing import check_single_input, GraphBuilder, save_graph
    from triton_perception.graphs.head_layouts import HEAD_LAYOUTS
    from triton_perception.graphs.lane_graph import add_compact_maps
    from triton_perception.graphs.onnx_target import (GraphTargetError, make_model, MAX_IR_VERSION,
                                                      MAX_OPSET, ONNXRUNTIME_FLOOR,
                                                      target_problems)

__all__ = ['add_compact_maps', 'add_frame_input', 'build_detection_graph', 'build_graph',
           'builder_fingerprint', 'check_single_input', 'FRAME_DIMS', 'FRAME_INPUT', 'GraphBuilder',
           'GraphTargetError', 'HEAD_LAYOUTS', 'HeadLayoutError', 'inspect_head', 'make_model',
           'MAX_IR_VERSION', 'MAX_OPSET', 'ONNXRUNTIME_FLOOR', 'save_graph', 'target_problems']
__getattr__ = lazy_face(__name__, {
    'build': ('build_graph',),
    'detection_graph': ('build_detection_graph', 'HeadLayoutError', 'inspect_head'),
    'fingerprint': ('builder_fingerprint',),
    'frame_input': ('add_frame_input', 'FRAME_DIMS', 'FRAME_INPUT'),
    'graph_editing': ('check_single_input', 'GraphBuilder', 'save_graph'),
    'head_layouts': ('HEAD_LAYOUTS',),
    'lane_graph': ('add_compact_maps',),
    'onnx_target': ('GraphTargetError', 'make_model', 'MAX_IR_VERSION', 'MAX_OPSET',
                    'ONNXRUNTIME_FLOOR', 'target_problems'),
})
