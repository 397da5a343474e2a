"""
A model's large outputs through Triton system shared memory instead of the gRPC response.

The lane ensemble returns two 230 KB maps per frame. In the response they cost a TCP transfer,
HTTP/2 framing and a protobuf parse on both sides; written by Triton into a region of this
process they cost one copy out of it. Only outputs whose size the model's metadata fixes
(every dimension known, a numeric type) and of at least MIN_SHARED_OUTPUT_BYTES go there, so a
model with variable-size or small outputs (detections) keeps them in the response.
"""
from __future__ import annotations

from typing import Iterable, NamedTuple

import numpy as np
import tritonclient.grpc as grpcclient
from tritonclient.utils import InferenceServerException, triton_to_np_dtype

from triton_perception.serving.requests.request_errors import is_unreachable
from triton_perception.serving.requests.request_inputs import Tensors
from triton_perception.serving.requests.shared_memory_region import SharedMemoryRegion
from triton_perception.serving.requests.worker_log import Log

MIN_SHARED_OUTPUT_BYTES = 64 * 1024
ALIGNMENT = 64  # bytes: each output starts on a cache line


class OutputSpec(NamedTuple):
    """An output as the model metadata gives it."""

    name: str
    datatype: str  # Triton's name, e.g. 'UINT8'
    shape: tuple[int, ...]  # -1 for a dimension the model leaves open


def shared_output_layout(specs: Iterable[OutputSpec], requested: Iterable[str]
                         ) -> dict[str, tuple[int, int]]:
    """
    Place the requested outputs that qualify for shared memory: name -> (offset, byte size).

    An output qualifies when its size is fixed (no open dimension, not BYTES) and at least
    MIN_SHARED_OUTPUT_BYTES.
    """
    by_name = {spec.name: spec for spec in specs}
    layout: dict[str, tuple[int, int]] = {}
    offset = 0
    for name in requested:
        spec = by_name.get(name)
        if spec is None or spec.datatype == 'BYTES' or any(size < 0 for size in spec.shape):
            continue
        nbytes = int(np.prod(spec.shape, dtype=np.int64)) * np.dtype(
            triton_to_np_dtype(spec.datatype)).itemsize
        if nbytes < MIN_SHARED_OUTPUT_BYTES:
            continue
        layout[name] = (offset, nbytes)
        offset += -(-nbytes // ALIGNMENT) * ALIGNMENT
    return layout


class OutputMemory:
    """
    The outputs one request thread asks for, the large ones placed in a region of its own.

    Triton writes them there while the request runs; `arrays` copies them out, so the region
    is free for the thread's next request as soon as the result is read.
    """

    def __init__(self, model: str, names: tuple[str, ...], shared_memory: bool,
                 log: Log) -> None:
        """Ask `model` for `names`, through shared memory when `shared_memory`; `log` warns."""
        self._model = model
        self._names = names
        self._enabled = shared_memory
        self._log = log
        self._region = SharedMemoryRegion(f'{model}_outputs')
        self._layout: dict[str, tuple[int, int]] | None = None
        self._in_region: dict[str, tuple[int, int]] = {}  # of the request last prepared
        # Built once and again only when the placement changes, not per request.
        self._requested: list[grpcclient.InferRequestedOutput] | None = None
        self._requested_for: dict[str, tuple[int, int]] = {}

    @property
    def region_name(self) -> str:
        """Return the region's name (it exists once a request placed an output in it)."""
        return self._region.name

    def requested(self, client: grpcclient.InferenceServerClient,
                  generation: int) -> list[grpcclient.InferRequestedOutput]:
        """
        Return the outputs to ask for, the qualifying ones set to go into the region.

        The first call reads the model's metadata; a region the server refuses turns shared
        memory off for this thread's outputs, with a warning. Raises InferenceServerException
        when the server is unreachable.
        """
        self._in_region = {}
        if self._enabled:
            try:
                self._in_region = self._prepare(client, generation)
            except InferenceServerException as error:
                if is_unreachable(error):
                    raise
                self._enabled = False
                self._region.close(client)
                self._log.warning(f'Triton refused shared memory for the outputs of '
                                  f'{self._model} ({error.message()}); reading them from the '
                                  'responses')
        if self._requested is None or self._requested_for != self._in_region:
            self._requested = [self._requested_output(name) for name in self._names]
            self._requested_for = self._in_region
        return self._requested

    def _requested_output(self, name: str) -> grpcclient.InferRequestedOutput:
        output = grpcclient.InferRequestedOutput(name)
        if name in self._in_region:
            offset, nbytes = self._in_region[name]
            output.set_shared_memory(self._region.name, nbytes, offset)
        return output

    def _prepare(self, client: grpcclient.InferenceServerClient,
                 generation: int) -> dict[str, tuple[int, int]]:
        if self._layout is None:
            metadata = client.get_model_metadata(self._model)
            self._layout = shared_output_layout(
                (OutputSpec(output.name, output.datatype, tuple(output.shape))
                 for output in metadata.outputs), self._names)
        if self._layout:
            end = max(offset + nbytes for offset, nbytes in self._layout.values())
            self._region.prepare(client, end, generation)
        return self._layout

    def arrays(self, result: grpcclient.InferResult) -> Tensors:
        """Return the request's outputs by name: copied out of the region, or from the response."""
        arrays: Tensors = {}
        for name in self._names:
            if name not in self._in_region:
                arrays[name] = result.as_numpy(name)
                continue
            output = result.get_output(name)
            if output is None:
                raise ValueError(f'{self._model} answered without its output {name}')
            offset, _ = self._in_region[name]
            arrays[name] = self._region.view(list(output.shape),
                                             np.dtype(triton_to_np_dtype(output.datatype)),
                                             offset).copy()
        return arrays

    def arrays_or_problem(self, result: grpcclient.InferResult
                          ) -> tuple[Tensors, ValueError | None]:
        """
        Return `arrays(result)` and None, or no arrays and why the answer was malformed.

        A malformed answer is not raised: every frame it answers fails with the reason.
        """
        try:
            return self.arrays(result), None
        except ValueError as error:
            return {}, error

    def forget_registration(self) -> None:
        """Forget the registration the server lost; the next request registers again."""
        self._region.forget_registration()

    def close(self, client: grpcclient.InferenceServerClient | None) -> None:
        """Unregister (through `client`, if given), close and unlink the region."""
        self._region.close(client)
