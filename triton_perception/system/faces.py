"""
A folder's public face that imports each name only when it is first asked for.

Each folder's `__init__.py` names what other folders may use (its `__all__`) and where each name
is defined; `lazy_face` turns that into the module's `__getattr__` (PEP 562). Importing
`triton_perception.bag` then costs nothing, and `from triton_perception.bag import make_bag`
loads `bag.make` alone: the launch files read the plan without numpy, and a node process does not
import onnx because a graph constant is public. The `if TYPE_CHECKING:` imports beside it give
type checkers the same names; `test/test_faces.py` holds the three lists to one another.
"""
from __future__ import annotations

import importlib
import sys
from typing import Any, Callable


def lazy_face(package: str, exports: dict[str, tuple[str, ...]]) -> Callable[[str], Any]:
    """
    Return the `__getattr__` of `package`'s face: {module (relative, dotted): names} it exports.

    A name is imported from its module when first asked for and kept on the package, so the
    next access is an ordinary attribute.
    """
    modules = {name: module for module, names in exports.items() for name in names}

    def face_getattr(name: str) -> Any:
        module = modules.get(name)
        if module is None:
            raise AttributeError(f'module {package!r} has no attribute {name!r}')
        value = getattr(importlib.import_module(f'{package}.{module}'), name)
        setattr(sys.modules[package], name, value)
        return value
    return face_getattr
