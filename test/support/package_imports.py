"""
The package's own import graph, read from its sources with `ast`, and the search for a cycle in it.

Every import statement of a module counts, those inside functions as well.
"""
from __future__ import annotations

import ast
from pathlib import Path

from support.checkout import REPO

PACKAGE = REPO / 'triton_perception'


def module_name(path: Path) -> str:
    """Return the dotted module name of a file of the package."""
    parts = path.relative_to(REPO).with_suffix('').parts
    return '.'.join(parts[:-1] if parts[-1] == '__init__' else parts)


def import_graph() -> dict[str, set[str]]:
    """Map each module of the package to the package's modules it imports."""
    modules = {module_name(path): path for path in PACKAGE.rglob('*.py')}
    graph = {}
    for name, path in modules.items():
        imported = set()
        for node in ast.walk(ast.parse(path.read_text(encoding='utf-8'))):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                named = {f'{node.module}.{alias.name}' for alias in node.names}
                # `from triton_perception import bag` imports the folder, not the root's code.
                imported |= named if named <= set(modules) else {node.module, *named}
            elif isinstance(node, ast.Import):
                imported |= {alias.name for alias in node.names}
        graph[name] = {target for target in imported if target in modules and target != name}
    return graph


def cycle_through(graph: dict[str, set[str]], start: str) -> list[str] | None:
    """Return a path of imports from `start` back to itself, if there is one."""
    paths, seen = [[start]], set()
    while paths:
        path = paths.pop()
        for target in sorted(graph[path[-1]]):
            if target == start:
                return path + [start]
            if target not in seen:
                seen.add(target)
                paths.append(path + [target])
    return None
