"""
One way to send a request: one model's frame, a camera's models joined, cameras batched.

`send` writes each part's inputs (the frame through its shared-memory lease where enabled),
asks for the outputs, times the call, forgets the registrations a restarted server lost, and
releases every lease however the call ends. `settle_failure` counts and logs a frame whose
request failed and tells the connection when the server is gone. The workers (triton_client,
joined_worker, camera_batches) only decide what goes in a request and whom an answer is for.
"""
from __future__ import annotations

from dataclasses import dataclass
import time
from typing import NamedTuple, Sequence

import tritonclient.grpc as grpcclient
from tritonclient.utils import InferenceServerException

from triton_perception.frames import Fate, Frame, FrameAccounting, RequestTimes
from triton_perception.serving.requests.connection_health import ConnectionHealth
from triton_perception.serving.requests.frame_fates import settle_once
from triton_perception.serving.requests.output_memory import OutputMemory
from triton_perception.serving.requests.request_errors import (is_unreachable, lost_shared_memory,
                                                               request_failure)
from triton_perception.serving.requests.request_inputs import FrameInputs, FrameMemory, Tensors
from triton_perception.serving.requests.worker_log import WorkerLog


@dataclass(frozen=True)
class Part:
    """
    One frame's share of a request: its tensors, written through `lease`.

    `writer` is the sending worker's input writer, `generation` its connection's count, and
    `suffix` what a batched request adds to the camera's tensor names ('' alone).
    """

    lease: FrameMemory
    tensors: Tensors
    writer: FrameInputs
    generation: int
    suffix: str = ''


class Answer(NamedTuple):
    """A request's result and when it was sent and answered."""

    result: grpcclient.InferResult
    times: RequestTimes


def send(client: grpcclient.InferenceServerClient, model: str, parts: Sequence[Part],
         outputs: OutputMemory, timeout_s: float) -> Answer:
    """
    Send one request to `model` carrying `parts`, the outputs through `outputs`.

    Raises InferenceServerException as the client does, having forgotten the shared-memory
    registrations the server lost, and whatever else the client or a region raises; every
    part's lease is released either way.
    """
    try:
        inputs: list[grpcclient.InferInput] = []
        for part in parts:
            inputs += part.writer.request_inputs(client, part.lease, part.tensors,
                                                 part.generation, part.suffix)
        requested = outputs.requested(client, parts[0].generation)
        sent_at = time.monotonic()
        result = client.infer(model, inputs, outputs=requested, client_timeout=timeout_s)
        return Answer(result, RequestTimes(sent_at, time.monotonic()))
    except InferenceServerException as error:
        if lost_shared_memory(error):
            for part in parts:
                part.lease.forget_registration()
            outputs.forget_registration()
        raise
    finally:
        for part in parts:
            part.lease.release()


def settle_failure(accounting: FrameAccounting, log: WorkerLog, frame: Frame, model: str,
                   timeout_s: float, error: Exception,
                   health: ConnectionHealth | None) -> None:
    """Settle `frame` as failed with the reason, log it, and tell `health` if Triton is gone."""
    reason, detail = request_failure(error, timeout_s)
    if settle_once(accounting, frame, Fate.FAILED, reason, detail=detail):
        message = f'inference failed ({model}): {detail}'
        if isinstance(error, InferenceServerException):
            log.frame_problem(message)
        else:
            log.fault(reason, f'{message} ({error!r})')
    if health is not None and is_unreachable(error):
        health.lost(reason)
