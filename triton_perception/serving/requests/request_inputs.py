"""
The tensors of one inference request: in the gRPC message, or the frame through shared memory.

Shared memory saves serialising the frame when the server is on this host; when the server
refuses it (e.g. it is on another host), every request thread of the worker falls back to gRPC.
"""
from __future__ import annotations

from typing import Any, Protocol

import numpy as np
from numpy.typing import NDArray
import tritonclient.grpc as grpcclient
from tritonclient.utils import InferenceServerException, np_to_triton_dtype

from triton_perception.serving.requests.request_errors import is_unreachable
from triton_perception.serving.requests.shared_memory_region import SharedMemoryRegion
from triton_perception.serving.requests.worker_log import Log

# A request's or a result's tensors by name; their dtypes are each model's (uint8 IMAGE,
# float32 and int32 outputs ...), checked where they are read (serving.requests.output_checks).
Tensors = dict[str, NDArray[Any]]
SHARED_INPUT = 'IMAGE'


def infer_inputs(tensors: Tensors, suffix: str = '') -> list[grpcclient.InferInput]:
    """Return gRPC inputs carrying each array's bytes in the request, in C order; names+suffix."""
    inputs = []
    for name, array in tensors.items():
        tensor = grpcclient.InferInput(name + suffix, list(array.shape),
                                       np_to_triton_dtype(array.dtype))
        tensor.set_data_from_numpy(np.ascontiguousarray(array))
        inputs.append(tensor)
    return inputs


class FrameMemory(Protocol):
    """Where a request thread's frame goes in shared memory: a region of its own, or shared."""

    def tensor(self, client: grpcclient.InferenceServerClient, array: NDArray[np.uint8],
               generation: int, name: str = SHARED_INPUT) -> grpcclient.InferInput:
        """Return input `name` reading `array` from shared memory (written there if need be)."""

    def release(self) -> None:
        """Say that the request which read the last `tensor` has been answered."""

    def forget_registration(self) -> None:
        """Forget the registration the server lost; the next `tensor` registers again."""

    def close(self, client: grpcclient.InferenceServerClient | None) -> None:
        """Give the memory up (the request thread ends or shared memory was refused)."""


class SharedMemoryInput(SharedMemoryRegion):
    """
    The frame tensor through Triton system shared memory instead of the gRPC message.

    One region per request thread (or per camera, shared: shared_frames), labelled after
    the model.
    """

    def tensor(self, client: grpcclient.InferenceServerClient, array: NDArray[np.uint8],
               generation: int, name: str = SHARED_INPUT) -> grpcclient.InferInput:
        """
        Copy `array` into the region and return the input that points Triton at it.

        `client`: the gRPC client of the server that reads the region.
        `array`: the frame tensor.
        `generation`: the worker's connection count; it changes when the server restarts.
        `name`: the input's name (IMAGE, or a camera's IMAGE_i in a batched request).

        Returns an InferInput `name` with its shape and dtype, set to read the shared memory.
        """
        self.prepare(client, array.nbytes, generation)
        self.write(array)
        return self.input_for(array, name)

    def write(self, array: NDArray[np.uint8]) -> None:
        """Copy `array` into the start of the region (made large enough by `prepare`)."""
        assert array.nbytes <= self.size  # prepare() first
        self.view(list(array.shape), array.dtype)[...] = array

    def input_for(self, array: NDArray[np.uint8],
                  name: str = SHARED_INPUT) -> grpcclient.InferInput:
        """Return input `name` that reads `array`, written into the region, from it."""
        tensor = grpcclient.InferInput(name, list(array.shape),
                                       np_to_triton_dtype(array.dtype))
        tensor.set_shared_memory(self.name, array.nbytes)
        return tensor

    def release(self) -> None:
        """Do nothing: the region is the request thread's own, free again once infer returns."""


class FrameInputs:
    """How a worker's requests carry the frame: shared memory while enabled and taken, else gRPC."""

    def __init__(self, shared_memory: bool, url: str, log: Log) -> None:
        """
        Send the frame through shared memory if `shared_memory`, to the server at `url`.

        The first refusal turns shared memory off for every request thread; `log` says so.
        """
        self._shared_memory = shared_memory
        self._url = url
        self._log = log

    def request_inputs(self, client: grpcclient.InferenceServerClient, shared: FrameMemory,
                       inputs: Tensors, generation: int,
                       suffix: str = '') -> list[grpcclient.InferInput]:
        """
        Return the frame through shared memory when enabled.

        gRPC for everything else and as the fallback when the server refuses shared memory (e.g. it
        is on another host). `shared` is the calling request thread's region, `generation` the
        worker's connection count, `suffix` what a batched request adds to the camera's names.

        Raises InferenceServerException when the server is unreachable.
        """
        if not (self._shared_memory and SHARED_INPUT in inputs):
            return infer_inputs(inputs, suffix)
        try:
            frame_tensor = shared.tensor(client, inputs[SHARED_INPUT], generation,
                                         SHARED_INPUT + suffix)
        except InferenceServerException as error:
            if is_unreachable(error):
                raise
            self._shared_memory = False
            shared.close(client)
            self._log.warning(f'Triton at {self._url} refused shared memory '
                              f'({error.message()}); sending frames over gRPC')
            return infer_inputs(inputs, suffix)
        rest = {name: array for name, array in inputs.items() if name != SHARED_INPUT}
        return [frame_tensor, *infer_inputs(rest, suffix)]
