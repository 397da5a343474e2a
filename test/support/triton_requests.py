"""One inference request to a tritonserver over gRPC, as a client outside ROS sends it."""
from __future__ import annotations

import numpy as np
import tritonclient.grpc as grpcclient
from tritonclient.utils import np_to_triton_dtype


def infer(client, model: str, image: np.ndarray, outputs: tuple[str, ...],
          **others: np.ndarray) -> dict:
    """One request: IMAGE plus any other [1] inputs given by name."""
    inputs = []
    for name, value in {'IMAGE': image, **others}.items():
        tensor = grpcclient.InferInput(name, list(value.shape), np_to_triton_dtype(value.dtype))
        tensor.set_data_from_numpy(value)
        inputs.append(tensor)
    requested = [grpcclient.InferRequestedOutput(name) for name in outputs]
    result = client.infer(model, inputs, outputs=requested)
    return {name: result.as_numpy(name) for name in outputs}
