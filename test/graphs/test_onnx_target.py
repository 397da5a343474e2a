"""
Every ONNX graph the package writes loads in the oldest onnxruntime it supports.

On Jammy (JetPack 6) the constraints keep onnxruntime 1.12.1, which reads IR version 8 and
opset 17 at the most (graphs/onnx_target.py cites onnxruntime's compatibility table); this
machine runs a newer one that reads anything. The test writes every kind of graph the package
writes (the served detection and lane graphs, own lane models installed from a file and
wrapped around a served model, whose `<name>_input` step is a graph of its own, the bench's
constant graphs, the test fixtures), checks both numbers, and loads each one with onnxruntime
1.12.1 in the target's Python 3.10 environment.
"""
from __future__ import annotations

import json
from pathlib import Path
import re
import subprocess

import onnx
from onnx import TensorProto
import pytest

from support.checkout import copy_of_model_repository, REPO
from support.lane_model_cases import (add_served_model, CURVES, layout_case, NO_LOG,
                                      ROW_ANCHOR_AND_SEGMENTATION)
from support.lane_model_fixtures import constant_model, laneatt_rows
from support.target_venv import LOAD_ALL, target_environment
from support.target_versions import JAMMY_PYPI
from triton_perception.bench.glue.constant_graphs import constant_repository
from triton_perception.graphs import (build_health_graph, GraphTargetError, make_model,
                                      MAX_IR_VERSION, MAX_OPSET, ONNXRUNTIME_FLOOR,
                                      target_problems)
from triton_perception.graphs.onnx_target import fit_to_target
from triton_perception.health import GRAPH_OPTIONS
from triton_perception.models.lane_model_install import (install_lane_model,
                                                         install_served_lane_model)


def written_graphs(directory: Path) -> list[Path]:
    """Write every kind of graph the package writes under `directory`; return the files."""
    repository = copy_of_model_repository(directory / 'repository')
    laneatt = constant_model(directory / 'laneatt.onnx', {'predict_lanes': laneatt_rows(CURVES)},
                             [1, 3, 360, 640], TensorProto.FLOAT)
    install_lane_model(repository, laneatt, 'laneatt_file', 'proposals', **NO_LOG)
    add_served_model(repository, 'laneDetect_model', 'TYPE_FP32', TensorProto.FLOAT, directory)
    install_served_lane_model(repository, 'laneDetect_model', 'laneatt_served', 'proposals',
                              **NO_LOG)
    for name in ROW_ANCHOR_AND_SEGMENTATION:
        path, layout, config, _ = layout_case(name, directory)
        install_lane_model(repository, path, name, layout, config, **NO_LOG)
    constant_repository(repository, directory / 'constant_repository')
    build_health_graph(directory / 'health_statistics.onnx', **GRAPH_OPTIONS)
    return sorted({*directory.rglob('*.onnx'), *(REPO / 'model_repository').rglob('*.onnx')})


@pytest.fixture(scope='module')
def graphs(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """Every kind of written graph, once for the module."""
    return written_graphs(tmp_path_factory.mktemp('written_graphs'))


def test_every_written_graph_is_within_the_oldest_onnxruntimes_limits(
        graphs: list[Path]) -> None:
    """IR version and opset of each graph are within onnxruntime 1.12's table row."""
    assert any(path.parent.parent.name.endswith('_input') for path in graphs), graphs
    problems = {str(path): target_problems(onnx.load(str(path), load_external_data=False))
                for path in graphs}
    assert {path: found for path, found in problems.items() if found} == {}


@pytest.mark.target
@pytest.mark.slow
def test_every_written_graph_loads_in_the_oldest_onnxruntime(graphs: list[Path],
                                                             tmp_path: Path) -> None:
    """
    Under the target's Python and NumPy, onnxruntime 1.12.1 loads every graph.

    Its positive control: the same onnx's own make_model writes IR 10, which it refuses.
    """
    control = tmp_path / 'ir_of_the_onnx_release.onnx'
    identity = onnx.helper.make_graph(
        [onnx.helper.make_node('Identity', ['x'], ['y'])], 'identity',
        [onnx.helper.make_tensor_value_info('x', TensorProto.FLOAT, [1])],
        [onnx.helper.make_tensor_value_info('y', TensorProto.FLOAT, [1])])
    onnx.save(onnx.helper.make_model(identity, opset_imports=[onnx.helper.make_opsetid('', 12)]),
              str(control))
    python = target_environment()
    result = subprocess.run([str(python), '-c', LOAD_ALL,
                             json.dumps([str(path) for path in [*graphs, control]])],
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-2000:]
    loaded = json.loads(result.stdout.splitlines()[-1])
    assert loaded['version'] == ONNXRUNTIME_FLOOR
    assert 'Unsupported model IR version' in loaded['failed'].pop(str(control))
    assert loaded['failed'] == {}


def test_onnx_of_today_would_write_a_graph_that_onnxruntime_1_12_refuses() -> None:
    """Positive control: onnx's own `make_model` writes an IR version above the limit."""
    graph = onnx.helper.make_graph([], 'empty', [], [])
    plain = onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid('', 12)])
    assert plain.ir_version > MAX_IR_VERSION
    assert target_problems(plain)
    assert make_model(graph, 12).ir_version == 7
    fit_to_target(plain)
    assert plain.ir_version == 7 and not target_problems(plain)
    with pytest.raises(GraphTargetError, match=f'opset {MAX_OPSET} at the most'):
        make_model(graph, MAX_OPSET + 1)


def test_the_floor_is_the_constraints_lower_bound_and_the_target_environments() -> None:
    """One release in three places: the limits' module, rosdep/constraints.txt, the test env."""
    constraints = (REPO / 'rosdep' / 'constraints.txt').read_text(encoding='utf-8')
    assert re.search(rf'^onnxruntime>={re.escape(ONNXRUNTIME_FLOOR)}\b', constraints,
                     re.MULTILINE), constraints
    assert JAMMY_PYPI['onnxruntime'] == ONNXRUNTIME_FLOOR


def test_no_graph_is_made_without_the_target_ir_version() -> None:
    """Every model the package or its tests make goes through graphs/onnx_target.make_model."""
    helper_file = REPO / 'triton_perception' / 'graphs' / 'onnx_target.py'
    offenders = [f'{path.relative_to(REPO)}:{number}'
                 for folder in ('triton_perception', 'test')
                 for path in sorted((REPO / folder).rglob('*.py'))
                 if path != helper_file and path.name != Path(__file__).name
                 for number, line in enumerate(path.read_text(encoding='utf-8').splitlines(), 1)
                 if re.search(r'helper\.make_model\(|\.ir_version\s*=', line)]
    assert offenders == []
