"""
Test modules lean on helper modules, never on each other.

A test module that imports another drags the other's tests and fixtures along and breaks when
they move; what tests share lives in the package test/support/, and the other folders hold tests
and conftest.py files only, as docs/development.md says.
"""
from __future__ import annotations

import ast

from support.checkout import REPO


def imported_modules(tree: ast.AST) -> set[str]:
    """Return every module an `import` or `from ... import` names, at any depth."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module)
    return names


def test_no_test_module_imports_another() -> None:
    """Every import in test/ names a helper, the package or a library: no `test_*` module."""
    offenders = [f'{path.relative_to(REPO)} imports {name}'
                 for path in sorted((REPO / 'test').rglob('*.py'))
                 for name in sorted(imported_modules(ast.parse(path.read_text(encoding='utf-8'))))
                 if name.startswith('test.')
                 or any(part.startswith('test_') for part in name.split('.'))]
    assert offenders == [], offenders


def test_helpers_live_in_support() -> None:
    """Every module of test/ that is no test and no conftest is in test/support/."""
    test = REPO / 'test'
    strays = [str(path.relative_to(REPO)) for path in sorted(test.rglob('*.py'))
              if not path.name.startswith('test_') and path.name != 'conftest.py'
              and path.parent != test / 'support' and test / 'data' not in path.parents
              and test / 'launch_tests' not in path.parents]
    assert strays == [], f'move these helpers into test/support/: {strays}'


def test_a_launch_test_imports_nothing_of_support() -> None:
    """launch_test runs test/launch_tests/ alone, as `colcon test` does: test/ off its path."""
    offenders = [f'{path.relative_to(REPO)} imports {name}'
                 for path in sorted((REPO / 'test' / 'launch_tests').glob('*.py'))
                 for name in sorted(imported_modules(ast.parse(path.read_text(encoding='utf-8'))))
                 if name.split('.')[0] in ('support', 'conftest')]
    assert offenders == [], offenders
