"""
The request side of Triton: frames sent, answers delivered, every frame settled.

Owns: one way to send a request (request_sending), the inference workers (triton_client for one
model, joined_worker for a camera's models in one request, camera_batches for a process's
cameras in one request, member_worker the nodes' face of them), what they compose: the
latest-frame and joined slots (frame_slot, joined_slot), readiness checks with backoff
(connection_health), request inputs through gRPC or shared memory with its fallback
(request_inputs, shared_memory_region, shared_frames, output_memory), what a failed call means
(request_errors), a frame's fate around its request (frame_fates), what Triton returned checked
against the ensembles' contract (output_checks), which camera's request goes next under
overload (request_gate), the installed gRPC client's check (grpc_client_check) and the
workers' log (worker_log). It reads the server's side through its face only.
"""
from triton_perception.faces import lazy_face

__getattr__, __dir__, __all__ = lazy_face(__name__, __file__)
