"""
What counts as a capability check in the package's sources.

It serves the tests that let a newer API pass only behind one (test_humble_api, test_target_python):
a `try:` whose handler catches ImportError, AttributeError or TypeError, or an `if` (or conditional
expression) on `hasattr(...)` or on a `*_AVAILABLE` flag. The body of `if TYPE_CHECKING:` never
runs (type checkers alone read it, and the package's annotations are not evaluated), so it counts
too.
"""
from __future__ import annotations

import ast

CAPABILITY_ERRORS = {'ImportError', 'ModuleNotFoundError', 'AttributeError', 'TypeError'}


def _catches_capability_errors(handler: ast.ExceptHandler) -> bool:
    if handler.type is None:
        return False
    caught = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return any(isinstance(name, ast.Name) and name.id in CAPABILITY_ERRORS for name in caught)


def _is_capability_test(test: ast.expr) -> bool:
    if isinstance(test, ast.Name) and test.id == 'TYPE_CHECKING':
        return True
    return any((isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and node.func.id == 'hasattr')
               or (isinstance(node, ast.Name) and node.id.endswith('_AVAILABLE'))
               for node in ast.walk(test))


def guarded_nodes(tree: ast.AST) -> set[int]:
    """Ids of every node inside a capability check."""
    guarded: set[int] = set()
    for node in ast.walk(tree):
        blocks: list[list[ast.stmt]] = []
        if isinstance(node, ast.Try) and any(map(_catches_capability_errors, node.handlers)):
            blocks.append(node.body)
        elif isinstance(node, ast.If) and _is_capability_test(node.test):
            blocks += [node.body, node.orelse]
        elif isinstance(node, ast.IfExp) and _is_capability_test(node.test):
            guarded.update(id(inner) for inner in ast.walk(node))
        for statement in (statement for block in blocks for statement in block):
            guarded.update(id(inner) for inner in ast.walk(statement))
    return guarded
