"""
ONNX graphs the model steps serve, built from upstream weights (model_repository/README.md).

Owns: the frame input (letterbox or resize as operators), the detection and lane graphs, the
camera health statistics graph, the operator helpers they share, what an installed graph was
built by (fingerprint) and which nodes of a served graph are INT8 (int8_scope). Pure onnx/numpy.
"""
from triton_perception.faces import lazy_face

__getattr__, __dir__, __all__ = lazy_face(__name__, __file__)
