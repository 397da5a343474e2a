"""
`bench --glue`: what the nodes themselves cost per frame, set against a bare floor node.

Owns: the run and its cases' measurement (glue_bench), which cases a run holds, the frame it
publishes and each node's frame accounting (glue_cases), the constant graphs Triton serves in
the models' contracts (constant_graphs), the report's shape (glue_schema) and its table and
targets (glue_report), and with --publish-cost what each output message kind costs built and
published as a message and as bytes (publish_cost). It stands on bench/session/ through its face.
"""
from triton_perception.faces import lazy_face

__getattr__, __dir__, __all__ = lazy_face(__name__, __file__)
