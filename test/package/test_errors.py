"""
One family of errors, each also the built-in error it is.

Every error the package defines derives from TritonPerceptionError and, beside it, from the
built-in error it is (ValueError, RuntimeError, ...), so that `cli.py` turns each into one line
and `except ValueError` keeps working. Read with `ast`.
"""
from __future__ import annotations

import ast
import builtins

from support.checkout import REPO

PACKAGE = REPO / 'triton_perception'
BUILT_IN_ERRORS = {name for name, value in vars(builtins).items()
                   if isinstance(value, type) and issubclass(value, BaseException)}


def error_classes() -> dict[str, tuple[str, list[str]]]:
    """Return {class name: (where, base names)} of every class of the package with a base."""
    classes = {}
    for path in sorted(PACKAGE.rglob('*.py')):
        for node in ast.walk(ast.parse(path.read_text(encoding='utf-8'))):
            if isinstance(node, ast.ClassDef) and node.bases:
                bases = [ast.unparse(base).split('.')[-1] for base in node.bases]
                classes[node.name] = (f'{path.relative_to(REPO)}:{node.lineno}', bases)
    return classes


def family_problems(classes: dict[str, tuple[str, list[str]]]) -> list[str]:
    """Return the errors among `classes` outside the family or without a built-in error."""
    def family(name: str) -> bool:
        return name == 'TritonPerceptionError' or (
            name in classes and any(family(base) for base in classes[name][1]))

    def built_in(name: str) -> bool:
        return name in BUILT_IN_ERRORS - {'Exception', 'BaseException'} or (
            name in classes and any(built_in(base) for base in classes[name][1]))
    problems = []
    for name, (where, bases) in sorted(classes.items()):
        if name == 'TritonPerceptionError':
            continue
        is_error = any(family(base) or base in BUILT_IN_ERRORS for base in bases)
        if is_error and not (family(name) and built_in(name)):
            problems.append(f'{where} {name}({", ".join(bases)})')
    return problems


def test_every_error_is_of_the_family_and_of_a_built_in_error() -> None:
    """A class that derives from a built-in error derives from the family, and the other way."""
    assert family_problems(error_classes()) == []


def test_the_check_sees_an_error_outside_the_family() -> None:
    """Positive control: a bare Exception subclass and a family member without a built-in."""
    classes = {**error_classes(), 'Bare': ('x.py:1', ['Exception']),
               'Half': ('y.py:1', ['TritonPerceptionError'])}
    assert family_problems(classes) == ['x.py:1 Bare(Exception)',
                                        'y.py:1 Half(TritonPerceptionError)']
