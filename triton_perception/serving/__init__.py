"""
Triton Inference Server: starting and watching it, talking to it, its model configs.

Owns: the tritonserver process and readiness (triton_server), how a server is configured
(server_config) and which binary runs with what command line and environment
(server_installation), the inference worker (triton_client) and what it composes: the
latest-frame slot (frame_slot), readiness checks with backoff (connection_health), request
inputs through gRPC or shared memory with its fallback (request_inputs), a camera's frames
written once for all its models (shared_frames), what a failed call means (request_errors),
what Triton returned checked against the ensembles' contract (output_checks) and
the worker's log (worker_log); config.pbtxt reading and step linking (model_config) and
TensorRT engine builds (engines).
Imports: `frames/`, `graphs/`, `system/`.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from triton_perception.system.faces import lazy_face

if TYPE_CHECKING:
    from triton_perception.serving.engines import build_engines, EngineBuildError
    from triton_perception.serving.grpc_client_check import (generated_requirements,
                                                             grpc_client_problem)
    from triton_perception.serving.model_config import (link_step_code, load_step_module,
                                                        parameters_of, read_config, step_config)
    from triton_perception.serving.output_checks import (check_detections, check_lane_maps,
                                                         check_lane_outputs, MalformedOutput)
    from triton_perception.serving.request_inputs import infer_inputs, Tensors
    from triton_perception.serving.server_config import (ENSEMBLES, PROFILES, ServerConfig,
                                                         ServerError)
    from triton_perception.serving.server_installation import (find_tritonserver, server_command,
                                                               server_environment)
    from triton_perception.serving.shared_frames import SharedFrames
    from triton_perception.serving.triton_client import (ClientSettings, InferenceWorker,
                                                         is_loopback, TlsOptions)
    from triton_perception.serving.triton_server import TritonServer
    from triton_perception.serving.worker_log import Log

__all__ = ['build_engines', 'check_detections', 'check_lane_maps', 'check_lane_outputs',
           'ClientSettings', 'EngineBuildError', 'ENSEMBLES', 'find_tritonserver',
           'generated_requirements', 'grpc_client_problem', 'infer_inputs', 'InferenceWorker',
           'is_loopback', 'link_step_code', 'load_step_module', 'Log',
           'MalformedOutput', 'parameters_of', 'PROFILES', 'read_config', 'server_command',
           'server_environment', 'ServerConfig', 'ServerError', 'SharedFrames', 'step_config',
           'Tensors', 'TlsOptions', 'TritonServer']
__getattr__ = lazy_face(__name__, {
    'engines': ('build_engines', 'EngineBuildError'),
    'grpc_client_check': ('generated_requirements', 'grpc_client_problem'),
    'model_config': ('link_step_code', 'load_step_module', 'parameters_of', 'read_config',
                     'step_config'),
    'output_checks': ('check_detections', 'check_lane_maps', 'check_lane_outputs',
                      'MalformedOutput'),
    'request_inputs': ('infer_inputs', 'Tensors'),
    'server_config': ('ENSEMBLES', 'PROFILES', 'ServerConfig', 'ServerError'),
    'server_installation': ('find_tritonserver', 'server_command', 'server_environment'),
    'shared_frames': ('SharedFrames',),
    'triton_client': ('ClientSettings', 'InferenceWorker', 'is_loopback', 'TlsOptions'),
    'triton_server': ('TritonServer',),
    'worker_log': ('Log',),
})
