"""
Triton Inference Server: starting and watching it, talking to it, its model configs.

Owns: the tritonserver process and readiness (triton_server), the inference worker with its
latest-frame slot, shared memory and backoff (triton_client), config.pbtxt reading and step
linking (model_config) and TensorRT engine builds (engines). May import system/, frames/, graphs/.
"""
