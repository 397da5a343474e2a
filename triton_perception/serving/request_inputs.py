"""
The tensors of one inference request: in the gRPC message, or the frame through shared memory.

Shared memory saves serialising the frame when the server is on this host; when the server
refuses it (e.g. it is on another host), every request thread of the worker falls back to gRPC.
"""
from __future__ import annotations

import itertools
from multiprocessing.shared_memory import SharedMemory
import os

import numpy as np
import tritonclient.grpc as grpcclient
from tritonclient.utils import InferenceServerException, np_to_triton_dtype

from triton_perception.serving.request_errors import is_unreachable
from triton_perception.serving.worker_log import Log

Tensors = dict[str, np.ndarray]
SHARED_INPUT = 'IMAGE'
_region_numbers = itertools.count()


def infer_inputs(tensors: Tensors) -> list[grpcclient.InferInput]:
    """Return gRPC inputs carrying each array's bytes in the request, in C order."""
    inputs = []
    for name, array in tensors.items():
        tensor = grpcclient.InferInput(name, list(array.shape), np_to_triton_dtype(array.dtype))
        tensor.set_data_from_numpy(np.ascontiguousarray(array))
        inputs.append(tensor)
    return inputs


class SharedMemoryInput:
    """
    The frame tensor through Triton system shared memory instead of the gRPC message.

    One region per request thread, named after the model and process, created owner-only
    (0600) by Python's SharedMemory. It is unlinked on close, and by Python's resource tracker
    if the process dies. Registrations are repeated after the server restarts (`generation`).
    """

    def __init__(self, model: str) -> None:
        """Name the region after `model`, this process and a counter; nothing is allocated yet."""
        self.name = f'triton_perception_{model}_{os.getpid()}_{next(_region_numbers)}'
        self._memory: SharedMemory | None = None
        self._registered_generation = -1

    def tensor(self, client: grpcclient.InferenceServerClient, array: np.ndarray,
               generation: int) -> grpcclient.InferInput:
        """
        Copy `array` into the region and return the input that points Triton at it.

        The region is created on first use and re-created (closed, unregistered and unlinked,
        then created again) when `array` is larger than it; a smaller array reuses it. A region of
        this name left by a killed process whose pid this process now has is unlinked first. A
        new region is registered with the server, and an existing one again when `generation`
        differs from the one it was registered under, since a restarted server has lost the
        registration; an earlier registration under the name is removed first. The array's bytes
        are then copied into the region, and the returned input, named IMAGE, refers to its
        first `array.nbytes` bytes.

        `client`: the gRPC client of the server that reads the region.
        `array`: the frame tensor.
        `generation`: the worker's connection count; it changes when the server restarts.

        Returns an InferInput for IMAGE with its shape and dtype, set to read the shared memory.
        """
        if self._memory is None or array.nbytes > self._memory.size:
            self.close(client)
            try:
                self._memory = SharedMemory(name=self.name, create=True,
                                            size=max(1, array.nbytes))
            except FileExistsError:  # left by a killed process that had our pid
                SharedMemory(name=self.name).unlink()
                self._memory = SharedMemory(name=self.name, create=True,
                                            size=max(1, array.nbytes))
        if self._registered_generation != generation:
            try:
                client.unregister_system_shared_memory(self.name)
            except InferenceServerException:
                pass  # not registered with this server instance
            client.register_system_shared_memory(self.name, f'/{self.name}',
                                                 self._memory.size)
            self._registered_generation = generation
        np.ndarray(array.shape, array.dtype, buffer=self._memory.buf)[...] = array
        tensor = grpcclient.InferInput(SHARED_INPUT, list(array.shape),
                                       np_to_triton_dtype(array.dtype))
        tensor.set_shared_memory(self.name, array.nbytes)
        return tensor

    def forget_registration(self) -> None:
        """
        Forget the registration the server lost (it restarted between two requests).

        The next request registers the region again.
        """
        self._registered_generation = -1

    def close(self, client: grpcclient.InferenceServerClient | None) -> None:
        """
        Unregister the region from the server (if `client` is given), then close and unlink it.

        Does nothing without a region; an unregister the server cannot answer is ignored.
        """
        if self._memory is None:
            return
        if client is not None and self._registered_generation >= 0:
            try:
                client.unregister_system_shared_memory(self.name)
            except InferenceServerException:
                pass  # the server is gone; its registration went with it
        self._memory.close()
        self._memory.unlink()
        self._memory = None
        self._registered_generation = -1


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

    def request_inputs(self, client: grpcclient.InferenceServerClient, shared: SharedMemoryInput,
                       inputs: Tensors, generation: int) -> list[grpcclient.InferInput]:
        """
        Return the frame through shared memory when enabled.

        gRPC for everything else and as the fallback when the server refuses shared memory (e.g. it
        is on another host). `shared` is the calling request thread's region, `generation` the
        worker's connection count.

        Raises InferenceServerException when the server is unreachable.
        """
        if not (self._shared_memory and SHARED_INPUT in inputs):
            return infer_inputs(inputs)
        try:
            frame_tensor = shared.tensor(client, inputs[SHARED_INPUT], generation)
        except InferenceServerException as error:
            if is_unreachable(error):
                raise
            self._shared_memory = False
            shared.close(client)
            self._log.warning(f'Triton at {self._url} refused shared memory '
                              f'({error.message()}); sending frames over gRPC')
            return infer_inputs(inputs)
        rest = {name: array for name, array in inputs.items() if name != SHARED_INPUT}
        return [frame_tensor, *infer_inputs(rest)]
