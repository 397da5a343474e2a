"""
A Triton system shared-memory region owned by one process: made, registered, given up.

Request inputs (the frame) and outputs (large result maps) both go through such regions when the
server is on this host. Each region is named after what it holds, the process, a counter and a
random token, created owner-only (0600) by Python's SharedMemory, and unlinked on close, or by
Python's resource tracker if the process dies. The token is what makes a name this process's
own: a pid is not (two containers sharing /dev/shm and one server number their processes alike),
so a region or registration of a name this process did not make is never unlinked or
unregistered. Registrations are repeated after the server restarts (`generation`, the worker's
connection count).
"""
from __future__ import annotations

import itertools
from multiprocessing.shared_memory import SharedMemory
import os
import secrets
import time
from typing import TypeVar

import numpy as np
from numpy.typing import NDArray
import tritonclient.grpc as grpcclient
from tritonclient.utils import InferenceServerException

ScalarT = TypeVar('ScalarT', bound=np.generic)

REGION_PREFIX = 'triton_perception_'
IN_USE_PATIENCE_S = 2.0
TOKEN_BYTES = 6  # 48 random bits: names of two live processes never meet
_region_numbers = itertools.count()


def region_name(label: str) -> str:
    """
    Return a new region name of this process: `label`, the pid, a counter and a random token.

    The pid and counter tell a reader of /dev/shm whose region it is; the token makes the name
    unique to this process even where another process has the same pid (another pid namespace).
    """
    return (f'{REGION_PREFIX}{label}_{os.getpid()}_{next(_region_numbers)}_'
            f'{secrets.token_hex(TOKEN_BYTES)}')


def unregister_region(client: grpcclient.InferenceServerClient, name: str) -> bool:
    """
    Unregister the region `name` from the server of `client`; return whether the server agreed.

    Since triton-inference-server/server pull request 7567 (2.51 here) the server counts the
    requests using a region, lets the count go only once a response is complete, a moment after
    the client has it, and refuses to unregister a counted region ("it is currently in use");
    so a refusal of that kind is tried again for up to IN_USE_PATIENCE_S. Pull request 7743
    defers such an unregister instead. Any other refusal (the server is gone, or never had the
    region) returns False at once.
    """
    deadline = time.monotonic() + IN_USE_PATIENCE_S
    while True:
        try:
            client.unregister_system_shared_memory(name)
            return True
        except InferenceServerException as error:
            if 'currently in use' not in str(error.message()) or time.monotonic() > deadline:
                return False
        time.sleep(0.005)


class SharedMemoryRegion:
    """One region and its registration with the server, as far as this process knows."""

    def __init__(self, label: str) -> None:
        """Name the region after `label` (what it holds) and this process (region_name)."""
        self.name = region_name(label)
        self._memory: SharedMemory | None = None
        self._registered_generation = -1
        # Whether the server may hold a registration of `name` made by this process: only
        # then is the name unregistered before it is registered again.
        self._registered_once = False

    def allocate(self, client: grpcclient.InferenceServerClient, nbytes: int) -> bool:
        """
        Make the region hold at least `nbytes`; return whether it was (re-)created.

        The region is created on first use and re-created (closed, unregistered with the server
        of `client` and unlinked, then created again) when `nbytes` is more than it holds; a
        smaller need reuses it. A (re-)created region is not registered. Raises FileExistsError
        when the name exists: it is then another process's, and is left alone.
        """
        if self._memory is not None and nbytes <= self._memory.size:
            return False
        self.close(client)
        self._memory = SharedMemory(name=self.name, create=True, size=max(1, nbytes))
        return True

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

    def register(self, client: grpcclient.InferenceServerClient, generation: int) -> None:
        """
        Register the region with the server of `client`, under the worker's `generation`.

        A registration this process made earlier under the name is removed first (a server that
        did not restart still holds it); a name this process never registered is not touched.
        """
        assert self._memory is not None  # allocate() first
        if self._registered_once:
            unregister_region(client, self.name)  # refused when this server instance lost it
        client.register_system_shared_memory(self.name, f'/{self.name}', self._memory.size)
        self._registered_once = True
        self._registered_generation = generation

    @property
    def registered(self) -> bool:
        """Whether the region is registered, as far as this process knows."""
        return self._registered_generation >= 0

    @property
    def size(self) -> int:
        """Return the region's size in bytes (0 before it is first allocated)."""
        return self._memory.size if self._memory is not None else 0

    def view(self, shape: list[int], dtype: np.dtype[ScalarT],
             offset: int = 0) -> NDArray[ScalarT]:
        """Return the region from byte `offset` as a `shape` `dtype` array (once allocated)."""
        assert self._memory is not None  # allocate() first
        return np.ndarray(shape, dtype, buffer=self._memory.buf, offset=offset)

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
            # Refused when the server is gone, and the registration with it.
            self._registered_once = not unregister_region(client, self.name)
        self._memory.close()
        self._memory.unlink()
        self._memory = None
        self._registered_generation = -1
