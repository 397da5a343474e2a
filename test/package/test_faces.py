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

from support.checkout import REPO
from triton_perception.faces import face_exports

PACKAGE = REPO / 'triton_perception'
FOLDERS = sorted(path.name for path in PACKAGE.iterdir() if (path / '__init__.py').is_file())
FACES = sorted(path.parent for path in PACKAGE.rglob('__init__.py') if path.parent != PACKAGE)
# What the package's own files and the launch files import; tests may reach inside folders.
SOURCES = [path for path in sorted(PACKAGE.rglob('*.py')) if path.name != '__init__.py'] + \
    sorted((REPO / 'launch').glob('*.py'))
LOADER = '__getattr__, __dir__, __all__ = lazy_face(__name__, __file__)'
# Every face's module name -> the names it exports, at every level (`triton_perception.serving`,
# `triton_perception.serving.requests`, ...).
FACE_NAMES = {'.'.join(face.relative_to(REPO).parts): set(face_exports(face / '__init__.pyi'))
              for face in FACES}


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
            '*/**/__init__.py')]]:
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


def outermost_face_between(module: str, source: str) -> str | None:
    """Return the outermost face that holds `module` but not `source` (None: no face between)."""
    for face in sorted(FACE_NAMES, key=len):
        if (module == face or module.startswith(face + '.')) and not source.startswith(face + '.'):
            return face
    return None


def imports_past_faces(path: Path, text: str | None = None) -> list[str]:
    """Return each import of `path` that reaches past a face, or takes a name it does not export."""
    source = '.'.join(path.relative_to(REPO).with_suffix('').parts)
    problems = []
    for node in ast.walk(ast.parse(path.read_text() if text is None else text)):
        modules: list[tuple[str, list[str]]] = []
        if isinstance(node, ast.ImportFrom) and node.module:
            modules = [(node.module, [alias.name for alias in node.names])]
        elif isinstance(node, ast.Import):
            modules = [(alias.name, []) for alias in node.names]
        for module, names in modules:
            face = outermost_face_between(module, source)
            if face is None:
                continue
            where = f'{path.relative_to(REPO)}:{node.lineno}'
            folder = face.replace('.', '/').removeprefix('triton_perception/') + '/'
            if module != face:
                problems.append(f'{where} imports {module}, past the face of {folder}')
            problems += [f'{where} takes {name} from {folder}, which does not export it'
                         for name in names if name not in FACE_NAMES[face]]
    return problems


def test_other_folders_import_only_through_faces() -> None:
    """At every level, no module reaches past the face of a folder it is not in."""
    problems = [problem for path in SOURCES for problem in imports_past_faces(path)]
    assert problems == [], '\n'.join(problems)


def test_an_import_past_a_subfolders_face_is_found() -> None:
    """Positive control: a module of evaluation/ reaching into comparison/ past its face."""
    text = 'from triton_perception.evaluation.comparison.run_pairing import FIGURES\n'
    assert imports_past_faces(PACKAGE / 'evaluation' / 'reach_in.py', text) == [
        'triton_perception/evaluation/reach_in.py:1 imports '
        'triton_perception.evaluation.comparison.run_pairing, '
        'past the face of evaluation/comparison/']
    assert imports_past_faces(PACKAGE / 'evaluation' / 'comparison' / 'x.py', text) == []
