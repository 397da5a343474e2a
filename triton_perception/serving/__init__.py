"""
Triton Inference Server: starting and watching it, talking to it, its model configs.

Owns: the tritonserver process and readiness (triton_server), how a server is configured
(server_config) and which binary runs with what command line and environment
(server_installation), the inference worker (triton_client) and what it composes: the
latest-frame slot (frame_slot), readiness checks with backoff (connection_health), request
inputs through gRPC or shared memory with its fallback (request_inputs), a camera's frames
written once for all its models (shared_frames), what a failed call means (request_errors),
what Triton returned checked against the ensembles' contract (output_checks) and
the worker's log (worker_log); config.pbtxt reading and step linking (model_config),
TensorRT engine builds (engines), which camera's request goes next when a process has
more frames than it can serve (request_gate), and what `server --check` finds and misses on
this machine (server_check).
"""
from triton_perception.faces import lazy_face

__getattr__, __dir__, __all__ = lazy_face(__name__, __file__)
