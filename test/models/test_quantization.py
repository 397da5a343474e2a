"""
`models quantize`: INT8 graphs calibrated from a bag, their float steps, the guard's refusals.

The INT8 graphs are made here from the shipped weights (never committed): the float served
graphs are built into a scratch repository and quantized from a small bag of the clip. The
server-marked tests run the whole command (CLI main) on a copy of the installed repository:
calibration, the guard's two replays through tritonserver, its verdict and the install.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path
import re
import shutil
import socket
import subprocess
from typing import Any, Iterator

import cv2
import numpy as np
import onnx
import onnxruntime
import pytest
from rosbags.rosbag2 import Writer

from support.checkout import clip_bag_of, copy_of_model_repository, shared_path
from support.target_venv import LOAD_ALL, target_environment
from triton_perception.bag import make_bag, read_images, typestore
from triton_perception.cli import main
from triton_perception.graphs import (build_graph, float_step_problems, make_model,
                                      MAX_IR_VERSION, QUANTIZED_OPSET, target_problems,
                                      tensorrt_qdq_problems)
from triton_perception.models import (Candidate, carried_candidates, install_quantized,
                                      INT8_GRAPH, quantize_models, TENSORRT_GRAPH,
                                      write_carried)
from triton_perception.models.quantization import quantizer_problem, quantizer_refusal
from triton_perception.serving import ServerError
from triton_perception.serving.server.profile_repository import profile_repository

FRAMES = 8


@pytest.fixture(scope='module')
def float_repository(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Build a repository holding only the two float served graphs, from the shipped weights."""
    repository = tmp_path_factory.mktemp('repository')
    build_graph('detection', shared_path('models', 'yolov5n', 'yolov5n.onnx'),
                repository / 'yolov5_model' / '1' / 'model.onnx')
    build_graph('lanes', shared_path('models', 'twinlitenet', 'twinlitenet.onnx'),
                repository / 'lane_model' / '1' / 'model.onnx')
    return repository


@pytest.fixture(scope='module')
def clip_bag(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Make a bag of the clip's first frames."""
    return clip_bag_of(tmp_path_factory.mktemp('bags'), 'clip', FRAMES)


@pytest.fixture(scope='module')
def quantized(float_repository: Path, clip_bag: Path,
              tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Quantize from the clip's bag; return the staging directory `quantize_models` wrote."""
    staging = tmp_path_factory.mktemp('staging')
    candidates, calibration = quantize_models(float_repository, [clip_bag], staging,
                                              frames=4, log=lambda line: None)
    assert [candidate.step for candidate in candidates] == ['yolov5_model', 'lane_model']
    assert calibration.frames == 4 and len(calibration.sha256) == 64
    return staging


def _session(path: Path) -> onnxruntime.InferenceSession:
    return onnxruntime.InferenceSession(str(path), providers=['CPUExecutionProvider'])


def _run(path: Path, frame: np.ndarray) -> dict[str, Any]:
    session = _session(path)
    feed: dict[str, Any] = {'image': frame}
    names = [tensor.name for tensor in session.get_inputs()]
    if 'score_threshold' in names:
        feed |= {'score_threshold': np.array([0.25], np.float32),
                 'iou_threshold': np.array([0.45], np.float32),
                 'max_detections': np.array([100], np.int32)}
    return dict(zip([tensor.name for tensor in session.get_outputs()], session.run(None, feed)))


@pytest.mark.slow
def test_int8_graphs_load_keep_their_float_steps_and_agree_with_the_float_ones(
        float_repository: Path, quantized: Path, clip_bag: Path) -> None:
    """Both flavours load here, within IR 8 / opset 17, QDQ inside, float steps untouched."""
    frame = next(iter(read_images(clip_bag))).rgb
    for step in ('yolov5_model', 'lane_model'):
        float_graph = float_repository / step / '1' / 'model.onnx'
        record = json.loads((quantized / step / (INT8_GRAPH + '.json')).read_text())
        assert record['calibration']['frames'] == 4
        for name in (INT8_GRAPH, TENSORRT_GRAPH):
            model = onnx.load(str(quantized / step / name))
            assert model.ir_version <= MAX_IR_VERSION and not target_problems(model)
            assert [entry.version for entry in model.opset_import if entry.domain in (
                '', 'ai.onnx')] == [QUANTIZED_OPSET]
            assert float_step_problems(model, onnx.load(str(float_graph))) == []
            kinds = {node.op_type for node in model.graph.node}
            assert {'QuantizeLinear', 'DequantizeLinear'} <= kinds
            zero_points = {onnx.numpy_helper.to_array(tensor).dtype
                           for tensor in model.graph.initializer
                           if tensor.name.endswith('_zero_point')}
            # TensorRT takes symmetric INT8 only; the CPU flavour has UINT8 activations (the
            # biases' INT32 zero points aside).
            assert (np.dtype(np.uint8) not in zero_points) == (name == TENSORRT_GRAPH)
            if name == TENSORRT_GRAPH:
                assert tensorrt_qdq_problems(model) == [], 'TensorRT parses it (biases float)'
                assert np.dtype(np.int32) not in zero_points
        fp, int8 = _run(float_graph, frame), _run(quantized / step / INT8_GRAPH, frame)
        assert {key: value.dtype for key, value in fp.items()} == {
            key: value.dtype for key, value in int8.items()}
        if step == 'yolov5_model':
            assert abs(int(fp['num_detections'][0]) - int(int8['num_detections'][0])) <= 2
        else:
            lane_fp, lane_int8 = (int((out['lane_probability'] > 127).sum()) for out in (fp, int8))
            assert abs(lane_fp - lane_int8) <= 0.25 * lane_fp


@pytest.mark.target
@pytest.mark.slow
def test_int8_graphs_load_in_the_oldest_onnxruntime(quantized: Path) -> None:
    """Under onnxruntime 1.12.1 (JetPack 6's) both flavours of both INT8 graphs load."""
    paths = [str(quantized / step / name) for step in ('yolov5_model', 'lane_model')
             for name in (INT8_GRAPH, TENSORRT_GRAPH)]
    result = subprocess.run([str(target_environment()), '-c', LOAD_ALL, json.dumps(paths)],
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-2000:]
    loaded = json.loads(result.stdout.splitlines()[-1])
    assert loaded['version'] == '1.12.1' and loaded['failed'] == {}


@pytest.mark.target
@pytest.mark.slow
def test_the_install_half_runs_with_the_orins_onnxruntime(
        float_repository: Path, quantized: Path, tmp_path: Path) -> None:
    """
    The PC's folder installed on a copy of the repository, and its graphs run by 1.12.1.

    `models install-int8` needs no onnxruntime; the graphs it installs load in the Orin's.
    """
    candidates = [Candidate(step, quantized / step) for step in ('yolov5_model', 'lane_model')]
    carried = write_carried(candidates, tmp_path / 'guard')
    orin = tmp_path / 'orin'
    shutil.copytree(float_repository, orin)
    install_quantized(orin, carried_candidates(orin, carried), log=lambda line: None)
    paths = [str(orin / step / '1' / name) for step in ('yolov5_model', 'lane_model')
             for name in (INT8_GRAPH, TENSORRT_GRAPH)]
    result = subprocess.run([str(target_environment()), '-c', LOAD_ALL, json.dumps(paths)],
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-2000:]
    loaded = json.loads(result.stdout.splitlines()[-1])
    assert loaded['version'] == '1.12.1' and loaded['failed'] == {}


def _tree(directory: Path) -> dict[str, int]:
    return {str(path.relative_to(directory)): path.stat().st_size
            for path in sorted(directory.rglob('*')) if path.is_file()}


def _bag_without_camera(path: Path) -> Path:
    store = typestore()
    with Writer(path, version=8) as writer:
        connection = writer.add_connection('/chatter', 'std_msgs/msg/String', typestore=store)
        message = store.types['std_msgs/msg/String'](data='hello')
        writer.write(connection, 1, store.serialize_cdr(message, 'std_msgs/msg/String'))
    return path


def _empty_camera_bag(path: Path) -> Path:
    with Writer(path, version=8) as writer:
        writer.add_connection('/camera/image_raw', 'sensor_msgs/msg/Image', typestore=typestore())
    return path


@pytest.mark.parametrize('case', ['no camera topic', 'empty bag', 'guard without frames'])
def test_bad_bags_fail_in_one_line_and_leave_the_repository_alone(
        case: str, float_repository: Path, clip_bag: Path, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    """Each stops before anything is written, naming the bag."""
    bad = (_bag_without_camera if case == 'no camera topic' else _empty_camera_bag)(
        tmp_path / 'bad')
    calibrate, guard = (clip_bag, bad) if case == 'guard without frames' else (bad, clip_bag)
    before = _tree(float_repository)
    code = main(['models', 'quantize', '--model-repository', str(float_repository),
                 '--calibrate', str(calibrate), '--guard', str(guard),
                 '--output', str(tmp_path / 'guard')])
    error = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(error) == 1 and str(bad) in error[0], error
    assert ('no camera topic' in error[0]) if case == 'no camera topic' else (
        'no frames' in error[0] or 'image topics: none' in error[0] or '0 frames' in error[0])
    assert _tree(float_repository) == before


def test_a_calibration_bag_is_no_guard_drive(clip_bag: Path, float_repository: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    """The guard judges on drives the calibration did not see."""
    code = main(['models', 'quantize', '--model-repository', str(float_repository),
                 '--calibrate', str(clip_bag), '--guard', str(clip_bag)])
    assert code == 2 and 'not used for calibration' in capsys.readouterr().err


def test_int8_view_serves_the_int8_graph_and_names_its_calibration(tmp_path: Path) -> None:
    """The CPU view's config of a quantized step points at model_int8.onnx; none: refused."""
    repository = tmp_path / 'repository'
    step = repository / 'yolov5_model'
    (step / 'configs').mkdir(parents=True)
    (step / '1').mkdir()
    (step / 'config.pbtxt').write_text('name: "yolov5_model"\nplatform: "tensorrt_plan"\n'
                                       'default_model_filename: "model.plan"\n')
    (step / 'configs' / 'cpu.pbtxt').write_text(
        'name: "yolov5_model"\nbackend: "python"\n'
        'parameters { key: "onnx_file" value { string_value: "model.onnx" } }\n')
    (step / '1' / 'model.onnx').write_bytes(b'float')
    with pytest.raises(ServerError, match='models quantize'):
        profile_repository(repository, 'cpu', tmp_path / 'cache', 'int8')
    (step / '1' / INT8_GRAPH).write_bytes(b'int8')
    (step / '1' / (INT8_GRAPH + '.json')).write_text(json.dumps(
        {'calibration': {'summary': '4 frames of clip, sha256 abc'},
         'int8_sha256': hashlib.sha256(b'int8').hexdigest(), 'tensorrt_graph_sha256': ''}))
    view = profile_repository(repository, 'cpu', tmp_path / 'cache', 'int8')
    text = (view / 'yolov5_model' / 'config.pbtxt').read_text()
    assert 'string_value: "model_int8.onnx"' in text and '"int8"' in text
    assert '4 frames of clip, sha256 abc' in text
    assert (view / 'yolov5_model' / '1').resolve() == (step / '1').resolve()
    assert profile_repository(repository, 'cpu', tmp_path / 'cache', 'fp') != view
    (step / '1' / 'model_int8.plan').write_bytes(b'engine')
    orin = profile_repository(repository, 'tensorrt', tmp_path / 'cache', 'int8')
    assert 'default_model_filename: "model_int8.plan"' in (
        orin / 'yolov5_model' / 'config.pbtxt').read_text()
    assert profile_repository(repository, 'tensorrt', tmp_path / 'cache') == repository.resolve()


# A guard drive and a calibration as small as the verdicts allow: the guard's replays cost a
# tritonserver start per precision, each frame a lockstep round trip.
GUARD_FRAMES = 3
CALIBRATION_FRAMES = 2
REFUSED = re.compile(r'models quantize: INT8 refused, nothing installed: guard: (?P<figure>\w+): '
                     r'agreement (?P<agreement>[0-9.]+), interval \[(?P<low>[0-9.]+), '
                     r'(?P<high>[0-9.]+)\] below 1 - (?P<threshold>[0-9.]+) \(report: '
                     r'(?P<report>[^)]+)\); another --calibration-method or --keep-float may '
                     r'pass \(docs/models\.md\)$')


@pytest.fixture(scope='module')
def guard_drive(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Make the guard drive: the clip's first frames, in a bag named guard."""
    return clip_bag_of(tmp_path_factory.mktemp('guard_bags'), 'guard', GUARD_FRAMES)


@pytest.fixture(scope='module')
def black_bag(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Make a bag of black frames the clip's size: a lens cap on for the whole calibration."""
    frames = tmp_path_factory.mktemp('black_frames')
    for number in range(CALIBRATION_FRAMES):
        cv2.imwrite(str(frames / f'{number:02d}.png'), np.zeros((540, 960, 3), np.uint8))
    bag = tmp_path_factory.mktemp('black_bags') / 'black'
    make_bag(frames, bag)
    return bag


@pytest.fixture(scope='module')
def road_bag(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Make a calibration bag of BDD100K road frames: other drives than the guard's clip."""
    bag = tmp_path_factory.mktemp('road_bags') / 'road'
    make_bag(shared_path('data', 'road', 'bdd'), bag)
    return bag


@pytest.fixture
def served_repository(tmp_path: Path, triton_server: Any) -> Path:
    """Copy the package's installed model repository (the session server installed it)."""
    return copy_of_model_repository(tmp_path)


@pytest.fixture
def default_ports_taken() -> Iterator[None]:
    """
    Hold tritonserver's default ports, as a server already running on the machine does.

    A port someone else holds is taken already, which is what the test needs.
    """
    held = []
    for port in (8000, 8001, 8002):
        probe = socket.socket()
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(('127.0.0.1', port))
            probe.listen()
        except OSError:
            probe.close()
            continue
        held.append(probe)
    yield
    for probe in held:
        probe.close()


def _contents(repository: Path) -> dict[str, str]:
    """Return the sha256 of every file of the repository (the Python backend's caches aside)."""
    return {str(path.relative_to(repository)): hashlib.sha256(path.read_bytes()).hexdigest()
            for path in sorted(repository.rglob('*'))
            if path.is_file() and '__pycache__' not in path.parts}


def _quantize(repository: Path, calibrate: Path, guard: Path, output: Path,
              *options: str) -> int:
    return main(['models', 'quantize', '--model-repository', str(repository),
                 '--calibrate', str(calibrate), '--guard', str(guard), '--output', str(output),
                 '--frames', str(CALIBRATION_FRAMES), *options])


@pytest.mark.server
@pytest.mark.slow
def test_guard_refuses_a_black_calibration_in_one_line_and_installs_nothing(
        served_repository: Path, black_bag: Path, guard_drive: Path, tmp_path: Path,
        default_ports_taken: None, capsys: pytest.CaptureFixture[str]) -> None:
    """
    Calibrated on black frames only, the INT8 graphs see nothing on the road: refused.

    Every activation of a black frame is the network's response to a constant image, so MinMax
    calibration sets ranges that clip a road's activations flat; on the clip the INT8 detector
    finds no box and the lane model no line where the float ones find several (agreement 0).
    The one line names the figure, its interval and its threshold, as comparison.json has them;
    report.md says so; the repository is as it was. tritonserver's default ports are held
    meanwhile: the guard serves both precisions on ports of its own.
    """
    before = _contents(served_repository)
    output = tmp_path / 'guard'
    code = _quantize(served_repository, black_bag, guard_drive, output)
    captured = capsys.readouterr()
    refusals = [line for line in captured.err.splitlines() if 'refused' in line]
    assert code == 1 and len(refusals) == 1, captured.err[-3000:]
    refusal = REFUSED.match(refusals[0])
    assert refusal, refusals[0]
    low, high, threshold = (float(refusal[name]) for name in ('low', 'high', 'threshold'))
    assert low <= float(refusal['agreement']) <= high < 1 - threshold
    comparison = json.loads((output / 'comparison' / 'comparison.json').read_text())
    figures = comparison['drives']['guard']['comparison']
    assert refusal['figure'] in figures['flagged']
    figure = figures['figures'][refusal['figure']]
    assert figure['threshold'] == pytest.approx(threshold)
    assert figure['interval'] == pytest.approx([low, high], abs=5e-4)
    report = Path(refusal['report'])
    assert report == output / 'report.md'
    assert f"**Refused**: guard: {refusal['figure']}: agreement" in report.read_text()
    assert {'fp', 'int8'} <= {path.name for path in output.iterdir()}
    assert _contents(served_repository) == before
    assert not list(served_repository.rglob(INT8_GRAPH))


@pytest.mark.server
@pytest.mark.slow
def test_force_installs_what_the_guard_flagged_and_says_so(
        served_repository: Path, black_bag: Path, guard_drive: Path, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    """
    --force installs the black-calibrated lane graph anyway and names what was flagged.

    The lanes alone (the quicker to quantize): the detector's step is left as it was.
    """
    before = _contents(served_repository)
    code = _quantize(served_repository, black_bag, guard_drive, tmp_path / 'guard', '--force',
                     '--models', 'lanes')
    captured = capsys.readouterr()
    assert code == 0, captured.err[-3000:]
    assert re.search(r'--force: installed although the guard flagged guard: \w+: agreement '
                     r'[0-9.]+, interval \[', captured.out), captured.out[-3000:]
    assert 'refused' not in captured.err
    after = _contents(served_repository)
    added = {name for name in after if name not in before}
    assert added == {f'lane_model/1/{name}' for name in (INT8_GRAPH, INT8_GRAPH + '.json',
                                                         TENSORRT_GRAPH)}
    assert {name: digest for name, digest in after.items() if name in before} == before
    record = json.loads((served_repository / 'lane_model' / '1' / (INT8_GRAPH + '.json'))
                        .read_text())
    assert record['calibration']['bags'] == [str(black_bag.resolve())]


@pytest.mark.server
@pytest.mark.slow
def test_guard_passes_a_sound_calibration_and_installs_it(
        served_repository: Path, road_bag: Path, guard_drive: Path, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    """
    Calibrated on road frames, the INT8 detector finds the float one's boxes: installed.

    The detector alone: the lane graph calibrated on these few BDD100K frames changes a few of
    the clip's lane lines (about 0.8 agreement on its first frames), which the guard rightly
    refuses at its 0.05 threshold.
    """
    before = _contents(served_repository)
    code = _quantize(served_repository, road_bag, guard_drive, tmp_path / 'guard',
                     '--models', 'detection')
    captured = capsys.readouterr()
    assert code == 0, captured.err[-3000:]
    assert 'guard passed: nothing flagged' in captured.out, captured.out[-3000:]
    assert '**Passed**' in (tmp_path / 'guard' / 'report.md').read_text()
    installed = served_repository / 'yolov5_model' / '1'
    assert {name for name in _contents(served_repository) if name not in before} == {
        f'yolov5_model/1/{name}' for name in (INT8_GRAPH, INT8_GRAPH + '.json', TENSORRT_GRAPH)}
    record = json.loads((installed / (INT8_GRAPH + '.json')).read_text())
    assert record['calibration']['bags'] == [str(road_bag.resolve())]
    assert record['calibration']['frames'] == CALIBRATION_FRAMES


@pytest.mark.slow
def test_the_tensorrt_graph_agrees_with_the_float_graph(float_repository: Path,
                                                        quantized: Path, clip_bag: Path) -> None:
    """The TensorRT flavour run under onnxruntime answers as the float graph does, near enough."""
    frame = next(iter(read_images(clip_bag))).rgb
    fp = _run(float_repository / 'yolov5_model' / '1' / 'model.onnx', frame)
    trt = _run(quantized / 'yolov5_model' / TENSORRT_GRAPH, frame)
    assert abs(int(fp['num_detections'][0]) - int(trt['num_detections'][0])) <= 2
    fp_lanes = _run(float_repository / 'lane_model' / '1' / 'model.onnx', frame)
    trt_lanes = _run(quantized / 'lane_model' / TENSORRT_GRAPH, frame)
    lane_fp, lane_trt = (int((out['lane_probability'] > 127).sum())
                         for out in (fp_lanes, trt_lanes))
    assert abs(lane_fp - lane_trt) <= 0.25 * lane_fp


def test_the_tensorrt_rules_refuse_what_the_parser_refuses() -> None:
    """An INT32 bias behind a DequantizeLinear, a zero point of 3, per-channel activations."""
    from onnx import helper, TensorProto  # noqa: PLC0415

    def initializer(name: str, array: np.ndarray) -> onnx.TensorProto:
        return onnx.numpy_helper.from_array(array, name)
    nodes = [
        helper.make_node('QuantizeLinear', ['x', 'x_scale', 'x_zero'], ['x_q'], name='q_x'),
        helper.make_node('DequantizeLinear', ['x_q', 'x_scale', 'x_zero'], ['x_dq'], name='dq_x'),
        helper.make_node('DequantizeLinear', ['w', 'w_scale', 'w_zero'], ['w_dq'], name='dq_w',
                         axis=1),
        helper.make_node('DequantizeLinear', ['b', 'b_scale', 'b_zero'], ['b_dq'], name='dq_b'),
        helper.make_node('Conv', ['x_dq', 'w_dq', 'b_dq'], ['y'], name='conv'),
    ]
    graph = helper.make_graph(
        nodes, 'rules', [helper.make_tensor_value_info('x', TensorProto.FLOAT, [1, 2, 4, 4])],
        [helper.make_tensor_value_info('y', TensorProto.FLOAT, None)],
        [initializer('x_scale', np.array(0.1, np.float32)),
         initializer('x_zero', np.array(3, np.int8)),
         initializer('w', np.ones((2, 2, 1, 1), np.int8)),
         initializer('w_scale', np.array([0.1, 0.2], np.float32)),
         initializer('w_zero', np.zeros(2, np.int8)),
         initializer('b', np.ones(2, np.int32)),
         initializer('b_scale', np.array(0.01, np.float32)),
         initializer('b_zero', np.array(0, np.int32))])
    problems = tensorrt_qdq_problems(make_model(graph, QUANTIZED_OPSET))
    assert any('q_x: zero point is not 0' in problem for problem in problems), problems
    assert any('dq_w: per-channel axis 1, not the output channel of Conv' in problem
               for problem in problems), problems
    assert any('dq_b: dequantizes b, a INT32 initializer, not INT8' in problem
               for problem in problems), problems


# The target environment has no onnx, which onnxruntime.quantization imports: its
# quantize_static's parameters are read from the source it ships.
SIGNATURE = """
import json, os
import onnxruntime
print(json.dumps([onnxruntime.__version__, os.path.join(os.path.dirname(onnxruntime.__file__),
                                                        'quantization', 'quantize.py')]))
"""


def parameters_of(source: Path, function: str) -> list[str]:
    """Return the parameter names of `function` as defined in the Python file `source`."""
    import ast  # noqa: PLC0415

    tree = ast.parse(source.read_text(encoding='utf-8'))
    [definition] = [node for node in ast.walk(tree)
                    if isinstance(node, ast.FunctionDef) and node.name == function]
    arguments = definition.args
    return [argument.arg for argument in
            [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]]


@pytest.mark.target
def test_quantize_refuses_in_one_line_with_the_orins_onnxruntime() -> None:
    """The Orin's onnxruntime (1.12.1) cannot quantize: the refusal names the PC route."""
    result = subprocess.run([str(target_environment()), '-c', SIGNATURE], capture_output=True,
                            text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-2000:]
    version, source = json.loads(result.stdout.splitlines()[-1])
    refusal = quantizer_refusal(version, parameters_of(Path(source), 'quantize_static'))
    assert version == '1.12.1' and refusal is not None
    assert 'quantize on a PC' in refusal and '\n' not in refusal
    assert quantizer_problem() is None, 'the development onnxruntime quantizes'
