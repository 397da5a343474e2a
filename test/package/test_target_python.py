"""
Everything the package ships runs on Python 3.10.

JetPack 6 is Ubuntu 22.04, whose Python (and so Humble's rclpy and the Python backend stub of
JetPack's Triton) is 3.10, while this machine runs 3.11. Syntax is checked by parsing as 3.10; the
standard library by a list of what 3.11 and later added that code like this might reach for (a use
inside a capability check passes: test/support/capability_checks.py).
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

from support.capability_checks import guarded_nodes
from support.checkout import REPO

TARGET = (3, 10)
SHIPPED = sorted([*(REPO / 'triton_perception').rglob('*.py'), *(REPO / 'launch').glob('*.py'),
                  *(REPO / 'model_repository').rglob('*.py'), *(REPO / 'scripts').iterdir(),
                  REPO / 'setup.py'])
# Standard-library names added in 3.11 and later (module -> names; None: the whole module).
NEWER_STDLIB: dict[str, set[str] | None] = {
    'tomllib': None,
    'typing': {'Self', 'LiteralString', 'Never', 'assert_never', 'assert_type', 'reveal_type',
               'Required', 'NotRequired', 'TypeVarTuple', 'Unpack', 'dataclass_transform',
               'override', 'get_overloads', 'clear_overloads', 'TypeAliasType'},
    'enum': {'StrEnum', 'ReprEnum', 'EnumCheck', 'FlagBoundary', 'verify', 'member',
             'nonmember', 'global_enum', 'show_flag_values'},
    'datetime': {'UTC'},
    'hashlib': {'file_digest'},
    'asyncio': {'TaskGroup', 'timeout', 'timeout_at', 'Runner', 'Barrier'},
    'itertools': {'batched'},
    'contextlib': {'chdir'},
    'operator': {'call'},
    'builtins': {'ExceptionGroup', 'BaseExceptionGroup'},
}


def newer_stdlib_uses(path: Path, root: Path = REPO) -> list[str]:
    """
    Find uses of NEWER_STDLIB outside capability checks.

    As `module.name`, `from module import name`, `import module` and bare builtins.
    """
    tree = ast.parse(path.read_text(encoding='utf-8'))
    guarded = guarded_nodes(tree)
    found = []
    for node in ast.walk(tree):
        if id(node) in guarded:
            continue
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names
                      if alias.name in NEWER_STDLIB and NEWER_STDLIB[alias.name] is None]
        elif isinstance(node, ast.ImportFrom) and node.module in NEWER_STDLIB:
            names = NEWER_STDLIB[node.module]
            found += [f'{node.module}.{alias.name}' for alias in node.names
                      if names is None or alias.name in names]
        elif (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
              and node.attr in (NEWER_STDLIB.get(node.value.id) or set())):
            found.append(f'{node.value.id}.{node.attr}')
        elif isinstance(node, ast.Name) and node.id in NEWER_STDLIB['builtins']:
            found.append(node.id)
    return [f'{path.relative_to(root)}:{name}' for name in found]


def test_everything_shipped_parses_as_python_3_10() -> None:
    """Every shipped Python file parses with Python 3.10's grammar."""
    failures = []
    for path in SHIPPED:
        try:
            ast.parse(path.read_text(encoding='utf-8'), filename=str(path),
                      feature_version=TARGET)
        except SyntaxError as error:
            failures.append(f'{path.relative_to(REPO)}:{error.lineno}: {error.msg}')
    assert len(SHIPPED) > 50  # the globs found the package
    assert failures == []


def test_uses_no_standard_library_newer_than_3_10() -> None:
    """No shipped file uses standard-library names newer than 3.10 outside a capability check."""
    assert [use for path in SHIPPED for use in newer_stdlib_uses(path)] == []


def test_newer_syntax_and_names_are_found(tmp_path: Path) -> None:
    """
    Positive control: 3.11 syntax fails to parse as 3.10.

    3.11 names are found, and pass inside a capability check.
    """
    with pytest.raises(SyntaxError):
        ast.parse('try:\n    pass\nexcept* ValueError:\n    pass\n', feature_version=TARGET)
    plain = tmp_path / 'plain.py'
    plain.write_text('import tomllib\nfrom typing import Self\nimport datetime\n'
                     'now = datetime.UTC\nraise ExceptionGroup("x", [])\n', encoding='utf-8')
    assert set(newer_stdlib_uses(plain, tmp_path)) == {
        'plain.py:tomllib', 'plain.py:typing.Self', 'plain.py:datetime.UTC',
        'plain.py:ExceptionGroup'}
    checked = tmp_path / 'checked.py'
    checked.write_text('try:\n    import tomllib\nexcept ImportError:\n    tomllib = None\n',
                       encoding='utf-8')
    assert newer_stdlib_uses(checked, tmp_path) == []
