"""What an installed graph was built by: a digest of the graph builders' own code."""
from __future__ import annotations

import hashlib
from pathlib import Path


# What selects the INT8 nodes and what checks the TensorRT graph's QDQ (`models quantize`) build
# no float graph: the INT8 records keep their own digest of them.
NOT_BUILDERS = ('int8_scope.py', 'tensorrt_qdq.py')


def builder_fingerprint() -> str:
    """Digest of the graph builders' own code: an installed graph built by other code is stale."""
    digest = hashlib.sha256()
    for path in sorted(Path(__file__).parent.glob('*.py')):
        if path.name not in NOT_BUILDERS:
            digest.update(path.name.encode() + b'\0' + path.read_bytes())
    return digest.hexdigest()[:16]
