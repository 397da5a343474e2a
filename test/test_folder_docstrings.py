"""
Each folder's docstring says what it imports, and the code holds to it.

The last line of every folder's `__init__.py` docstring names, as `Imports: ...`, the units of
the package its modules import (folders and root modules; `errors.py` is open to all). A module
that starts importing another unit, or stops, fails here until the docstring says so; a folder
that says "no rclpy" imports no rclpy. Read with `ast`.
"""
from __future__ import annotations

import ast
import re

import pytest

from conftest import REPO

PACKAGE = REPO / 'triton_perception'
FOLDERS = sorted(path.name for path in PACKAGE.iterdir() if (path / '__init__.py').is_file())


def imported(folder: str) -> tuple[set[str], bool]:
    """Return the units a folder's modules import (`frames/`, `qos.py`) and whether rclpy."""
    units, rclpy = set(), False
    for path in (PACKAGE / folder).rglob('*.py'):
        if path == PACKAGE / folder / '__init__.py':
            continue  # the face imports its own modules and the face loader
        for node in ast.walk(ast.parse(path.read_text())):
            modules = [node.module] if isinstance(node, ast.ImportFrom) and node.module else \
                [alias.name for alias in node.names] if isinstance(node, ast.Import) else []
            for module in modules:
                parts = module.split('.')
                rclpy = rclpy or parts[0] == 'rclpy'
                if parts[0] == 'triton_perception' and len(parts) > 1 \
                        and parts[1] not in (folder, 'errors'):
                    units.add(f'{parts[1]}/' if parts[1] in FOLDERS else f'{parts[1]}.py')
    return units, rclpy


@pytest.mark.parametrize('folder', FOLDERS)
def test_a_folder_imports_what_its_docstring_declares(folder: str) -> None:
    """`Imports: ...` lists exactly the units imported; 'no rclpy' holds where it is said."""
    docstring = ast.get_docstring(ast.parse((PACKAGE / folder / '__init__.py').read_text()))
    assert docstring and 'Imports: ' in docstring, f'{folder}/__init__.py declares no Imports:'
    declared_text = docstring[docstring.index('Imports: '):]
    declared = set(re.findall(r'`([a-z_]+/|[a-z_]+\.py)`', declared_text))
    units, rclpy = imported(folder)
    assert declared == units, f'{folder}/: declared {sorted(declared)}, imported {sorted(units)}'
    if re.search(r'\bno rclpy\b', docstring, re.IGNORECASE):
        assert not rclpy, f'{folder}/ says it imports no rclpy, but a module does'
