"""
The server's side of Triton: starting and watching tritonserver, its configuration and models.

Owns: the tritonserver process and readiness (triton_server), how a server is configured
(server_config) and which binary runs with what command line and environment
(server_installation), config.pbtxt reading and step linking (model_config), the CPU and INT8
views of the model repository (profile_repository), the batched ensembles written from
`perception` (batched_ensembles) and TensorRT engine builds (engines). Imports nothing of the
request side.
"""
from triton_perception.faces import lazy_face

__getattr__, __dir__, __all__ = lazy_face(__name__, __file__)
