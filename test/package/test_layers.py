"""
Imports point down the layers of docs/architecture.md, never up or sideways.

The layers are read from that page's table, so the page is their one definition. Each module
belongs to a unit: its top folder under triton_perception/, or itself for a module at the root.
A module may import its own unit and units on lower layers only; as a consequence no two
folders import each other, which the cycle test between folders states on its own.
"""
from __future__ import annotations

import re

import pytest

from support.checkout import REPO
from support.package_imports import cycle_through, import_graph

ARCHITECTURE = REPO / 'docs' / 'architecture.md'
ROW = re.compile(r'^\| (\d+) \| (`[^|]+`) \|')
INNER_ROW = re.compile(r'^\| `([a-z_]+)/` \| (\d+) \| `([a-z_.]+)/?` \|')


def layers() -> dict[str, int]:
    """Map each unit (`system`, `parameters`, ...) to its layer number from the table."""
    found: dict[str, int] = {}
    for line in ARCHITECTURE.read_text(encoding='utf-8').splitlines():
        match = ROW.match(line)
        if match:
            for held in re.findall(r'`([^`]+)`', match.group(2)):
                found[held.rstrip('/').removesuffix('.py')] = int(match.group(1))
    return found


def unit_of(module: str) -> str:
    """`triton_perception.lanes.decode` -> `lanes`; the package itself -> `__init__`."""
    parts = module.split('.')
    return parts[1] if len(parts) > 1 else '__init__'


def upward_imports(graph: dict[str, set[str]], layer_of: dict[str, int]) -> list[str]:
    """Every import from one unit to another on the same or a higher layer."""
    wrong = []
    for module, targets in sorted(graph.items()):
        for target in sorted(targets):
            source_unit, target_unit = unit_of(module), unit_of(target)
            if source_unit != target_unit and layer_of[target_unit] >= layer_of[source_unit]:
                wrong.append(f'{module} (layer {layer_of[source_unit]}) imports {target} '
                             f'(layer {layer_of[target_unit]})')
    return wrong


def inner_layers() -> dict[str, dict[str, int]]:
    """Map each folder with rooms to its rooms' layers (`.` is the folder's own modules)."""
    found: dict[str, dict[str, int]] = {}
    for line in ARCHITECTURE.read_text(encoding='utf-8').splitlines():
        match = INNER_ROW.match(line)
        if match:
            found.setdefault(match.group(1), {})[match.group(3)] = int(match.group(2))
    return found


def room_of(module: str, folder: str, rooms: dict[str, int]) -> str | None:
    """
    Return the room of `folder` that holds `module` (None outside the folder or its face).

    `triton_perception.evaluation.metrics.metric` -> `metrics`; `.` for the folder's own modules.
    """
    parts = module.split('.')
    if len(parts) < 3 or parts[1] != folder:
        return None
    return parts[2] if parts[2] in rooms else '.'


def imports_against_rooms(graph: dict[str, set[str]],
                          rooms: dict[str, dict[str, int]]) -> list[str]:
    """Every import between two rooms of one folder that does not point down."""
    wrong = []
    for folder, layer_of in sorted(rooms.items()):
        for module, targets in sorted(graph.items()):
            source = room_of(module, folder, layer_of)
            for target in sorted(targets):
                room = room_of(target, folder, layer_of)
                if source is None or room is None or room == source:
                    continue
                if layer_of[room] >= layer_of[source]:
                    wrong.append(f'{module} ({folder}/{source}, layer {layer_of[source]}) '
                                 f'imports {target} ({folder}/{room}, layer {layer_of[room]})')
    return wrong


def folder_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """Return the import graph between units."""
    units: dict[str, set[str]] = {}
    for module, targets in graph.items():
        units.setdefault(unit_of(module), set()).update(
            unit_of(target) for target in targets if unit_of(target) != unit_of(module))
    for targets in list(units.values()):
        for target in targets:
            units.setdefault(target, set())
    return units


def test_every_folder_and_root_module_has_a_layer() -> None:
    """Every folder and root module of the package has a row in the architecture's layer table."""
    layer_of = layers()
    missing = sorted({unit_of(module) for module in import_graph()} - set(layer_of))
    assert not missing, f'add these to the layer table of {ARCHITECTURE}: {missing}'


def test_no_import_points_up_or_sideways() -> None:
    """No module imports another unit on its own or a higher layer: imports point down."""
    wrong = upward_imports(import_graph(), layers())
    assert not wrong, 'imports against the layers of docs/architecture.md:\n' + '\n'.join(wrong)


def test_no_two_folders_import_each_other() -> None:
    """No two folders import each other, directly or through others."""
    units = folder_graph(import_graph())
    cycles = [cycle for cycle in (cycle_through(units, unit) for unit in sorted(units)) if cycle]
    assert not cycles, 'folder cycles: ' + '; '.join(' -> '.join(cycle) for cycle in cycles)


def test_every_room_of_a_folder_has_a_layer() -> None:
    """Each folder holding folders lists every room of it (and `.` for its own modules)."""
    rooms = inner_layers()
    package = REPO / 'triton_perception'
    for folder in sorted(path.parent for path in package.glob('*/*/__init__.py')):
        top = folder.parent
        expected = {path.parent.name for path in top.glob('*/__init__.py')} | (
            {'.'} if [path for path in top.glob('*.py') if path.name != '__init__.py'] else set())
        assert set(rooms.get(top.name, {})) == expected, (
            f'the rooms of {top.name}/ in the table of {ARCHITECTURE}: {sorted(expected)}')


def test_no_import_points_up_or_sideways_inside_a_folder() -> None:
    """Inside a folder with rooms, imports point down its rooms' layers too."""
    wrong = imports_against_rooms(import_graph(), inner_layers())
    assert not wrong, 'imports against the rooms of docs/architecture.md:\n' + '\n'.join(wrong)


def test_an_import_up_a_folders_rooms_is_found() -> None:
    """Positive control: comparison/ importing one of evaluation/'s own modules."""
    graph = import_graph()
    source = 'triton_perception.evaluation.comparison.run_pairing'
    graph[source] = graph[source] | {'triton_perception.evaluation.drives'}
    assert imports_against_rooms(graph, inner_layers()) == [
        f'{source} (evaluation/comparison, layer 2) imports triton_perception.evaluation.drives '
        '(evaluation/., layer 3)']


@pytest.mark.parametrize('source, target', [
    ('triton_perception.frames.accounting', 'triton_perception.nodes.base'),
    ('triton_perception.serving.requests.triton_client', 'triton_perception.ground.camera'),
])
def test_an_upward_or_sideways_import_is_found(source: str, target: str) -> None:
    """Positive control: the real graph plus one import up (frames -> nodes) or sideways."""
    graph = import_graph()
    graph[source] = graph[source] | {target}
    wrong = upward_imports(graph, layers())
    assert wrong == [next(line for line in wrong if line.startswith(source))]
    assert target in wrong[0]
