"""
The base of every error the package raises for bad input, configuration or environment.

Each folder that raises has its own errors, derived from `TritonPerceptionError` and from the
built-in error they always were (ValueError, RuntimeError), so `except ValueError` keeps
working; `cli.py` turns any of them into one line and exit code 2. It sits below every layer
(docs/architecture.md): every folder may derive from it, and it imports nothing.
"""


class TritonPerceptionError(Exception):
    """An error of the package; its message says what was wrong and what to do."""
