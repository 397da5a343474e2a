"""
The TensorRT engine builder: trtexec invocation, progress, build records, stale engines.

TensorRT does not run on this machine; a stand-in `trtexec` script records its arguments and
writes an engine file, so the wrapper's own logic is what is tested here. The real build is
checked on an Orin (docs/orin.md).
"""
from __future__ import annotations

import json
from pathlib import Path
import stat

import pytest

from triton_perception.engines import build_engines, EngineBuildError, find_trtexec, stale_engines

STAND_IN = """#!/usr/bin/env bash
echo "&&&& RUNNING TensorRT.trtexec [TensorRT v100300] $*" | tee -a "{calls}"
echo "[I] TensorRT version: 10.3.0"
for argument in "$@"; do
  case "$argument" in --saveEngine=*) printf 'engine' > "${{argument#--saveEngine=}}";; esac
done
exit {exit_code}
"""


def stand_in_trtexec(directory: Path, exit_code: int = 0) -> Path:
    tool = directory / 'trtexec'
    tool.write_text(STAND_IN.format(calls=directory / 'calls.log', exit_code=exit_code))
    tool.chmod(tool.stat().st_mode | stat.S_IEXEC)
    return tool


def repository_with_onnx(directory: Path) -> Path:
    for step in ('yolov5_model', 'lane_model'):
        (directory / step / '1').mkdir(parents=True)
        (directory / step / '1' / 'model.onnx').write_bytes(step.encode())
    return directory


def test_builds_fp16_engines_with_records(tmp_path: Path) -> None:
    repository = repository_with_onnx(tmp_path / 'repo')
    tool = stand_in_trtexec(tmp_path)
    lines: list[str] = []
    engines = build_engines(repository, str(tool), log=lines.append)
    assert [engine.read_text() for engine in engines] == ['engine', 'engine']
    calls = (tmp_path / 'calls.log').read_text().splitlines()
    assert len(calls) == 2 and all('--fp16' in call for call in calls)
    assert f"--onnx={repository / 'yolov5_model' / '1' / 'model.onnx'}" in calls[0]
    record = json.loads((repository / 'yolov5_model' / '1' / 'model.plan.json').read_text())
    assert record['tensorrt'] == '10.3.0' and record['precision'] == 'fp16'
    assert any('building' in line for line in lines) and any('built' in line for line in lines)
    assert stale_engines(repository) == []
    (repository / 'lane_model' / '1' / 'model.onnx').write_bytes(b'a new export')
    assert ['ONNX file changed' in warning for warning in stale_engines(repository)] == [True]


def test_failed_build_keeps_no_partial_engine(tmp_path: Path) -> None:
    repository = repository_with_onnx(tmp_path / 'repo')
    with pytest.raises(EngineBuildError, match='trtexec failed'):
        build_engines(repository, str(stand_in_trtexec(tmp_path, exit_code=1)),
                      log=lambda _line: None)
    assert not list(repository.rglob('model.plan*'))


def test_missing_trtexec_says_where_to_get_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv('PATH', '/nonexistent')
    with pytest.raises(EngineBuildError, match='ships with TensorRT'):
        find_trtexec()


def test_missing_onnx_says_to_install_models(tmp_path: Path) -> None:
    with pytest.raises(EngineBuildError, match='models install'):
        build_engines(tmp_path, str(stand_in_trtexec(tmp_path)), log=lambda _line: None)
