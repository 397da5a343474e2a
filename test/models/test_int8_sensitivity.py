"""
`models quantize --keep-float` and `--calibration-method`: the sensitivity pass and the record.

The sensitivity pass runs on a small graph built here whose one block loses the output in INT8
by construction: an output channel whose weights span 1 to 1000, quantized per channel in 7
bits, rounds the weight 1 to 0, and only that weight carries the signal. The record's figures
come from the served lane graph, built from the shipped weights (never committed).
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto
from onnxruntime.quantization import CalibrationMethod
from onnxruntime.quantization.calibrate import load_tensors_data
import pytest

from support.checkout import clip_bag_of, shared_path
from triton_perception.cli import main
from triton_perception.graphs import build_graph, make_model, tensorrt_qdq_problems
from triton_perception.models import (Calibration, INT8_GRAPH, Int8Options, ModelInstallError,
                                      quantize_models, TENSORRT_GRAPH)
from triton_perception.models.int8_quantizer import CPU_FLAVOUR, QuantizeJob
from triton_perception.models.int8_sensitivity import (block_of, calibration_method,
                                                       keep_sensitive_float, KeepFloatError,
                                                       mask_score, named_nodes, outputs_of,
                                                       parse_keep_float, Probe, rank_blocks)
from triton_perception.models.quantization import quantize_step

NODES = ['/stem/Conv', '/mixer/Conv', '/mixer/Conv_1', '/head/Conv']


def _conv(name: str, source: str, output: str, weights: list[list[float]]) -> tuple[
        onnx.NodeProto, onnx.TensorProto]:
    array = np.array(weights, np.float32)[:, :, None, None]
    tensor = numpy_helper.from_array(array, name.replace('/', '_') + '_w')
    return helper.make_node('Conv', [source, tensor.name], [output], name=name), tensor


def small_graph(path: Path) -> Path:
    """Write four 1x1 convolutions in three blocks; /mixer's first spans 1 to 1000."""
    stem, w1 = _conv(NODES[0], 'x', 's', [[1, 0], [0, 1]])
    mixer, w2 = _conv(NODES[1], 's', 'n', [[1, 1000]])   # channel 1 is 0 on every frame
    # A float node between Quantize/Dequantize pairs gets its weights quantized per tensor by
    # onnxruntime's optimizer (WeightBiasQuantization): a block keeps its inner nodes float.
    mixer_out, w4 = _conv(NODES[2], 'n', 'm', [[1]])
    head, w3 = _conv(NODES[3], 'm', 'y', [[1]])
    graph = helper.make_graph(
        [stem, mixer, mixer_out, head], 'small',
        [helper.make_tensor_value_info('x', TensorProto.FLOAT, [1, 2, 8, 8])],
        [helper.make_tensor_value_info('y', TensorProto.FLOAT, [1, 1, 8, 8])],
        initializer=[w1, w2, w3, w4])
    onnx.save(make_model(graph, 13), str(path))  # IR 7, the target's
    return path


def _feeds(count: int) -> tuple[dict[str, np.ndarray], ...]:
    generator = np.random.default_rng(65)
    frames = []
    for _ in range(count):
        frame = np.zeros((1, 2, 8, 8), np.float32)
        # away from the threshold 0.5: a rounding error alone flips no pixel
        frame[0, 0] = generator.choice([0.2, 0.8], (8, 8)) + generator.uniform(-0.1, 0.1, (8, 8))
        frames.append({'x': frame})
    return tuple(frames)


@pytest.fixture
def probe_and_job(tmp_path: Path) -> tuple[Probe, QuantizeJob]:
    """Calibrate the small graph (MinMax) and return the probe of its output `y >= 0.5`."""
    source = small_graph(tmp_path / 'small.onnx')
    job = QuantizeJob(source, tmp_path / 'cache.json', calibration_method('minmax'))
    feeds = _feeds(8)
    job.write(tmp_path / 'calibrated.onnx', CPU_FLAVOUR, NODES, feeds=iter(feeds))
    return Probe(feeds, tuple(outputs_of(source, feeds)), (mask_score('y', 0.5),)), job


def test_the_sensitive_block_ranks_first(probe_and_job: tuple[Probe, QuantizeJob],
                                         tmp_path: Path) -> None:
    """/mixer alone in INT8 loses the mask; /stem and /head alone keep it."""
    probe, job = probe_and_job
    ranking = rank_blocks(job, NODES, probe, tmp_path)
    assert [loss.block for loss in ranking][0] == '/mixer'
    assert ranking[0].agreement[0] < 0.2, ranking
    assert all(loss.agreement[0] > 0.9 for loss in ranking[1:]), ranking


def test_auto_keeps_the_sensitive_block_float(probe_and_job: tuple[Probe, QuantizeJob],
                                              tmp_path: Path) -> None:
    """The pass keeps /mixer float, only it, and the graph then agrees with the float one."""
    probe, job = probe_and_job
    kept = keep_sensitive_float(job, NODES, probe, tmp_path, 0.95, log=lambda line: None)
    assert kept.blocks == ('/mixer',) and kept.nodes == ('/mixer/Conv', '/mixer/Conv_1')
    assert kept.whole_agreement[0] < 0.2 and kept.agreement[0] >= 0.95
    graph = onnx.load(str(job.write(tmp_path / 'kept.onnx', CPU_FLAVOUR, NODES, kept.nodes)))
    mixer = next(node for node in graph.graph.node if node.name == '/mixer/Conv')
    weights = {tensor.name for tensor in graph.graph.initializer}
    assert mixer.input[1] in weights  # its weights stay a float initializer
    assert kept.record()['sensitivity'][0]['block'] == '/mixer'


@pytest.mark.parametrize('name', ['minmax', 'entropy', 'percentile'])
def test_the_calibration_method_reaches_quantize_static(name: str, tmp_path: Path) -> None:
    """The cache quantize_static writes names the method the option asked for."""
    job = QuantizeJob(small_graph(tmp_path / 'small.onnx'), tmp_path / 'cache.json',
                      calibration_method(name))
    job.write(tmp_path / 'q.onnx', CPU_FLAVOUR, NODES, feeds=iter(_feeds(4)))
    assert load_tensors_data(tmp_path / 'cache.json').calibration_method == getattr(
        CalibrationMethod, {'minmax': 'MinMax', 'entropy': 'Entropy',
                            'percentile': 'Percentile'}[name])


def test_names_and_blocks_resolve_and_unknown_ones_are_refused() -> None:
    """A block names its nodes; a name of neither is refused naming the nearest."""
    assert block_of('/encoder/level2.0/d4/conv/Conv') == '/encoder/level2.0'
    assert named_nodes(['/mixer'], NODES) == ['/mixer/Conv', '/mixer/Conv_1']
    assert named_nodes(['/encoder'], ['/encoder/a/Conv', '/encoder/b/Conv', '/up/Conv']) == [
        '/encoder/a/Conv', '/encoder/b/Conv']
    assert parse_keep_float('auto') == 'auto' and parse_keep_float('a, b') == ('a', 'b')
    with pytest.raises(KeepFloatError, match='nearest: /mixer'):
        named_nodes(['/mixr'], NODES)
    with pytest.raises(KeepFloatError, match='minmax, entropy, percentile'):
        calibration_method('kl')


@pytest.fixture(scope='module')
def lane_repository(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Build a repository holding the float lane graph, from the shipped weights."""
    repository = tmp_path_factory.mktemp('repository')
    build_graph('lanes', shared_path('models', 'twinlitenet', 'twinlitenet.onnx'),
                repository / 'lane_model' / '1' / 'model.onnx')
    return repository


@pytest.mark.slow
def test_the_record_names_the_method_and_the_blocks_kept_float(
        lane_repository: Path, tmp_path: Path) -> None:
    """Both graphs keep the named block float; the TensorRT one still follows its rules."""
    bag = clip_bag_of(tmp_path, 'clip', 4)
    candidates, _ = quantize_models(lane_repository, [bag], tmp_path / 'staging', ('lanes',),
                                    4, log=lambda line: None,
                                    options=Int8Options('percentile', ('/up_1_1',)))
    directory = candidates[0].directory
    record = json.loads((directory / (INT8_GRAPH + '.json')).read_text(encoding='utf-8'))
    assert record['calibration_method'] == 'percentile' and 'Percentile' in record['tool']
    kept = record['kept_float']
    assert kept['blocks'] == ['/up_1_1'] and kept['nodes'] and all(
        node.startswith('/up_1_1/') for node in kept['nodes'])
    for name in (INT8_GRAPH, TENSORRT_GRAPH):
        graph = onnx.load(str(directory / name))
        producers = {output: node.op_type for node in graph.graph.node
                     for output in node.output}
        for node in graph.graph.node:
            if node.name in kept['nodes']:  # its parameters float: no DequantizeLinear
                assert all(producers.get(source) != 'DequantizeLinear'
                           for source in node.input[1:]), (name, node.name)
    assert tensorrt_qdq_problems(onnx.load(str(directory / TENSORRT_GRAPH))) == []


def test_an_unknown_method_is_refused_in_one_line(
        lane_repository: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Exit code 2, one line naming the methods, nothing read or written."""
    bags = [clip_bag_of(tmp_path, name, 2) for name in ('calibration', 'guard')]
    code = main(['models', 'quantize', '--model-repository', str(lane_repository),
                 '--calibrate', str(bags[0]), '--guard', str(bags[1]), '--models', 'lanes',
                 '--calibration-method', 'kl', '--output', str(tmp_path / 'report')])
    error = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(error) == 1 and 'minmax, entropy, percentile' in error[0], error
    assert not (tmp_path / 'report').exists()


def test_the_lane_probe_scores_lanes_as_the_guard_pairs_them(
        lane_repository: Path, tmp_path: Path) -> None:
    """The float graph against itself agrees 1.0; against a frame with no lane, 0."""
    from triton_perception.bag import read_images  # noqa: PLC0415
    from triton_perception.models.lane_probe import lane_score  # noqa: PLC0415

    frame = next(iter(read_images(clip_bag_of(tmp_path, 'clip', 1)))).rgb
    feed = {'image': frame}
    outputs = outputs_of(lane_repository / 'lane_model' / '1' / 'model.onnx', [feed])[0]
    assert int(outputs['lane_run_counts'].sum()) > 0
    assert lane_score(outputs, outputs, feed) == 1.0
    empty = dict(outputs, lane_run_counts=np.zeros_like(outputs['lane_run_counts']))
    assert lane_score(outputs, empty, feed) == 0.0


def test_percentile_calibrates_the_detector(
        tmp_path: Path) -> None:
    """
    The served detector graph quantizes with Percentile, blank frames included.

    onnxruntime's histogram calibrators fail on a tensor with no element, and the exported
    YOLOv5 makes its Resizes' empty `roi` with Constant nodes: given as initializers, which the
    calibrators leave alone, the graph is the same and calibrates.
    """
    graph = tmp_path / 'yolov5_model' / '1' / 'model.onnx'
    build_graph('detection', shared_path('models', 'yolov5n', 'yolov5n.onnx'), graph)
    # Nine blank frames: the calibrator bins them three at a time, and the second batch of
    # empty tensors is the one it could not take.
    frames = [np.full((360, 640, 3), 10 * index, np.uint8) for index in range(9)]
    candidate = quantize_step(graph, tmp_path / 'int8', frames,
                              Calibration(('blank',), '/camera/image_raw', 9, '0' * 64),
                              options=Int8Options('percentile'), log=lambda line: None)
    assert (tmp_path / 'int8' / INT8_GRAPH).is_file(), candidate


def test_a_calibration_onnxruntime_cannot_do_is_refused_in_one_line(tmp_path: Path) -> None:
    """A fault inside quantize_static comes out as ModelInstallError naming the method."""
    job = QuantizeJob(small_graph(tmp_path / 'small.onnx'), tmp_path / 'cache.json',
                      calibration_method('percentile'))
    empty = ({'x': np.zeros((1, 2, 0, 8), np.float32)},) * 2
    with pytest.raises(ModelInstallError, match='with Percentile calibration') as error:
        job.write(tmp_path / 'q.onnx', CPU_FLAVOUR, NODES, feeds=iter(empty))
    assert '\n' not in str(error.value)
