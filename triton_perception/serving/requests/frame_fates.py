"""
How a worker settles a frame around its request, for every kind of worker alike.

Rejected or failed in preparing, published or failed in delivering: one definition for a
node's own InferenceWorker and a camera's JoinedWorker, so that both count and log every frame
the same way. Every frame is settled once (`settle_once`): a fault anywhere in a round settles
the frames the round still holds as failed (`fail_unsettled`), and those already settled stay
as they are. A reason is a short key from a bounded set, the stage and the exception's class;
the exception's words go to `last_error` and to the log.
"""
from __future__ import annotations

from typing import Callable, Iterable

from triton_perception.frames import Fate, Frame, FrameAccounting, FrameRejected, RequestTimes
from triton_perception.serving.requests.request_inputs import Tensors
from triton_perception.serving.requests.worker_log import WorkerLog

PREPARING = 'preparing the request'
RESULT_HANDLING = 'result handling'
REQUEST = 'request'


def settle_once(accounting: FrameAccounting, frame: Frame, fate: Fate, reason: str = '',
                request: RequestTimes | None = None, detail: str = '') -> bool:
    """Settle `frame` with `fate` unless it is settled already; return whether this settled it."""
    if frame.settled:
        return False
    frame.settled = True
    accounting.settle(fate, frame.received_at, reason, request=request, detail=detail)
    return True


def fail_with(accounting: FrameAccounting, log: WorkerLog, frame: Frame, stage: str,
              error: BaseException) -> None:
    """Settle `frame` as failed at `stage` by `error` (reason: the stage and its class)."""
    reason = f'{stage}: {type(error).__name__}'
    if settle_once(accounting, frame, Fate.FAILED, reason, detail=f'{reason}: {error}'):
        log.fault(reason, f'{stage} failed: {error!r}')


def fail_unsettled(frames: Iterable[tuple[FrameAccounting, WorkerLog, Frame]], stage: str,
                   error: BaseException) -> None:
    """Settle as failed by `error` every frame of a round that is not settled yet."""
    for accounting, log, frame in frames:
        fail_with(accounting, log, frame, stage, error)


def prepare_or_settle(accounting: FrameAccounting, log: WorkerLog,
                      prepare: Callable[[Frame], Tensors], frame: Frame) -> Tensors | None:
    """Return the request inputs for `frame`, or None with the frame settled and logged."""
    try:
        return prepare(frame)
    except FrameRejected as rejection:
        settle_once(accounting, frame, Fate.REJECTED, rejection.reason)
        log.frame_problem(f'rejected a frame: {rejection} ({accounting.count(Fate.REJECTED)} '
                          'rejected so far)')
    except Exception as error:  # noqa: BLE001 (a bug must not stop the worker thread)
        fail_with(accounting, log, frame, PREPARING, error)
    return None


def deliver_and_settle(accounting: FrameAccounting, log: WorkerLog,
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
        fail_with(accounting, log, frame, RESULT_HANDLING, error)
        return
    settle_once(accounting, frame, Fate.PUBLISHED, request=times)
