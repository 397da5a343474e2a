"""INT8 graphs carried from the PC to the Orin in one folder: checked, installed, or refused."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from triton_perception.cli import main
from triton_perception.models import Candidate, carried_candidates, write_carried
from triton_perception.models.quantization import (FLOAT_GRAPH, INT8_FILES, INT8_GRAPH,
                                                   TENSORRT_GRAPH)
from triton_perception.system import sha256_of

STEP = 'lane_model'


def made_on_the_pc(tmp_path: Path, float_bytes: bytes = b'float graph') -> tuple[Path, Path]:
    """Return (the Orin's repository, a quantize output folder) for one step, both consistent."""
    repository = tmp_path / 'repository'
    (repository / STEP / '1').mkdir(parents=True)
    (repository / STEP / '1' / FLOAT_GRAPH).write_bytes(float_bytes)
    staging = tmp_path / 'staging' / STEP
    staging.mkdir(parents=True)
    (staging / INT8_GRAPH).write_bytes(b'int8 graph')
    (staging / TENSORRT_GRAPH).write_bytes(b'tensorrt graph')
    (staging / (INT8_GRAPH + '.json')).write_text(json.dumps({
        'float_graph_sha256': sha256_of(repository / STEP / '1' / FLOAT_GRAPH),
        'int8_sha256': sha256_of(staging / INT8_GRAPH),
        'tensorrt_graph_sha256': sha256_of(staging / TENSORRT_GRAPH)}))
    output = tmp_path / 'guard'
    write_carried([Candidate(STEP, staging)], output)
    return repository, output


def test_install_int8_installs_the_carried_folder(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """The three files of the step land in its version folder; the log names the engine build."""
    repository, output = made_on_the_pc(tmp_path)
    assert main(['models', 'install-int8', '--from', str(output),
                 '--model-repository', str(repository)]) == 0
    for name in INT8_FILES:
        assert (repository / STEP / '1' / name).read_bytes() == (
            output / 'int8' / STEP / name).read_bytes()
    assert 'engines build --int8' in capsys.readouterr().out


@pytest.mark.parametrize('fault, words', [
    ('other float graph', 'made from another float graph'),
    ('interrupted copy', 'not the graph its record names'),
    ('record missing', 'is missing: copy the whole folder again'),
    ('no steps', 'holds no INT8 step'),
])
def test_install_int8_refuses_in_one_line_and_installs_nothing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], fault: str, words: str) -> None:
    """Each fault is named in one line, exit 2, and the repository keeps only its float graph."""
    repository, output = made_on_the_pc(tmp_path)
    step = output / 'int8' / STEP
    if fault == 'other float graph':
        (repository / STEP / '1' / FLOAT_GRAPH).write_bytes(b'a newer float graph')
    elif fault == 'interrupted copy':
        (step / TENSORRT_GRAPH).write_bytes(b'tensorrt gr')
    elif fault == 'record missing':
        (step / (INT8_GRAPH + '.json')).unlink()
    else:
        output = tmp_path / 'empty'
        output.mkdir()
    assert main(['models', 'install-int8', '--from', str(output),
                 '--model-repository', str(repository)]) == 2
    error = capsys.readouterr().err.strip()
    assert words in error and len(error.splitlines()) == 1, error
    assert sorted(path.name for path in (repository / STEP / '1').iterdir()) == [FLOAT_GRAPH]


def test_the_int8_folder_itself_is_taken_too(tmp_path: Path) -> None:
    """--from may name the quantize output folder or its int8/."""
    repository, output = made_on_the_pc(tmp_path)
    assert [candidate.step for candidate in carried_candidates(repository, output / 'int8')] == [
        STEP]
