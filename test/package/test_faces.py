"""
Every folder has a public face, and other folders use nothing else of it.

Each folder's `__init__.pyi` lists what other folders may use, once: one re-export line per
name from the folder's own modules. Its `__init__.py` is the docstring and the one line that
makes the lazy face from that stub (faces.py). A module that imports a name from deeper
inside another folder, or a name the face does not export, fails here, as does a face that
holds code of its own. Within a folder, modules import each other directly. Read with `ast`;
the faces are also imported to check that every exported name exists.
"""
from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

from conftest import REPO
from triton_perception.faces import face_exports

PACKAGE = REPO / 'triton_perception'
FOLDERS = sorted(path.name for path in PACKAGE.iterdir() if (path / '__init__.py').is_file())
FACES = sorted(path.parent for path in PACKAGE.rglob('__init__.py') if path.parent != PACKAGE)
# What the package's own files and the launch files import; tests may reach inside folders.
SOURCES = [path for path in sorted(PACKAGE.rglob('*.py')) if path.name != '__init__.py'] + \
    sorted((REPO / 'launch').glob('*.py'))
LOADER = '__getattr__, __dir__, __all__ = lazy_face(__name__, __file__)'


def own_folder(path: Path) -> str | None:
    """Return the top folder of the package a file belongs to (None: the root or launch/)."""
    if not path.is_relative_to(PACKAGE):
        return None
    parts = path.relative_to(PACKAGE).parts
    return parts[0] if len(parts) > 1 else None


def declared_all(folder: str) -> list[str]:
    """Return the names a folder's face exports, from its stub."""
    return list(face_exports(PACKAGE / folder / '__init__.pyi'))


def dotted(face: Path) -> str:
    """Return the module name of a face's folder."""
    return '.'.join(face.relative_to(REPO).parts)


def test_every_folder_exports_its_public_names() -> None:
    """Each face exports something, and every name in it can be taken from the folder."""
    for face in FACES:
        names = list(face_exports(face / '__init__.pyi'))
        assert names, f'{face}/__init__.pyi exports nothing'
        module = importlib.import_module(dotted(face))
        assert module.__all__ == names
        for name in names:
            assert getattr(module, name) is not None, (face, name)


@pytest.mark.parametrize('folder', FOLDERS)
def test_a_face_holds_no_code_and_lists_each_export_once(folder: str) -> None:
    """`__init__.py`: docstring and loader; `__init__.pyi`: one `NAME as NAME` line a name."""
    for face in [PACKAGE / folder, *[path.parent for path in (PACKAGE / folder).glob(
            '*/__init__.py')]]:
        init = ast.parse((face / '__init__.py').read_text(encoding='utf-8'))
        assert isinstance(init.body[0], ast.Expr) and isinstance(init.body[0].value,
                                                                 ast.Constant), face
        assert [ast.unparse(node) for node in init.body[1:]] == [
            'from triton_perception.faces import lazy_face', LOADER], face
        seen: list[str] = []
        stub = ast.parse((face / '__init__.pyi').read_text(encoding='utf-8'))
        for node in stub.body[1:]:
            assert isinstance(node, ast.ImportFrom) and node.module, (face, ast.dump(node))
            assert node.module.startswith(dotted(face) + '.'), (face, node.module)
            if [alias.name for alias in node.names] == ['*']:
                assert (REPO.joinpath(*node.module.split('.')) / '__init__.pyi').is_file(), \
                    f"{face}: import * takes only a subfolder's face"
                continue
            for alias in node.names:
                assert alias.asname == alias.name, f'{face}: {alias.name} is not re-exported'
                seen.append(alias.name)
        assert len(seen) == len(set(seen)), f'{face}: a name listed twice'
        # Importing a submodule sets the package's attribute of its name to the module, which
        # would then hide an exported name the same.
        modules = {path.stem for path in face.glob('*.py')} | {
            path.name for path in face.iterdir() if path.is_dir()}
        assert not modules & set(seen), (face, modules & set(seen))


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
