"""What a failed Triton call means: the server gone, a timeout, or a bad request."""
from __future__ import annotations

from tritonclient.utils import InferenceServerException

# Status codes that mean "the server is gone", as opposed to "this request was bad".
UNREACHABLE = ('StatusCode.UNAVAILABLE', 'StatusCode.CANCELLED', 'StatusCode.UNKNOWN')
TIMEOUT = 'StatusCode.DEADLINE_EXCEEDED'


def is_unreachable(error: InferenceServerException) -> bool:
    """Return whether `error` says the server is gone (not that one request was bad)."""
    return (error.status() or '') in UNREACHABLE


def lost_shared_memory(error: InferenceServerException) -> bool:
    """Return whether `error` is about a shared-memory region (the server may have lost it)."""
    return 'shared memory' in (error.message() or '')


def request_failure(error: InferenceServerException, timeout_s: float) -> str:
    """Return why a request failed, in the words of the frame accounting's reasons."""
    status = error.status() or ''
    if status == TIMEOUT:
        return f'timeout after {timeout_s:g} s'
    if status in UNREACHABLE:
        return 'server unreachable'
    return f'server error: {error.message()}'


def unreachable_reason(error: InferenceServerException) -> str:
    """Return why a readiness check got no answer, for the worker's status."""
    return f'server unreachable ({error.status() or error.message()})'
