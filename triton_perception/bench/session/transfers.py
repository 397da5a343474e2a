"""
Bytes one frame moves across process boundaries in each case.

Client -> server (the frame and the request's thresholds), between the ensemble's steps (Python
backend stub -> Triton -> model step), and server -> client (the ensemble's outputs), from the model
configs' static shapes.
"""
from __future__ import annotations

from pathlib import Path
from typing import Iterable, TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray
from tritonclient.grpc import model_config_pb2

from triton_perception.serving import step_config

if TYPE_CHECKING:
    from tritonclient.grpc.model_config_pb2 import ModelInput, ModelOutput

DTYPE_BYTES = {model_config_pb2.TYPE_UINT8: 1, model_config_pb2.TYPE_INT8: 1,
               model_config_pb2.TYPE_FP16: 2, model_config_pb2.TYPE_FP32: 4,
               model_config_pb2.TYPE_INT32: 4, model_config_pb2.TYPE_INT64: 8}


def tensor_bytes(tensors: Iterable[ModelInput] | Iterable[ModelOutput]) -> int:
    """Bytes of config tensors with static shapes (all of the served steps' are)."""
    return int(sum(np.prod(list(tensor.dims)) * DTYPE_BYTES[tensor.data_type]
                   for tensor in tensors))


def transfer_bytes(repository: Path, model: str, frame: NDArray[np.uint8],
                   request_bytes: int) -> dict[str, int]:
    """
    Return the bytes one frame moves: client to server, between steps, server to client.

    `request_bytes` are the request's inputs besides the frame. Between steps counts the inputs
    of the ensemble's last step, as the CPU profile configures them.
    """
    ensemble = step_config(repository, model)
    last = ensemble.ensemble_scheduling.step[-1].model_name
    return {'client_to_server': int(frame.nbytes) + request_bytes,
            'between_steps': tensor_bytes(step_config(repository, last, 'cpu').input),
            'server_to_client': tensor_bytes(ensemble.output)}


def ensemble_steps(repository: Path, model: str) -> tuple[str, ...]:
    """Return the models an ensemble runs, in order; a model that is no ensemble is its one step."""
    steps = tuple(step.model_name for step in
                  step_config(repository, model).ensemble_scheduling.step)
    return steps or (model,)
