"""
A folder whose docstring says "no rclpy" imports no rclpy.

Such folders (frames/, health/, outputs/) are what tests and tools use without ROS; which folder
may import which is test/package/test_layers.py's one rule. Read with `ast`.
"""
from __future__ import annotations

import ast
import re

import pytest

from support.checkout import REPO

PACKAGE = REPO / 'triton_perception'
FOLDERS = sorted(path.name for path in PACKAGE.iterdir() if (path / '__init__.py').is_file())


def imports_rclpy(folder: str) -> bool:
    """Return whether any module of a folder imports rclpy."""
    for path in (PACKAGE / folder).rglob('*.py'):
        for node in ast.walk(ast.parse(path.read_text())):
            modules = [node.module] if isinstance(node, ast.ImportFrom) and node.module else \
                [alias.name for alias in node.names] if isinstance(node, ast.Import) else []
            if any(module.split('.')[0] == 'rclpy' for module in modules):
                return True
    return False


@pytest.mark.parametrize('folder', FOLDERS)
def test_a_folder_that_says_no_rclpy_imports_none(folder: str) -> None:
    """'no rclpy' in a folder's docstring holds for every module of it."""
    docstring = ast.get_docstring(ast.parse((PACKAGE / folder / '__init__.py').read_text()))
    assert docstring, f'{folder}/__init__.py has no docstring'
    if re.search(r'\bno rclpy\b', docstring, re.IGNORECASE):
        assert not imports_rclpy(folder), f'{folder}/ says it imports no rclpy, but a module does'
