"""
The package uses only the rclpy, launch and launch_ros API that ROS 2 Humble has.

Humble is JetPack 6's ROS; newer API is used only behind a capability check.

The development machine runs newer releases (rclpy from Kilted, launch from Jazzy), so a call
Humble lacks would pass every other test here and fail on the Orin. This test reads the package's
sources and launch files and compares what they use with those packages' `humble` branches
(test/data/humble_python_api.json, made by test/support/python_api.py) and with the installed
releases:
- every `from rclpy.X import Y` (launch, launch_ros alike) names a module and a name Humble has;
- no method that only rclpy releases after Humble define is called (properties are not
  told from plain attributes, so a newer property would pass), nor a name of the `rclpy` module
  used that Humble's lacks;
- no keyword argument that only later releases accept is passed to their functions, methods
  or classes;
unless the use sits inside a capability check (test/support/capability_checks.py says what counts).
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
import json
from pathlib import Path

import launch
import launch_ros
import pytest
import rclpy

from support.capability_checks import guarded_nodes
from support.checkout import REPO
from support.python_api import Api, package_api

HUMBLE = json.loads((REPO / 'test' / 'data' / 'humble_python_api.json').read_text(encoding='utf-8'))
INSTALLED = (rclpy, launch, launch_ros)
PACKAGE_SOURCES = sorted([*(REPO / 'triton_perception').rglob('*.py'),
                          *(REPO / 'launch').glob('*.py')])


@dataclass(frozen=True)
class ApiIndex:
    """
    What one distribution's rclpy, launch and launch_ros offer.

    Each module's names, the public methods of their classes, and the parameters of functions,
    methods and classes.
    """

    modules: dict[str, set[str]]
    methods: frozenset[str]
    parameters: dict[str, set[str]]

    @classmethod
    def of(cls, modules: dict[str, Api]) -> 'ApiIndex':
        """Index the API of `modules` (module name -> its API, as python_api gives it)."""
        methods: set[str] = set()
        parameters: dict[str, set[str]] = {}
        for module in modules.values():
            for name, function_parameters in module['functions'].items():
                parameters.setdefault(name, set()).update(function_parameters)
            for class_api in module['classes'].values():
                for member, member_parameters in class_api['members'].items():
                    if member_parameters is None:
                        continue  # an attribute, not a method
                    parameters.setdefault(member, set()).update(member_parameters)
                    if not member.startswith('_'):
                        methods.add(member)
        # Classes by name: rclpy and launch_ros both have a Node; a call may mean either.
        classes: dict[str, list[Api]] = {}
        for module in modules.values():
            for name, class_api in module['classes'].items():
                classes.setdefault(name, []).append(class_api)
        for name in classes:
            parameters[name] = _class_parameters(name, classes, set())
        return cls({name: set(module['names']) for name, module in modules.items()},
                   frozenset(methods), parameters)


def _class_parameters(name: str, classes: dict[str, list[Api]], seen: set[str]) -> set[str]:
    """
    Return what calling a class of that name accepts.

    `__init__`'s parameters, and where it forwards **kwargs, its bases' (launch_ros's Node ->
    ExecuteProcess -> ExecuteLocal). '**' stays when a base is not known here, and then any keyword
    passes.
    """
    if name not in classes or name in seen:
        return {'**'}
    accepted: set[str] = set()
    for class_api in classes[name]:
        own = set(class_api['members'].get('__init__') or ['**'])
        if '**' in own and class_api['bases']:
            own.discard('**')
            for base in class_api['bases']:
                own |= _class_parameters(base, classes, seen | {name})
        accepted |= own
    return accepted


HUMBLE_API = ApiIndex.of({name: module for package in HUMBLE.values()
                          for name, module in package['modules'].items()})


@pytest.fixture(scope='module')
def installed_api() -> ApiIndex:
    """Return the index of the installed rclpy, launch and launch_ros."""
    return ApiIndex.of({name: module for package in INSTALLED
                        for name, module in package_api(Path(package.__file__).parent).items()})


def defined_names(trees: list[ast.AST]) -> set[str]:
    """
    Functions, classes and attributes the package defines itself.

    A method of its own may share a name with a newer rclpy method.
    """
    names = set()
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(node.name)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                names.add(node.attr)
    return names


def humble_incompatibilities(installed: ApiIndex, sources: list[Path], root: Path) -> list[str]:
    """'file:line: what' for every unguarded use Humble lacks."""
    trees = {path: ast.parse(path.read_text(encoding='utf-8')) for path in sources}
    newer_methods = installed.methods - HUMBLE_API.methods - defined_names(list(trees.values()))
    problems = []
    for path, tree in trees.items():
        guarded = guarded_nodes(tree)
        where = path.relative_to(root)
        for node in ast.walk(tree):
            if id(node) in guarded:
                continue
            if (isinstance(node, ast.ImportFrom)
                    and (node.module or '').split('.')[0] in HUMBLE):
                known = HUMBLE_API.modules.get(node.module)
                if known is None:
                    problems.append(f'{where}:{node.lineno}: module {node.module} is not in Humble')
                    continue
                problems += [f'{where}:{node.lineno}: {node.module}.{alias.name} is not in Humble'
                             for alias in node.names if alias.name not in known]
            elif (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                  and node.value.id == 'rclpy' and node.attr not in HUMBLE_API.modules['rclpy']):
                problems.append(f'{where}:{node.lineno}: rclpy.{node.attr} is not in Humble')
            elif isinstance(node, ast.Call):
                if isinstance(node.func, ast.Attribute) and node.func.attr in newer_methods:
                    problems.append(f'{where}:{node.lineno}: .{node.func.attr}() is newer than '
                                    'Humble')
                called = (node.func.attr if isinstance(node.func, ast.Attribute)
                          else node.func.id if isinstance(node.func, ast.Name) else None)
                humble_parameters = HUMBLE_API.parameters.get(called)
                if humble_parameters is None or '**' in humble_parameters:
                    continue
                problems += [
                    f'{where}:{node.lineno}: {called}({keyword.arg}=...) is newer than Humble'
                    for keyword in node.keywords
                    if keyword.arg and keyword.arg not in humble_parameters
                    and keyword.arg in installed.parameters.get(called, set())]
    return problems


def test_the_snapshot_is_of_the_humble_branches() -> None:
    """
    The snapshot is of the three humble branches and has what the package relies on.

    A truncated or wrong snapshot would let every use pass.
    """
    assert set(HUMBLE) == {package.__name__ for package in INSTALLED}
    for name, package in HUMBLE.items():
        assert f'github.com/ros2/{name} branch humble' in package['source'], package['source']
    # What the package relies on is there (a truncated or wrong snapshot would pass everything).
    assert {'init', 'try_shutdown', 'create_node'} <= HUMBLE_API.modules['rclpy']
    assert 'LifecycleNode' in HUMBLE_API.modules['rclpy.lifecycle']
    assert 'event_callbacks' in HUMBLE_API.parameters['create_subscription']
    assert 'ros_arguments' in HUMBLE_API.parameters['Node']
    assert 'OpaqueFunction' in HUMBLE_API.modules['launch.actions']


def test_the_package_uses_only_humble_rclpy_or_checks_first(installed_api: ApiIndex) -> None:
    """The package and its launch files use no API Humble lacks outside a capability check."""
    assert humble_incompatibilities(installed_api, PACKAGE_SOURCES, REPO) == []


def test_a_newer_api_outside_a_capability_check_is_found(installed_api: ApiIndex,
                                                         tmp_path: Path) -> None:
    """Positive control: uses Humble lacks, written plainly and then behind checks."""
    newer_name = sorted(installed_api.methods - HUMBLE_API.methods)[0]
    called, keyword = min(
        (called, keyword) for called, accepted in installed_api.parameters.items()
        if called in HUMBLE_API.parameters and '**' not in HUMBLE_API.parameters[called]
        for keyword in accepted - HUMBLE_API.parameters[called] - {'**'})
    plain = tmp_path / 'plain.py'
    plain.write_text(
        'from rclpy.event_handler import SubscriptionEventCallbacks\n'
        f'def f(node):\n    node.{called}({keyword}=1)\n    return node.{newer_name}()\n',
        encoding='utf-8')
    checked = tmp_path / 'checked.py'
    checked.write_text(
        'try:\n    from rclpy.event_handler import SubscriptionEventCallbacks\n'
        'except ImportError:\n    from rclpy.qos_event import SubscriptionEventCallbacks\n'
        f'def f(node):\n    if hasattr(node, "{newer_name}"):\n'
        f'        return node.{newer_name}()\n', encoding='utf-8')
    found = humble_incompatibilities(installed_api, [plain], tmp_path)
    assert any('rclpy.event_handler is not in Humble' in problem for problem in found), found
    assert any(f'.{newer_name}() is newer than Humble' in problem for problem in found), found
    assert any(f'{called}({keyword}=...) is newer than Humble' in problem
               for problem in found), found
    assert humble_incompatibilities(installed_api, [checked], tmp_path) == []


def test_message_fields_are_checked_as_on_humble() -> None:
    """Humble checks every message field assignment; the suite turns the same checks on."""
    from nav_msgs.msg import OccupancyGrid
    grid = OccupancyGrid()
    with pytest.raises(AssertionError):
        grid.data = bytes([255])  # the byte of a -1 cell: not an int8 value
    with pytest.raises(AssertionError):
        grid.info.resolution = 1  # an int where a float is declared
