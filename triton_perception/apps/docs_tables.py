"""
The reference tables of docs/, generated from the code that defines what they describe.

docs/parameters.md gets the node parameters of `parameters/tables.py`, docs/launch.md the launch
arguments of `pipeline/plan.py` and docs/architecture.md each folder's public face (the `__all__`
of its `__init__.py`, read as text), each between a pair of markers; the prose around them is
written by hand. `triton-perception docs` rewrites the tables; `triton-perception docs --check` (and
test/package/test_docs.py) fails when a committed page differs from what the code says now.
"""
from __future__ import annotations

import json
from pathlib import Path
import re
import sys
import textwrap

from triton_perception.faces import face_exports
from triton_perception.parameters import (COMMON, DETECTION, GROUND, HEALTH, LANES, OVERLAY,
                                          ParameterSpec, ParameterValue, TRANSPORTS, VIDEO_CODECS)
from triton_perception.pipeline import ARGUMENTS, BOOLEAN
from triton_perception.serving import stale_batched_ensembles

DOCS = Path(__file__).resolve().parents[2] / 'docs'
MARKER = re.compile(r'(<!-- BEGIN GENERATED: (?P<name>[a-z_]+) [^>]*-->\n)(?P<body>.*?)'
                    r'(<!-- END GENERATED: (?P=name) -->)', re.S)
TYPE_NAMES = {bool: 'bool', int: 'integer', float: 'double', str: 'string', list: 'double[]'}


def _cell(text: str) -> str:
    """Escape what markdown would read as a column break or an HTML tag."""
    return text.replace('|', '\\|').replace('<', '&lt;').replace('>', '&gt;').replace('\n', ' ')


def _default(value: ParameterValue) -> str:
    return f'`{json.dumps(value)}`'


def _accepted(spec: ParameterSpec) -> str:
    if spec.choices:
        return ', '.join(f'`{choice}`' for choice in spec.choices)
    if spec.low is not None and spec.high is not None:
        return f'[{spec.low:g}, {spec.high:g}]'
    return spec.accepted


def parameter_table(specs: tuple[ParameterSpec, ...]) -> str:
    """Return a markdown table of parameters: name, type, default, range, live, description."""
    lines = ['| parameter | type | default | range or choices | live | description |',
             '| --- | --- | --- | --- | --- | --- |']
    for spec in specs:
        lines.append(f'| `{spec.name}` | {TYPE_NAMES[type(spec.default)]} | '
                     f'{_default(spec.default)} | {_cell(_accepted(spec))} | '
                     f"{'yes' if spec.dynamic else 'no'} | {_cell(spec.description)} |")
    return '\n'.join(lines) + '\n'


def _only(specs: tuple[ParameterSpec, ...]) -> tuple[ParameterSpec, ...]:
    shared = {spec.name for spec in COMMON + GROUND + HEALTH}
    return tuple(spec for spec in specs if spec.name not in shared)


def launch_table() -> str:
    """Return a markdown table of the launch arguments: name, default, choices, description."""
    lines = ['| argument | default | choices | description |', '| --- | --- | --- | --- |']
    for argument in ARGUMENTS:
        choices = ', '.join(f'`{choice}`' for choice in argument.choices)
        kind = 'true or false' if argument.choices == BOOLEAN else choices
        default = f'`{argument.default}`' if argument.default else '(empty)'
        lines.append(f'| `{argument.name}` | {default} | {kind} | '
                     f'{_cell(argument.description)} |')
    return '\n'.join(lines) + '\n'


def transports_table() -> str:
    """Return a markdown table of the camera transports (parameters.TRANSPORTS)."""
    lines = ['| `input_transport` | topic | type | frames |', '| --- | --- | --- | --- |']
    for transport in TRANSPORTS.values():
        taken = ('read from the received bytes' if transport.serialized else
                 "decoded in order on the camera's own thread; see [Video cameras](#video-cameras)")
        what = (f"{' or '.join(transport.formats)}; " if transport.formats else
                f'{VIDEO_CODECS}; ' if transport.is_video else '')
        lines.append(f'| `{transport.name}` | `{transport.topic}` | `{transport.package_type}` | '
                     f'{what}{taken} |')
    return '\n'.join(lines) + '\n'


def faces_table(package: Path = Path(__file__).resolve().parents[1]) -> str:
    """Return a markdown table of what each folder exports (its face's stub)."""
    lines = ['| folder | exports |', '| --- | --- |']
    for stub in sorted(package.glob('*/__init__.pyi')):
        names = ', '.join(f'`{name}`' for name in sorted(face_exports(stub), key=str.lower))
        lines.append(f'| `{stub.parent.name}/` | {names} |')
    return '\n'.join(lines) + '\n'


def generated_tables() -> dict[str, dict[str, str]]:
    """Map each page of docs/ to its tables by marker name."""
    return {
        'parameters.md': {
            'common': parameter_table(COMMON),
            'ground': parameter_table(GROUND),
            'health': parameter_table(HEALTH),
            'detection_node': parameter_table(_only(DETECTION)),
            'lane_node': parameter_table(_only(LANES)),
            'overlay_node': parameter_table(OVERLAY),
        },
        'launch.md': {'launch_arguments': launch_table()},
        'topics.md': {'transports': transports_table()},
        'architecture.md': {'faces': faces_table()},
    }


PARAMS_HEADER = """\
# Parameters of the triton_perception nodes: every parameter, its default, unit and accepted
# values. The launch files and `triton-perception run` pass this file to every node
# (params_file:=... to use another). Parameters marked [live] can be changed while running:
#   ros2 param set /detection_node score_threshold 0.5
# triton_url and input_transport are set by the launch arguments and override this file.
# Written by `triton-perception docs` from triton_perception/parameters/tables.py: edit there.
"""


def _yaml_value(value: ParameterValue) -> str:
    """Write a default as YAML: strings quoted, booleans lower-case, lists inline."""
    if isinstance(value, bool):
        return 'true' if value else 'false'
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list):
        return '[' + ', '.join(_yaml_value(item) for item in value) + ']'
    return repr(value)


def params_yaml() -> str:
    """Return config/params.yaml: each node's parameters at their defaults, commented."""
    sections = [PARAMS_HEADER]
    for node, specs in (('detection_node', DETECTION), ('lane_node', LANES),
                        ('overlay_node', OVERLAY)):
        lines = [f'/**/{node}:', '  ros__parameters:']
        for spec in specs:
            comment = f'{spec.description}. Accepted: {spec.accepted}.' + (
                ' [live]' if spec.dynamic else '')
            lines += textwrap.wrap(comment, width=96, initial_indent='    # ',
                                   subsequent_indent='    # ', break_on_hyphens=False)
            lines.append(f'    {spec.name}: {_yaml_value(spec.default)}')
        sections.append('\n'.join(lines) + '\n')
    return '\n'.join(sections)


def render(page: str, tables: dict[str, str]) -> str:
    """Return the page with the body between each pair of markers replaced by its table."""
    found = {match['name'] for match in MARKER.finditer(page)}
    missing = sorted(set(tables) - found)
    if missing:
        raise ValueError(f'markers missing for {", ".join(missing)}')
    return MARKER.sub(lambda match: match[1] + tables[match['name']] + match[4], page)


def stale_pages(docs: Path = DOCS, write: bool = False) -> list[Path]:
    """
    Return the pages and generated files that differ from their source; `write` rewrites.

    Generated: config/params.yaml, the docs tables and the batched ensembles' configs.
    """
    stale = []
    params = docs.parent / 'config' / 'params.yaml'
    if params.read_text(encoding='utf-8') != params_yaml():
        stale.append(params)
        if write:
            params.write_text(params_yaml(), encoding='utf-8')
    stale += stale_batched_ensembles(docs.parent / 'model_repository', write)
    for name, tables in generated_tables().items():
        path = docs / name
        page = path.read_text(encoding='utf-8')
        current = render(page, tables)
        if current != page:
            stale.append(path)
            if write:
                path.write_text(current, encoding='utf-8')
    return stale


def main(check: bool = False) -> int:
    """Rewrite the generated tables, or with `check` only report stale pages (exit 1)."""
    stale = stale_pages(write=not check)
    for path in stale:
        print(f'{path}: {"out of date" if check else "rewritten"}')
    if check and stale:
        print('run `triton-perception docs` to regenerate the tables')
        return 1
    return 0


if __name__ == '__main__':
    raise SystemExit(main(check='--check' in sys.argv[1:]))
