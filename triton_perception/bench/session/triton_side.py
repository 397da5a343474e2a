"""The nodes' requests sent straight to Triton, and Triton's own per-step timers."""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Sequence, TypedDict

import numpy as np
from numpy.typing import NDArray
import tritonclient.grpc as grpcclient

from triton_perception.bench.session.settings import NodeKind, REQUEST_TIMEOUT_S, STEP_TIMERS
from triton_perception.serving import infer_inputs, Tensors


def inference_statistics(url: str,
                         client: grpcclient.InferenceServerClient | None = None
                         ) -> dict[str, dict[str, int]]:
    """
    Per model: requests so far and the nanoseconds summed in each of STEP_TIMERS.

    Also `success` (ns from the request's arrival to its response, Triton's request time) and
    `success_count` (successful requests).
    """
    if client is None:
        with grpcclient.InferenceServerClient(url) as own_client:
            statistics = own_client.get_inference_statistics(as_json=True)
    else:
        statistics = client.get_inference_statistics(as_json=True)
    return {model['name']: model_statistics(model) for model in statistics.get('model_stats', [])}


class Duration(TypedDict, total=False):
    """A StatisticDuration of Triton's statistics JSON (uint64s are JSON strings)."""

    count: int | str
    ns: int | str


class ModelStatistics(TypedDict, total=False):
    """The fields read here of one model's entry of Triton's statistics extension JSON."""

    name: str
    inference_count: int | str
    inference_stats: dict[str, Duration]  # success, queue, compute_input, ...


def model_statistics(model: ModelStatistics) -> dict[str, int]:
    """One model's entry of the statistics extension's JSON, as inference_statistics returns it."""
    timers = model.get('inference_stats', {})
    return {'requests': int(model.get('inference_count', 0)),
            'success': int(timers.get('success', {}).get('ns', 0)),
            'success_count': int(timers.get('success', {}).get('count', 0)),
            **{timer: int(timers.get(timer, {}).get('ns', 0)) for timer in STEP_TIMERS}}


def step_breakdown(before: dict[str, dict[str, int]],
                   after: dict[str, dict[str, int]]) -> dict[str, dict[str, float | int]]:
    """Mean ms per request of each timer, for every model that served requests in between."""
    steps: dict[str, dict[str, float | int]] = {}
    for name, totals in sorted(after.items()):
        earlier = before.get(name, {})
        requests = totals['requests'] - earlier.get('requests', 0)
        if requests > 0:
            steps[name] = {'requests': requests, **{
                f'{timer}_ms': round((totals[timer] - earlier.get(timer, 0)) / requests / 1e6, 2)
                for timer in STEP_TIMERS}}
    return steps


class EnsembleRequests:
    """The nodes' requests for one frame, concurrently as separate node processes send them."""

    def __init__(self, url: str, kinds: Sequence[NodeKind]) -> None:
        """Make one gRPC client per node kind, and threads to send their requests at once."""
        self._kinds = kinds
        self._clients = [grpcclient.InferenceServerClient(url) for _ in kinds]
        self._pool = ThreadPoolExecutor(max_workers=len(kinds), thread_name_prefix='bench-grpc')

    def _request(self, client: grpcclient.InferenceServerClient, kind: NodeKind,
                 rgb: NDArray[np.uint8]) -> Tensors:
        result = client.infer(kind.model, infer_inputs({'IMAGE': rgb, **kind.request_inputs()}),
                              outputs=[grpcclient.InferRequestedOutput(name)
                                       for name in kind.outputs],
                              client_timeout=REQUEST_TIMEOUT_S)
        return {name: result.as_numpy(name) for name in kind.outputs}

    def __call__(self, rgb: NDArray[np.uint8]) -> None:
        """Send the frame `rgb` to each kind's model and wait for every answer."""
        if len(self._kinds) == 1:
            self._request(self._clients[0], self._kinds[0], rgb)
            return
        for future in [self._pool.submit(self._request, client, kind, rgb)
                       for client, kind in zip(self._clients, self._kinds)]:
            future.result()

    def close(self) -> None:
        """Stop the thread pool and close the clients."""
        self._pool.shutdown()
        for client in self._clients:
            client.close()
