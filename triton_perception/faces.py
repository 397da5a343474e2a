"""
A folder's public face: its names written once, imported when first asked for.

Each folder's `__init__.pyi` lists what other folders may use, one
`from triton_perception.FOLDER.MODULE import NAME as NAME` per name (the re-export form of
PEP 484's stubs), and nothing else. Type checkers read that stub instead of `__init__.py`; at
run time `lazy_face` reads the same stub and makes the module's `__getattr__` (PEP 562),
`__dir__` and `__all__` from it, so a name is imported from its module only when first asked
for: a launch file that reads the plan loads no numpy, and a node process no onnx because a
graph constant is public. Scientific Python's SPEC 1 (the lazy_loader package's
`attach_stub`) does the same; this is that, without a dependency on the robot.
"""
from __future__ import annotations

import ast
import importlib
from pathlib import Path
import sys
from typing import Any, Callable

PACKAGE = Path(__file__).resolve().parent


def face_exports(stub: Path) -> dict[str, str]:
    """
    Return {name: module} of a face's stub, in the stub's order.

    `from triton_perception.FOLDER.SUB import *` takes every name of the subfolder's own face
    (a stub's `import *` re-exports them all), so a name is still written in one place.
    """
    exports: dict[str, str] = {}
    for node in ast.parse(stub.read_text(encoding='utf-8')).body:
        if isinstance(node, ast.ImportFrom) and node.module:
            if [alias.name for alias in node.names] == ['*']:
                subface = PACKAGE.joinpath(*node.module.split('.')[1:], '__init__.pyi')
                exports.update(dict.fromkeys(face_exports(subface), node.module))
            else:
                exports.update((alias.asname or alias.name, node.module) for alias in node.names)
    return exports


FaceAttributes = tuple[Callable[[str], Any], Callable[[], list[str]], list[str]]


def lazy_face(package: str, init_file: str) -> FaceAttributes:
    """
    Return `__getattr__`, `__dir__` and `__all__` of `package`, read from its `__init__.pyi`.

    A name is imported from its module when first asked for and kept on the package, so the
    next access is an ordinary attribute.
    """
    modules = face_exports(Path(init_file).with_suffix('.pyi'))

    def face_getattr(name: str) -> Any:
        module = modules.get(name)
        if module is None:
            raise AttributeError(f'module {package!r} has no attribute {name!r}')
        value = getattr(importlib.import_module(module), name)
        setattr(sys.modules[package], name, value)
        return value

    def face_dir() -> list[str]:
        return sorted({*modules, *vars(sys.modules[package])})
    return face_getattr, face_dir, list(modules)
