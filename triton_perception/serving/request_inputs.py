"""
The tensors of one inference request: in the gRPC message, or the frame through shared memory.

Shared memory saves serialising the frame when the server is on this host; when the server
refuses it (e.g. it is on another host), every request thread of the worker falls back to gRPC.
"""
from __future__ import annotations

import itertools
from multiprocessing.shared_memory import SharedMemory
import os
from typing import Protocol

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


class FrameMemory(Protocol):
    """Where a request thread's frame goes in shared memory: a region of its own, or shared."""

    def tensor(self, client: grpcclient.InferenceServerClient, array: np.ndarray,
               generation: int) -> grpcclient.InferInput:
        """Return the IMAGE input reading `array` from shared memory (written there if need be)."""

    def release(self) -> None:
        """Say that the request which read the last `tensor` has been answered."""

    def forget_registration(self) -> None:
        """Forget the registration the server lost; the next `tensor` registers again."""

    def close(self, client: grpcclient.InferenceServerClient | None) -> None:
        """Give the memory up (the request thread ends or shared memory was refused)."""


class SharedMemoryInput:
    """
    The frame tensor through Triton system shared memory instead of the gRPC message.

    One region per request thread, named after the model and process, created owner-only
    (0600) by Python's SharedMemory. It is unlinked on close, and by Python's resource tracker
    if the process dies. Registrations are repeated after the server restarts (`generation`).
    """

    def __init__(self, label: str) -> None:
        """Name the region after `label` (a model), the process and a counter; no memory yet."""
        self.name = f'triton_perception_{label}_{os.getpid()}_{next(_region_numbers)}'
        self._memory: SharedMemory | None = None
        self._registered_generation = -1

    def tensor(self, client: grpcclient.InferenceServerClient, array: np.ndarray,
               generation: int) -> grpcclient.InferInput:
        """
        Copy `array` into the region and return the input that points Triton at it.

        `client`: the gRPC client of the server that reads the region.
        `array`: the frame tensor.
        `generation`: the worker's connection count; it changes when the server restarts.

        Returns an InferInput for IMAGE with its shape and dtype, set to read the shared memory.
        """
        self.prepare(client, array.nbytes, generation)
        self.write(array)
        return self.input_for(array)

    def prepare(self, client: grpcclient.InferenceServerClient, nbytes: int,
                generation: int) -> None:
        """
        Make the region hold at least `nbytes` and be registered with the server of `client`.

        A new region is registered with the server, and an existing one again when `generation`
        differs from the one it was registered under, since a restarted server has lost the
        registration.
        """
        if self.allocate(client, nbytes) or self._registered_generation != generation:
            self.register(client, generation)

    def allocate(self, client: grpcclient.InferenceServerClient, nbytes: int) -> bool:
        """
        Make the region hold at least `nbytes`; return whether it was (re-)created.

        The region is created on first use and re-created (closed, unregistered with the server
        of `client` and unlinked, then created again) when `nbytes` is more than it holds; a
        smaller frame reuses it. A region of this name left by a killed process whose pid this
        process now has is unlinked first. A (re-)created region is not registered.
        """
        if self._memory is not None and nbytes <= self._memory.size:
            return False
        self.close(client)
        try:
            self._memory = SharedMemory(name=self.name, create=True, size=max(1, nbytes))
        except FileExistsError:  # left by a killed process that had our pid
            SharedMemory(name=self.name).unlink()
            self._memory = SharedMemory(name=self.name, create=True, size=max(1, nbytes))
        return True

    def register(self, client: grpcclient.InferenceServerClient, generation: int) -> None:
        """
        Register the region with the server of `client`, under the worker's `generation`.

        An earlier registration under the name is removed first (the server may or may not
        still hold it).
        """
        assert self._memory is not None  # allocate() first
        try:
            client.unregister_system_shared_memory(self.name)
        except InferenceServerException:
            pass  # not registered with this server instance
        client.register_system_shared_memory(self.name, f'/{self.name}', self._memory.size)
        self._registered_generation = generation

    @property
    def registered(self) -> bool:
        """Whether the region is registered, as far as this process knows."""
        return self._registered_generation >= 0

    @property
    def size(self) -> int:
        """Return the region's size in bytes (0 before it is first allocated)."""
        return self._memory.size if self._memory is not None else 0

    def write(self, array: np.ndarray) -> None:
        """Copy `array` into the start of the region (made large enough by `prepare`)."""
        assert self._memory is not None and array.nbytes <= self._memory.size  # prepare() first
        np.ndarray(array.shape, array.dtype, buffer=self._memory.buf)[...] = array

    def input_for(self, array: np.ndarray) -> grpcclient.InferInput:
        """Return the IMAGE input that reads `array`, written into the region, from it."""
        tensor = grpcclient.InferInput(SHARED_INPUT, list(array.shape),
                                       np_to_triton_dtype(array.dtype))
        tensor.set_shared_memory(self.name, array.nbytes)
        return tensor

    def release(self) -> None:
        """Do nothing: the region is the request thread's own, free again once infer returns."""

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

    def request_inputs(self, client: grpcclient.InferenceServerClient, shared: FrameMemory,
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
