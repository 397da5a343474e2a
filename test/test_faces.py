"""
Every folder has a public face, and other folders use nothing else of it.

Each folder's `__init__.py` says what other folders may use: its `__all__`, where each name is
defined (the `lazy_face` table, or imports for the folders imported whole) and the same names
for type checkers. A module that imports a name from deeper inside another folder, or a name the
face does not export, fails here, as does a face that holds code of its own. Within a folder,
modules import each other directly. Read with `ast`; the faces are also imported to check that
every exported name exists.
"""
from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

from conftest import REPO

PACKAGE = REPO / 'triton_perception'
FOLDERS = sorted(path.name for path in PACKAGE.iterdir() if (path / '__init__.py').is_file())
# What the package's own files and the launch files import; tests may reach inside folders.
SOURCES = [path for path in sorted(PACKAGE.rglob('*.py')) if path.name != '__init__.py'] + \
    sorted((REPO / 'launch').glob('*.py'))


def own_folder(path: Path) -> str | None:
    """Return the top folder of the package a file belongs to (None: the root or launch/)."""
    if not path.is_relative_to(PACKAGE):
        return None
    parts = path.relative_to(PACKAGE).parts
    return parts[0] if len(parts) > 1 else None


def face(folder: str) -> ast.Module:
    """Return the parsed `__init__.py` of a folder."""
    return ast.parse((PACKAGE / folder / '__init__.py').read_text())


def declared_all(folder: str) -> list[str]:
    """Return the literal `__all__` of a folder's face."""
    for node in face(folder).body:
        if isinstance(node, ast.Assign) and any(
                isinstance(target, ast.Name) and target.id == '__all__' for target in node.targets):
            return list(ast.literal_eval(node.value))
    return []


def test_every_folder_exports_its_public_names() -> None:
    """Each face has an `__all__`, and every name in it can be taken from the folder."""
    for folder in FOLDERS:
        names = declared_all(folder)
        assert names, f'{folder}/__init__.py exports nothing (__all__)'
        module = importlib.import_module(f'triton_perception.{folder}')
        for name in names:
            assert getattr(module, name) is not None, (folder, name)


@pytest.mark.parametrize('folder', FOLDERS)
def test_a_face_holds_no_code_and_names_each_export_once_for_type_checkers(folder: str) -> None:
    """Docstring, imports, `__all__` and the lazy table only; the three lists agree."""
    typed: set[str] = set()
    table: set[str] = set()
    for node in face(folder).body:
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            continue  # the docstring
        if isinstance(node, ast.ImportFrom):
            if node.module and node.module.startswith(f'triton_perception.{folder}.') \
                    and node.module != 'triton_perception.system.faces':  # the face loader
                typed.update(alias.asname or alias.name for alias in node.names)
            continue
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) \
                and node.test.id == 'TYPE_CHECKING':
            for statement in node.body:
                assert isinstance(statement, ast.ImportFrom), (folder, ast.dump(statement))
                typed.update(alias.asname or alias.name for alias in statement.names)
            continue
        assert isinstance(node, ast.Assign), \
            f'{folder}/__init__.py holds code: line {node.lineno}'
        target = node.targets[0]
        assert isinstance(target, ast.Name) and target.id in ('__all__', '__getattr__'), \
            f'{folder}/__init__.py line {node.lineno}'
        if target.id == '__getattr__':
            assert isinstance(node.value, ast.Call) and isinstance(node.value.args[1], ast.Dict)
            for names in node.value.args[1].values:
                table.update(ast.literal_eval(names))
    exported = set(declared_all(folder))
    assert typed == exported, f'{folder}: imported for type checkers but not exported, or ' \
        f'the other way round: {sorted(typed ^ exported)}'
    assert not table or table == exported, f'{folder}: lazy table and __all__ differ: ' \
        f'{sorted(table ^ exported)}'


def test_other_folders_import_only_through_faces() -> None:
    """No module reaches past another folder's face, and each name it takes is exported."""
    problems = []
    exported = {folder: set(declared_all(folder)) for folder in FOLDERS}
    for path in SOURCES:
        own = own_folder(path)
        for node in ast.walk(ast.parse(path.read_text())):
            modules: list[tuple[str, list[str]]] = []
            if isinstance(node, ast.ImportFrom) and node.module:
                modules = [(node.module, [alias.name for alias in node.names])]
            elif isinstance(node, ast.Import):
                modules = [(alias.name, []) for alias in node.names]
            for module, names in modules:
                parts = module.split('.')
                if parts[0] != 'triton_perception' or len(parts) < 2 \
                        or parts[1] not in FOLDERS or parts[1] == own:
                    continue
                where = f'{path.relative_to(REPO)}:{node.lineno}'
                if len(parts) > 2:
                    problems.append(f'{where} imports {module}, past the face of {parts[1]}/')
                problems += [f'{where} takes {name} from {parts[1]}/, which does not export it'
                             for name in names if name not in exported[parts[1]]]
    assert problems == [], '\n'.join(problems)
