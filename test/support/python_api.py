"""
The public API of pure-Python ROS packages (rclpy, launch, launch_ros).

It is read from their source files without importing them, so any distribution's tree can be read
here: per module, the public names it binds; per class, its bases and public members; per function,
method and class, its parameter names.

test/data/humble_python_api.json is this module's output for the `humble` branches of
https://github.com/ros2/rclpy, https://github.com/ros2/launch and https://github.com/ros2/launch_ros
(ROS 2 Humble, JetPack 6's ROS). Regenerate it from checkouts of those branches:

    python test/support/python_api.py rclpy/rclpy/rclpy launch/launch/launch \
        launch_ros/launch_ros/launch_ros --source "<repository> humble <commit>" ... \
        > test/data/humble_python_api.json
"""
from __future__ import annotations

import argparse
import ast
import json
from pathlib import Path
import re
from typing import Any

Api = dict[str, Any]


def parameters(function: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    """Every name a caller may pass by keyword; '**' when it takes any."""
    arguments = function.args
    names = [argument.arg for argument in
             [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]]
    return names + (['**'] if arguments.kwarg else [])


def _public(name: str) -> bool:
    """Private names are not API; `__init__` is, as the class's own parameters."""
    return not name.startswith('_') or name == '__init__'


def _is_type_checking(node: ast.stmt) -> bool:
    return isinstance(node, ast.If) and 'TYPE_CHECKING' in ast.unparse(node.test)


def _bound_names(statement: ast.stmt) -> list[str]:
    """
    Return the names a module-level or class-level statement binds, imports included.

    rclpy re-exports names that way, e.g. `rclpy.try_shutdown` from rclpy.utilities.
    """
    if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [statement.name]
    if isinstance(statement, (ast.Import, ast.ImportFrom)):
        return [(alias.asname or alias.name).split('.')[0] for alias in statement.names
                if alias.name != '*']
    if isinstance(statement, ast.Assign):
        return [target.id for target in statement.targets if isinstance(target, ast.Name)]
    if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
        return [statement.target.id]
    if isinstance(statement, ast.Try):
        return [name for block in (statement.body, *[h.body for h in statement.handlers],
                                   statement.orelse) for inner in block
                for name in _bound_names(inner)]
    if isinstance(statement, ast.If) and not _is_type_checking(statement):
        return [name for inner in (*statement.body, *statement.orelse)
                for name in _bound_names(inner)]
    return []


def _class_api(node: ast.ClassDef) -> Api:
    """
    Bases (by name) and members (methods with their parameters; None for attributes).

    `__init__`'s parameters are also the class's own, since calling the class passes them.
    """
    members: dict[str, list[str] | None] = {}
    for statement in node.body:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
            members[statement.name] = parameters(statement)
            # Instance attributes set in methods (self.x = ...).
            for inner in ast.walk(statement):
                if isinstance(inner, (ast.Assign, ast.AnnAssign)):
                    targets = inner.targets if isinstance(inner, ast.Assign) else [inner.target]
                    for target in targets:
                        if (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)
                                and target.value.id == 'self'):
                            members.setdefault(target.attr, None)
        else:
            for name in _bound_names(statement):
                members.setdefault(name, None)
    return {'bases': [ast.unparse(base).rsplit('.', 1)[-1] for base in node.bases],
            'members': {name: value for name, value in members.items() if _public(name)}}


def module_api(path: Path) -> Api:
    """Return one module file's public API: its names, functions and classes."""
    tree = ast.parse(path.read_text(encoding='utf-8'))
    names: list[str] = []
    functions: dict[str, list[str]] = {}
    classes: dict[str, Api] = {}
    for statement in tree.body:
        names += _bound_names(statement)
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
            functions[statement.name] = parameters(statement)
        elif isinstance(statement, ast.ClassDef):
            classes[statement.name] = _class_api(statement)
            initialiser = classes[statement.name]['members'].get('__init__')
            if initialiser is not None:
                functions[statement.name] = initialiser
    return {'names': sorted(filter(_public, set(names))),
            'functions': {name: value for name, value in functions.items() if _public(name)},
            'classes': {name: value for name, value in classes.items() if _public(name)}}


def package_api(root: Path) -> dict[str, Api]:
    """Map module names ('rclpy.node') to their API, for every .py file under the package `root`."""
    modules = {}
    for path in sorted(root.rglob('*.py')):
        parts = path.relative_to(root.parent).with_suffix('').parts
        name = '.'.join(parts[:-1] if parts[-1] == '__init__' else parts)
        modules[name] = module_api(path)
    return modules


def main() -> None:
    """Print the API of the packages named on the command line as JSON."""
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('packages', type=Path, nargs='+',
                        help='package directories (e.g. rclpy/rclpy/rclpy)')
    parser.add_argument('--source', required=True, action='append',
                        help='where each came from: repository, branch and commit (once each)')
    arguments = parser.parse_args()
    if len(arguments.source) != len(arguments.packages):
        parser.error('give one --source per package')
    text = json.dumps({package.name: {'source': source, 'modules': package_api(package)}
                       for package, source in zip(arguments.packages, arguments.source)},
                      indent=1, sort_keys=True)
    # Lists of names on one line each: a third of the size, and diffs still show what changed.
    print(re.sub(r'\[\s+("[^\]]*?")\s+\]',
                 lambda match: '[' + ' '.join(match.group(1).split()) + ']', text))


if __name__ == '__main__':
    main()
