"""
ONNX graphs the model steps serve, built from upstream weights (model_repository/README.md).

Owns: the frame input (letterbox or resize as operators), the detection and lane graphs and
the operator helpers they share. Imports nothing of the package but itself (pure onnx/numpy).
Public names: builder_fingerprint here; build.build_graph, detection_graph.build_detection_graph.
"""
from __future__ import annotations

import hashlib
from pathlib import Path


def builder_fingerprint() -> str:
    """Digest of the graph builders' own code: an installed graph built by other code is stale."""
    digest = hashlib.sha256()
    for path in sorted(Path(__file__).parent.glob('*.py')):
        digest.update(path.name.encode() + b'\0' + path.read_bytes())
    return digest.hexdigest()[:16]
