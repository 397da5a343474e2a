"""
No two modules of the package import each other, directly or through others.

Imports inside functions count too: deferring one only hides a cycle until the function runs.
"""
from __future__ import annotations

from support.package_imports import cycle_through, import_graph


def test_the_package_has_no_import_cycle() -> None:
    """No module of the package imports itself through others, so each can be read on its own."""
    graph = import_graph()
    cycles = [cycle for cycle in (cycle_through(graph, name) for name in sorted(graph)) if cycle]
    assert not cycles, 'import cycles: ' + '; '.join(' -> '.join(cycle) for cycle in cycles)


def test_a_cycle_is_found() -> None:
    """Positive control: the search finds a cycle of three."""
    graph = {'a': {'b'}, 'b': {'c'}, 'c': {'a'}, 'd': {'a'}}
    assert cycle_through(graph, 'a') == ['a', 'b', 'c', 'a']
    assert cycle_through(graph, 'd') is None
