"""
The camera health step of the model repository: a graph with no weights, written at install.

`models install` writes `camera_health/1/model.onnx` from health/frame_statistics.py's
GRAPH_OPTIONS (graphs/health_graph.py), with a record of the builder that wrote it, beside the
models built from weights, so that the perception ensemble finds its third step wherever the
other two are.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Callable

HEALTH_MODEL = 'camera_health'
HEALTH_GRAPH_FILE = Path(HEALTH_MODEL) / '1' / 'model.onnx'
HEALTH_GRAPH = 'health'


def _record(target: Path) -> Path:
    return target.with_name(target.name + '.json')


def _expected_record() -> dict[str, str]:
    from triton_perception.graphs import builder_fingerprint  # noqa: PLC0415 (needs onnx)
    return {'graph': HEALTH_GRAPH, 'builder': builder_fingerprint()}


def health_graph_current(repository: Path) -> bool:
    """Say whether the repository's health graph exists and was written by this builder."""
    target = repository / HEALTH_GRAPH_FILE
    try:
        record = json.loads(_record(target).read_text(encoding='utf-8'))
    except (OSError, ValueError):
        return False
    return target.is_file() and record == _expected_record()


def install_health_graph(repository: Path, log: Callable[[str], None] = print) -> Path:
    """Write the health statistics graph into `repository` unless it is current; return it."""
    target = repository / HEALTH_GRAPH_FILE
    if health_graph_current(repository):
        log(f'{HEALTH_MODEL}: up to date ({target})')
        return target
    from triton_perception.graphs import build_health_graph  # noqa: PLC0415 (needs onnx)
    from triton_perception.health import GRAPH_OPTIONS  # noqa: PLC0415
    log(f'{HEALTH_MODEL}: writing the camera health statistics graph -> {target}')
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix('.partial')
    try:
        build_health_graph(partial, **GRAPH_OPTIONS)
        partial.replace(target)
    finally:
        partial.unlink(missing_ok=True)
    _record(target).write_text(json.dumps(_expected_record(), indent=2) + '\n',
                               encoding='utf-8')
    return target
