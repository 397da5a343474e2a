"""
The TensorRT engine builder: trtexec invocation, progress, build records, stale engines.

TensorRT does not run on this machine; a stand-in `trtexec` script records its arguments and
writes an engine file, so the wrapper's own logic is what is tested here. The real build is
checked on an Orin (docs/orin.md).
"""
from __future__ import annotations

import json
from pathlib import Path
import shutil
import subprocess
import sys

import numpy as np
import pytest

from support.checkout import REPO
from support.server_stand_ins import repository_with_onnx, stand_in_trtexec
from triton_perception.frames.frame_range import (declares_frame_range, frame_range_of, FrameRange,
                                                  FrameRangeError, parse_size, warmup_frames)
from triton_perception.serving.server.engines import (build_engines, EngineBuildError, find_trtexec,
                                                      frame_steps, stale_engines)
from triton_perception.serving.server.model_config import load_step_module, read_config


def test_builds_fp16_engines_with_records(tmp_path: Path) -> None:
    """
    Each step's engine is built in FP16 with a record of TensorRT's version and precision.

    An engine whose ONNX file changed afterwards is reported stale.
    """
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
    """A failed trtexec leaves no engine or record behind, which Triton would otherwise load."""
    repository = repository_with_onnx(tmp_path / 'repo')
    with pytest.raises(EngineBuildError, match='trtexec failed'):
        build_engines(repository, str(stand_in_trtexec(tmp_path, exit_code=1)),
                      log=lambda _line: None)
    assert not list(repository.rglob('model.plan*'))


def test_missing_trtexec_says_where_to_get_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without trtexec on the PATH the error says it ships with TensorRT."""
    monkeypatch.setenv('PATH', '/nonexistent')
    with pytest.raises(EngineBuildError, match='ships with TensorRT'):
        find_trtexec()


def run_engines_build(tmp_path: Path, repository: Path,
                      arguments: list[str]) -> subprocess.CompletedProcess[str]:
    """Run `triton-perception engines build` with the stand-in trtexec."""
    return subprocess.run([sys.executable, '-m', 'triton_perception.cli', 'engines', 'build',
                           '--model-repository', str(repository), '--trtexec',
                           str(stand_in_trtexec(tmp_path)), *arguments],
                          capture_output=True, text=True, timeout=120)


def test_missing_onnx_says_to_install_models(tmp_path: Path) -> None:
    """A repository without the ONNX files is an error telling to run `models install` first."""
    with pytest.raises(EngineBuildError, match='models install'):
        build_engines(tmp_path, str(stand_in_trtexec(tmp_path)), log=lambda _line: None)


def test_engines_are_built_for_the_configs_frame_range(tmp_path: Path) -> None:
    """Default: 1x1 up to landscape 4K, tuned for 1920x1080 (trtexec's shapes are H x W x C)."""
    repository = repository_with_onnx(tmp_path / 'repo')
    build_engines(repository, str(stand_in_trtexec(tmp_path)), log=lambda _line: None)
    for call in (tmp_path / 'calls.log').read_text().splitlines():
        assert '--minShapes=image:1x1x3 --optShapes=image:1080x1920x3 ' \
            '--maxShapes=image:2160x3840x3' in call, call
    record = json.loads((repository / 'lane_model' / '1' / 'model.plan.json').read_text())
    assert record['frame_range'] == '1x1 to 3840x2160'


def test_one_frame_size_narrows_engines_and_both_profiles(tmp_path: Path) -> None:
    """`engines build --frame-size 1280x720`: the engines, the Orin and the CPU configs agree."""
    repository = repository_with_onnx(tmp_path / 'repo')
    result = run_engines_build(tmp_path, repository, ['--frame-size', '1280x720'])
    assert result.returncode == 0, result.stderr
    for call in (tmp_path / 'calls.log').read_text().splitlines():
        assert '--minShapes=image:720x1280x3 --optShapes=image:720x1280x3 ' \
            '--maxShapes=image:720x1280x3' in call, call
    for step in ('yolov5_model', 'lane_model'):
        for config in ('config.pbtxt', 'configs/cpu.pbtxt'):
            assert frame_range_of((repository / step / config).read_text()) == FrameRange(
                (1280, 720), (1280, 720)), (step, config)
    assert 'frames 1280x720 to 1280x720' in result.stdout


@pytest.mark.parametrize('arguments, frame_range', [
    ([], FrameRange()),
    (['--frame-size', '1920x1080'], FrameRange((1920, 1080), (1920, 1080))),
    (['--frame-size', '640x480'], FrameRange((640, 480), (640, 480))),
    (['--max-frame', '800x600'], FrameRange((1, 1), (800, 600))),
])
def test_the_warmup_frame_lies_inside_every_built_range(tmp_path: Path, arguments: list[str],
                                                        frame_range: FrameRange) -> None:
    """A warm-up outside the engine's profile fails the model's load: it follows the range."""
    repository = repository_with_onnx(tmp_path / 'repo')
    result = run_engines_build(tmp_path, repository, arguments)
    assert result.returncode == 0, result.stderr
    warmups = 0
    for config in sorted(repository.glob('*/config*.pbtxt')) + sorted(
            repository.glob('*/configs/*.pbtxt')):
        text = config.read_text()
        assert frame_range_of(text) == frame_range or 'min_frame' not in text, config
        for width, height in warmup_frames(text):
            warmups += 1
            assert all(low <= value <= high for value, low, high in zip(
                (width, height), frame_range.smallest, frame_range.largest)), (config, width)
        read_config(config)  # still a valid ModelConfig for Triton's parser
    assert warmups >= 2  # yolov5_model and lane_model warm up on the Orin


def test_the_warmup_frame_is_found_in_both_text_layouts() -> None:
    """One line as the shipped configs write it, one dims entry per line as protobuf does."""
    inline = 'inputs { key: "image" value { data_type: TYPE_UINT8 dims: [ 720, 1280, 3 ] } }'
    spread = 'key: "image"\n value {\n data_type: TYPE_UINT8\n dims: 720\n dims: 1280\n dims: 3\n'
    declared = 'input [ { name: "image" data_type: TYPE_UINT8 dims: [ -1, -1, 3 ] } ]'
    assert warmup_frames(inline) == warmup_frames(spread) == [(1280, 720)]
    assert warmup_frames(declared) == []


@pytest.mark.parametrize('arguments, message', [
    (['--frame-size', '1280'], "frame size '1280': expected WIDTHxHEIGHT"),
    (['--max-frame', '0x720'], "frame size '0x720'"),
    (['--min-frame', '800x600', '--max-frame', '640x480'], 'the smallest frame is larger'),
])
def test_a_bad_frame_range_is_refused_before_building(tmp_path: Path, arguments: list[str],
                                                      message: str) -> None:
    """A malformed or inverted frame range is refused, naming the problem, before trtexec runs."""
    repository = repository_with_onnx(tmp_path / 'repo')
    result = run_engines_build(tmp_path, repository, arguments)
    assert result.returncode != 0 and message in result.stderr, result.stderr
    assert not (tmp_path / 'calls.log').exists()


def test_frame_sizes_parse_as_width_by_height() -> None:
    """Sizes parse as WIDTHxHEIGHT, forgiving spaces and case; an incomplete one is refused."""
    assert parse_size('1920x1080') == (1920, 1080) == parse_size(' 1920 X 1080 ')
    with pytest.raises(FrameRangeError):
        parse_size('1920x')


def test_the_cpu_runner_reads_the_range_the_engines_are_built_for() -> None:
    """
    The CPU profile's runner refuses exactly the frames outside the configs' range.

    It reads min_frame/max_frame itself (the model repository imports no package code), so this
    holds its reading equal to triton_perception.frames.frame_range's, inside and just outside.
    """
    runner = load_step_module(REPO / 'model_repository', 'yolov5_model', 'onnx_runner')
    text = (REPO / 'model_repository' / 'yolov5_model' / 'configs' / 'cpu.pbtxt').read_text()
    declared = frame_range_of(text)
    sizes = runner.frame_range('{}x{}'.format(*declared.smallest),
                               '{}x{}'.format(*declared.largest))
    assert sizes == (declared.smallest, declared.largest)
    (max_w, max_h) = declared.largest
    for width, height, inside in ((1, 1, True), (max_w, max_h, True), (max_w + 1, max_h, False),
                                  (max_w, max_h + 1, False), (0, 8, False)):
        error = runner.frame_size_error('m', np.zeros((height, width, 3), np.uint8), sizes)
        assert (error == '') == inside, (width, height, error)
        assert inside or f'built for, {declared} (width x height)' in error, error


def test_the_cpu_profile_without_onnxruntime_says_what_to_do(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A robot installed with exec dependencies only and no engines yet: a clear first step."""
    import triton_perception.serving.server.server_config as server_config
    repository = repository_with_onnx(tmp_path / 'repo')
    assert server_config.resolve_profile('auto', repository) == 'cpu'
    monkeypatch.setattr(server_config.importlib.util, 'find_spec',
                        lambda name: None if name == 'onnxruntime' else object())
    with pytest.raises(server_config.ServerError, match='engines build.*onnxruntime<1.13'):
        server_config.resolve_profile('auto', repository)
    build_engines(repository, str(stand_in_trtexec(tmp_path)), log=lambda _line: None)
    assert server_config.resolve_profile('auto', repository) == 'tensorrt'


def test_a_raised_max_frame_reaches_camera_health(tmp_path: Path) -> None:
    """
    `engines build --max-frame 7680x4320`: every step that bounds the frame takes 8K frames.

    camera_health is no engine step, but its CPU profile's runner refuses frames outside its
    range; left at 3840x2160 the perception ensemble would refuse the frames the engines take.
    Its Orin config (ONNX Runtime, any size) declares no range and stays as it was.
    """
    repository = repository_with_onnx(tmp_path / 'repo')
    shutil.copytree(REPO / 'model_repository' / 'camera_health', repository / 'camera_health',
                    ignore=shutil.ignore_patterns('*.onnx', '__pycache__'))
    orin_config = (repository / 'camera_health' / 'config.pbtxt').read_text()
    result = subprocess.run(
        [sys.executable, '-m', 'triton_perception.cli', 'engines', 'build', '--model-repository',
         str(repository), '--trtexec', str(stand_in_trtexec(tmp_path)), '--max-frame', '7680x4320'],
        capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert frame_steps(repository) == ['yolov5_model', 'lane_model', 'camera_health']
    for step in frame_steps(repository):
        for path in (repository / step).rglob('*.pbtxt'):
            text = path.read_text()
            if declares_frame_range(text):
                assert str(frame_range_of(text)) == '1x1 to 7680x4320', path
    assert str(frame_range_of((repository / 'camera_health' / 'configs' / 'cpu.pbtxt')
                              .read_text())) == '1x1 to 7680x4320'
    assert (repository / 'camera_health' / 'config.pbtxt').read_text() == orin_config
    assert 'camera_health: frames 1x1 to 7680x4320' in result.stdout + result.stderr
