"""
What the tests share: helpers, reference implementations, stand-ins and scripts they run.

Tests import them as `from support.MODULE import NAME` (test/ is on the import path through
its conftest.py); the modules here import each other the same way. Fixtures live in the
conftest.py files: test/conftest.py for those of several folders, a folder's own beside it.
"""
