"""What a failed Triton call means: the server gone, a timeout, or a bad request."""
from __future__ import annotations

from tritonclient.utils import InferenceServerException

# Status codes that mean "the server is gone", as opposed to "this request was bad".
UNREACHABLE = ('StatusCode.UNAVAILABLE', 'StatusCode.CANCELLED', 'StatusCode.UNKNOWN')
TIMEOUT = 'StatusCode.DEADLINE_EXCEEDED'


def is_unreachable(error: Exception) -> bool:
    """Return whether `error` says the server is gone (not that one request was bad)."""
    return isinstance(error, InferenceServerException) and (error.status() or '') in UNREACHABLE


def lost_shared_memory(error: InferenceServerException) -> bool:
    """Return whether `error` is about a shared-memory region (the server may have lost it)."""
    return 'shared memory' in (error.message() or '')


def is_timeout(error: InferenceServerException) -> bool:
    """Return whether `error` says the request took longer than its timeout."""
    return (error.status() or '') == TIMEOUT


def request_failure(error: Exception, timeout_s: float) -> tuple[str, str]:
    """
    Return why a request failed: the frame accounting's reason (a short key) and the details.

    Anything else than Triton's own exception (an OSError of shared memory, a bug) is the
    request stage's fault of that class.
    """
    if not isinstance(error, InferenceServerException):
        reason = f'request: {type(error).__name__}'
        return reason, f'{reason}: {error}'
    status = error.status() or ''
    if status == TIMEOUT:
        reason = f'timeout after {timeout_s:g} s'
        return reason, reason
    if status in UNREACHABLE:
        return 'server unreachable', 'server unreachable'
    return 'server error', f'server error: {error.message()}'


def unreachable_reason(error: InferenceServerException) -> str:
    """Return why a readiness check got no answer, for the worker's status."""
    return f'server unreachable ({error.status() or error.message()})'
