"""
One camera's frames in Triton shared memory, written once for every model that reads them.

In a perception process the detection and lane workers of a camera get the same RGB array for
a frame (the camera's conversion is shared). Each request thread holds a lease on the camera's
regions: the first request of a frame copies it into a free region, and a request of another
model for the same array reads that region, uncopied, while both requests are in flight. A region
is reused for a newer frame only once no request reads it any more, so there are at most as
many regions as requests in flight at once.

Registrations: each worker counts its connections (its `generation`); a region is registered
again when a worker that used it sees a new generation, i.e. the server restarted since.
"""
from __future__ import annotations

from dataclasses import dataclass, field
import threading

import numpy as np
from numpy.typing import NDArray
import tritonclient.grpc as grpcclient

from triton_perception.serving.requests.request_inputs import SHARED_INPUT, SharedMemoryInput

REGION_LABEL = 'frames'


@dataclass
class _Region:
    """A region, the frame it holds, the requests reading it and who saw it registered."""

    memory: SharedMemoryInput
    frame: NDArray[np.uint8] | None = None
    written: int = 0  # when the frame was written, by SharedFrames.writes
    readers: int = 0
    seen_by: dict[object, int] = field(default_factory=dict)  # worker -> its generation then


class SharedFrames:
    """
    The shared-memory regions of one camera's frames, for the workers of all its models.

    Request threads use it through their SharedFrameLease; the methods below are the leases'.
    """

    def __init__(self) -> None:
        """Hold no region yet; regions are made as requests need them."""
        self._lock = threading.Lock()
        self._regions: list[_Region] = []
        self._leases = 0
        self.writes = 0  # frames copied into a region
        self.reads = 0   # requests that read a region

    def lease(self, worker: object) -> SharedFrameLease:
        """Return a request thread's lease; `worker` is the thread's worker (its generation's)."""
        with self._lock:
            self._leases += 1
        return SharedFrameLease(self, worker)

    @property
    def regions(self) -> int:
        """Return how many regions exist (at most the requests that were in flight at once)."""
        with self._lock:
            return len(self._regions)

    @property
    def region_names(self) -> list[str]:
        """Return the names of this camera's regions, as the server and /dev/shm know them."""
        with self._lock:
            return [region.memory.name for region in self._regions]

    def acquire(self, client: grpcclient.InferenceServerClient, array: NDArray[np.uint8],
                worker: object, generation: int) -> _Region:
        """
        Return a region holding `array` for one request of `worker`, counted as a reader.

        A region already holding this very array is read as it is; otherwise the free region
        written longest ago (or a new one) takes a copy. Copying and registering happen under
        the lock, so a reader never sees a half-written frame.
        """
        with self._lock:
            region = next((region for region in self._regions if region.frame is array), None)
            if region is None:
                region = self._free_region(array.nbytes)
                region.frame = None  # until written: a failed call leaves no stale match
                region.memory.allocate(client, array.nbytes)  # a new region is unregistered
            if (not region.memory.registered
                    or region.seen_by.get(worker, generation) != generation):
                region.memory.register(client, generation)
                region.seen_by = {}
            region.seen_by[worker] = generation
            if region.frame is not array:
                region.memory.write(array)
                region.frame = array
                self.writes += 1
                region.written = self.writes
            region.readers += 1
            self.reads += 1
            return region

    def _free_region(self, nbytes: int) -> _Region:
        """Return the free region written longest ago, preferring one that holds `nbytes`."""
        free = sorted((region for region in self._regions if region.readers == 0),
                      key=lambda region: region.written)
        fitting = [region for region in free if region.memory.size >= nbytes]
        if fitting or free:
            return (fitting or free)[0]
        region = _Region(SharedMemoryInput(REGION_LABEL))
        self._regions.append(region)
        return region

    def release(self, region: _Region) -> None:
        """Count one reader of `region` fewer: its request was answered."""
        with self._lock:
            region.readers -= 1

    def forget(self, region: _Region) -> None:
        """Forget `region`'s registration (the server lost it); its next reader registers it."""
        with self._lock:
            region.memory.forget_registration()

    def close_lease(self, client: grpcclient.InferenceServerClient | None) -> None:
        """End one lease; the last unregisters (through `client`) and unlinks every region."""
        with self._lock:
            self._leases -= 1
            if self._leases > 0:
                return
            regions, self._regions = self._regions, []
        for region in regions:
            region.memory.close(client)


class SharedFrameLease:
    """A request thread's FrameMemory on its camera's SharedFrames."""

    def __init__(self, frames: SharedFrames, worker: object) -> None:
        """Read and write `frames` for a request thread of `worker`."""
        self._frames = frames
        self._worker = worker
        self._region: _Region | None = None
        self._closed = False

    def tensor(self, client: grpcclient.InferenceServerClient, array: NDArray[np.uint8],
               generation: int, name: str = SHARED_INPUT) -> grpcclient.InferInput:
        """
        Return input `name` (IMAGE, or IMAGE_i in a batch) reading `array` from the regions.

        `array` is copied unless a region holds this very array (another model's request for the
        same frame wrote it); the region is not reused until `release`.
        """
        self.release()
        self._region = self._frames.acquire(client, array, self._worker, generation)
        return self._region.memory.input_for(array, name)

    def release(self) -> None:
        """Let the region of the last request be reused for a newer frame."""
        if self._region is not None:
            self._frames.release(self._region)
            self._region = None

    def forget_registration(self) -> None:
        """Register the last request's region again before it is read next (server restarted)."""
        if self._region is not None:
            self._frames.forget(self._region)

    def close(self, client: grpcclient.InferenceServerClient | None) -> None:
        """Release the region and end the lease; the camera's last lease frees every region."""
        if self._closed:
            return
        self._closed = True
        self.release()
        self._frames.close_lease(client)
