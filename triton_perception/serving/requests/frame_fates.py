"""
How a worker settles a frame around its request, for every kind of worker alike.

Rejected or failed in preparing, published or failed in delivering: one definition for a
node's own InferenceWorker and a camera's JoinedWorker, so that both count and log every frame
the same way.
"""
from __future__ import annotations

from typing import Callable

from triton_perception.frames import Fate, Frame, FrameAccounting, FrameRejected, RequestTimes
from triton_perception.serving.requests.request_inputs import Tensors
from triton_perception.serving.requests.worker_log import Log


def prepare_or_settle(accounting: FrameAccounting, log: Log,
                      prepare: Callable[[Frame], Tensors], frame: Frame) -> Tensors | None:
    """Return the request inputs for `frame`, or None with the frame settled and logged."""
    try:
        return prepare(frame)
    except FrameRejected as rejection:
        accounting.settle(Fate.REJECTED, frame.received_at, rejection.reason)
        log.frame_problem(f'rejected a frame: {rejection} ({accounting.count(Fate.REJECTED)} '
                          'rejected so far)')
    except Exception as error:  # noqa: BLE001 (a bug must not stop the worker thread)
        accounting.settle(Fate.FAILED, frame.received_at,
                          f'preparing the request: {type(error).__name__}: {error}')
        log.frame_problem(f'could not prepare a request: {error!r}')
    return None


def deliver_and_settle(accounting: FrameAccounting, log: Log,
                       deliver: Callable[[Frame, Tensors, Tensors], None], frame: Frame,
                       inputs: Tensors, outputs: Callable[[], Tensors],
                       times: RequestTimes) -> None:
    """
    Hand the result over and settle the frame as published, or as failed with the fault.

    `outputs` reads the answer's tensors; a malformed answer fails the frame as a fault of
    its handling does.
    """
    try:
        deliver(frame, inputs, outputs())
    except Exception as error:  # noqa: BLE001 (any publishing fault must be counted)
        accounting.settle(Fate.FAILED, frame.received_at,
                          f'result handling: {type(error).__name__}: {error}')
        log.frame_problem(f'could not publish the result: {error}')
        return
    accounting.settle(Fate.PUBLISHED, frame.received_at, request=times)
