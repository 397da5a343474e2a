"""
A fault injector at the Triton client's boundary, for the request threads' fault tests.

`FaultWindow` replaces one method of a tritonclient class so that its calls numbered `start` to
`start + count - 1` (counted across every thread of the process) raise `error` instead of
answering; the calls before and after go through unchanged.
"""
from __future__ import annotations

import threading
from types import TracebackType
from typing import Any, Callable

INJECTED = 'injected fault (test)'


class FaultWindow:
    """Make calls `start` .. `start + count - 1` of `owner.method` raise `error`."""

    def __init__(self, owner: type, method: str, error: Callable[[str], Exception], start: int,
                 count: int) -> None:
        """
        Fault `owner.method` (a class attribute) in the window of call numbers given.

        `error` makes the exception from its words (an exception class does).
        """
        self._owner = owner
        self._method = method
        self._error = error
        self._window = range(start, start + count)
        self._lock = threading.Lock()
        self._original: Callable[..., Any] = getattr(owner, method)
        self.raised = 0
        self.calls = 0

    def __enter__(self) -> FaultWindow:
        """Put the faulty method in place."""
        original = self._original

        def faulty(*args: Any, **kwargs: Any) -> Any:
            with self._lock:
                number = self.calls
                self.calls += 1
                fault = number in self._window
                self.raised += int(fault)
            if fault:
                raise self._error(INJECTED)
            return original(*args, **kwargs)

        setattr(self._owner, self._method, faulty)
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 traceback: TracebackType | None) -> None:
        """Put the client's own method back."""
        setattr(self._owner, self._method, self._original)
