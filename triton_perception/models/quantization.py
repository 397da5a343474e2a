"""
INT8 served graphs calibrated from the user's own bags: `triton-perception models quantize`.

Static post-training quantization with onnxruntime's `quantize_static` in the QDQ form
(graphs/int8_scope.py says which nodes; models/int8_quantizer.py makes the call, with the
calibration method asked for; models/int8_sensitivity.py chooses what stays float). Why
onnxruntime's tool rather than NVIDIA's Model Optimizer (`nvidia-modelopt`, ONNX PTQ): the CPU
profile runs the graph with onnxruntime, whose quantizer writes what its own CPU kernels fuse
(QLinearConv and friends) at opset 13 and IR 7, within onnxruntime 1.12's reach; Model
Optimizer's ONNX PTQ is itself built on onnxruntime's calibrators
(`modelopt.onnx.quantization.ort_quantization`), aims at TensorRT only, and is a large
dependency the package does not otherwise need. TensorRT builds any symmetric-INT8 QDQ graph as
explicit quantization, so one tool and one calibration serve both runtimes:

- `model_int8.onnx`, the CPU profile's: UINT8 activations (asymmetric), INT8 weights per
  output channel with `reduce_range` (7-bit). onnxruntime's quantize_static docstring (1.31,
  "Choosing parameters for CPU inference"): U8S8 on x86, and reduce_range where the CPU lacks
  VNNI, to avoid saturating VPMADDUBSW; this machine (AMD EPYC, AVX2) lacks it. Symmetric INT8
  activations are not fused into integer kernels on such a CPU: every Conv stayed float between
  Quantize/Dequantize pairs, 4.6 times slower than the float graph (measured here).
- `model_int8_tensorrt.onnx`, what `engines build --int8` gives trtexec: INT8 activations and
  weights, symmetric (zero point 0), the only form TensorRT's explicit quantization takes; the
  same calibration ranges (onnxruntime's calibration cache), so the two differ only in encoding.

The record beside them (`model_int8.onnx.json`) names the calibration: the bags, the topic, the
frames sampled and the sha256 of their pixels, and the float graph it was made from.
"""
from __future__ import annotations

from dataclasses import dataclass
import hashlib
import json
import os
from pathlib import Path
import shutil
import tempfile
from typing import Callable, Iterator, Sequence, TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from triton_perception.bag import BagError, CAMERA_TYPES, read_images
from triton_perception.models.int8_quantizer import (CPU_FLAVOUR, ProgressBar, QuantizeJob,
                                                     TENSORRT_FLAVOUR)
from triton_perception.models.int8_sensitivity import (calibration_method, CALIBRATION_METHODS,
                                                       check_names, designates, Int8Options,
                                                       keep_sensitive_float, KeptFloat,
                                                       named_nodes, outputs_of, Probe,
                                                       SENSITIVITY_FRAMES)
from triton_perception.models.lane_probe import step_scores
from triton_perception.models.shipped_models import ModelInstallError
from triton_perception.system import sha256_of

if TYPE_CHECKING:
    from onnx import ModelProto, ValueInfoProto

    from triton_perception.system import JsonObject

# The served model steps that have a network to quantize, by --models name.
QUANTIZED_STEPS = {'detection': 'yolov5_model', 'lanes': 'lane_model'}
FLOAT_GRAPH = 'model.onnx'
INT8_GRAPH = 'model_int8.onnx'
TENSORRT_GRAPH = 'model_int8_tensorrt.onnx'
DEFAULT_FRAMES = 64
# The record last: it is the switch. A step whose graphs do not match their record is a
# half-installed one, which the INT8 view refuses (serving.server.profile_repository).
INT8_FILES = (INT8_GRAPH, TENSORRT_GRAPH, INT8_GRAPH + '.json')
# A served graph's inputs for one frame: the uint8 image, the float32 thresholds, the int32 count.
Feed = dict[str, NDArray[np.uint8 | np.float32 | np.int32]]


@dataclass(frozen=True)
class Calibration:
    """Where the calibration frames came from: bags, topic, how many, sha256 of their pixels."""

    bags: tuple[str, ...]
    topic: str
    frames: int
    sha256: str

    def summary(self) -> str:
        """Return one line naming it, as /diagnostics and report.md show it."""
        names = ', '.join(Path(bag).name for bag in self.bags)
        return f'{self.frames} frames of {names} ({self.topic}), sha256 {self.sha256[:12]}'


@dataclass(frozen=True)
class Candidate:
    """A quantized step written to a staging directory, not yet in the model repository."""

    step: str
    directory: Path  # holds INT8_FILES


def bag_camera_topic(bag: Path, topic: str | None) -> tuple[str, int]:
    """
    Return `bag`'s camera topic (`topic`, or its only one) and its message count.

    Raises BagError, one line, for a bag that cannot be read, has no camera topic or no frame.
    """
    from rosbags.highlevel import AnyReader, AnyReaderError  # noqa: PLC0415

    try:
        with AnyReader([Path(bag)]) as reader:
            counts = {connection.topic: connection.msgcount for connection in reader.connections
                      if connection.msgtype in CAMERA_TYPES}
            topics = sorted({connection.topic for connection in reader.connections})
    except (FileNotFoundError, AnyReaderError) as error:
        raise BagError(f'cannot open bag {bag}: {error}') from None
    if topic is None and len(counts) == 1:
        topic = next(iter(counts))
    if topic not in counts:
        raise BagError(f'{bag} has no camera topic {topic or ""} (topics: '
                       f"{', '.join(topics) or 'none'}); give --topic" if counts and not topic
                       else f"{bag} has no camera topic{' ' + topic if topic else ''} (topics: "
                       f"{', '.join(topics) or 'none'})")
    if counts[topic] == 0:
        raise BagError(f'{bag} has no frames on {topic}')
    return topic, counts[topic]


Frames = list[NDArray[np.uint8]]


def sample_frames(bags: Sequence[Path], topic: str | None, frames: int,
                  progress: Callable[[str], None] = print) -> tuple[Frames, Calibration]:
    """
    Return `frames` RGB frames sampled evenly across `bags` (all of them when fewer).

    Frames are read with the package's bag reading (bag.read_images), as the nodes decode them.
    """
    topics, counts = zip(*(bag_camera_topic(bag, topic) for bag in bags))
    if len(set(topics)) != 1:
        raise BagError(f"the calibration bags' camera topics differ ({', '.join(topics)}): give "
                       '--topic')
    total = sum(counts)
    wanted = sorted(set(np.linspace(0, total - 1, min(frames, total)).round().astype(int)))
    chosen: list[NDArray[np.uint8]] = []
    digest = hashlib.sha256()
    offset = 0
    for bag, count in zip(bags, counts):
        indices = {index - offset for index in wanted if offset <= index < offset + count}
        for number, image in enumerate(read_images(bag, topics[0])):
            if number in indices:
                frame = np.ascontiguousarray(image.rgb)
                chosen.append(frame)
                digest.update(np.array(frame.shape, np.int64).tobytes() + frame.tobytes())
        offset += count
    if not chosen:
        raise BagError(f"no frame could be read from {', '.join(map(str, bags))} on {topics[0]}")
    progress(f'calibration: {len(chosen)} frames of {total} sampled from {len(bags)} bag(s)')
    return chosen, Calibration(tuple(str(Path(bag).resolve()) for bag in bags), topics[0],
                               len(chosen), digest.hexdigest())


def _feeds(graph_inputs: list[ValueInfoProto], frames: list[NDArray[np.uint8]],
           bar: ProgressBar | None = None) -> Iterator[Feed]:
    """Yield the served graph's inputs per frame; the thresholds do not reach the network."""
    for frame in frames:
        feed: Feed = {}
        for tensor in graph_inputs:
            if tensor.name == 'image':
                feed[tensor.name] = frame
            elif tensor.type.tensor_type.elem_type == 1:  # FLOAT: the detector's thresholds
                feed[tensor.name] = np.array([0.25], np.float32)
            else:                                          # INT32: max_detections
                feed[tensor.name] = np.array([100], np.int32)
        yield feed
        if bar is not None:
            bar.step()


def _empty_constants_as_initializers(model: ModelProto) -> ModelProto:
    """
    Return `model` with each Constant node that holds no element given as an initializer.

    The same graph: a Resize's empty `roi` is an input either way. onnxruntime's histogram
    calibrators (Entropy, Percentile) calibrate every input of a quantizable node that a node
    makes, and fail on a tensor with no element; an initializer they leave alone.
    """
    from onnx import numpy_helper  # noqa: PLC0415

    kept = []
    for node in model.graph.node:
        value = next((attribute.t for attribute in node.attribute if attribute.name == 'value'),
                     None) if node.op_type == 'Constant' else None
        if value is not None and numpy_helper.to_array(value).size == 0:
            initializer = model.graph.initializer.add()
            initializer.CopyFrom(value)
            initializer.name = node.output[0]
        else:
            kept.append(node)
    del model.graph.node[:]
    model.graph.node.extend(kept)
    return model


def quantize_step(float_graph: Path, destination: Path, frames: list[NDArray[np.uint8]],
                  calibration: Calibration, label: str = 'calibrating',
                  options: Int8Options = Int8Options(),
                  log: Callable[[str], None] = print) -> Candidate:
    """
    Write INT8_FILES for the served graph `float_graph` into `destination`.

    Raises ModelInstallError when the quantized graph would not load in the oldest onnxruntime
    the package supports or changed a float step, KeepFloatError for an unknown method.
    """
    import onnx  # noqa: PLC0415

    from triton_perception.graphs import at_quantization_opset, fit_to_target  # noqa: PLC0415
    from triton_perception.graphs import (float_step_problems, network_nodes,  # noqa: PLC0415
                                          target_problems, tensorrt_qdq_problems)

    float_model = onnx.load(str(float_graph))
    nodes = network_nodes(float_model)
    method = calibration_method(options.method)
    destination.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix='triton_perception-quantize-') as scratch:
        job = QuantizeJob(Path(scratch) / 'opset13.onnx', Path(scratch) / 'calibration.json',
                          method)
        onnx.save(_empty_constants_as_initializers(at_quantization_opset(float_model)),
                  str(job.source))
        job.write(Path(scratch) / 'calibrated.onnx', CPU_FLAVOUR, nodes,
                  feeds=_feeds(list(float_model.graph.input), frames,
                               ProgressBar(label, len(frames))))
        kept = _kept_float(job, float_graph, list(float_model.graph.input), nodes, frames,
                           options, log)
        for name, flavour in ((INT8_GRAPH, CPU_FLAVOUR), (TENSORRT_GRAPH, TENSORRT_FLAVOUR)):
            model = onnx.load(str(job.write(Path(scratch) / name, flavour, nodes, kept.nodes)))
            fit_to_target(model)
            problems = [*target_problems(model), *float_step_problems(model, float_model)]
            if name == TENSORRT_GRAPH:
                problems += tensorrt_qdq_problems(model)
            if problems:
                raise ModelInstallError(f'{float_graph}: the quantized graph {name} '
                                        f"{'; '.join(problems)}")
            partial = destination / (name + '.partial')
            partial.write_bytes(model.SerializeToString(deterministic=True))
            os.replace(partial, destination / name)
    record = _record(float_graph, destination, calibration, len(nodes), options.method, kept)
    (destination / (INT8_GRAPH + '.json')).write_text(json.dumps(record, indent=2) + '\n',
                                                      encoding='utf-8')
    return Candidate(float_graph.parent.parent.name, destination)


def _kept_float(job: QuantizeJob, float_graph: Path, graph_inputs: list[ValueInfoProto],
                nodes: list[str], frames: list[NDArray[np.uint8]], options: Int8Options,
                log: Callable[[str], None]) -> KeptFloat:
    """Return what stays float: none, the named nodes and blocks, or the sensitivity pass's."""
    if options.keep_float == 'none':
        return KeptFloat()
    if options.keep_float != 'auto':
        mine = [name for name in options.keep_float
                if any(designates(name, node) for node in nodes)]
        return KeptFloat(tuple(named_nodes(mine, nodes)), tuple(mine))
    step = float_graph.parent.parent.name
    scores = step_scores(step)
    if not scores:
        return KeptFloat()
    picked = frames[::max(1, len(frames) // SENSITIVITY_FRAMES)][:SENSITIVITY_FRAMES]
    feeds = tuple(_feeds(graph_inputs, picked))
    probe = Probe(feeds, tuple(outputs_of(job.source, feeds)), tuple(scores))
    log(f'{step}: sensitivity pass on {len(feeds)} calibration frames')
    return keep_sensitive_float(job, nodes, probe, job.source.parent, options.target,
                                lambda line: log(f'{step}: {line}'))


def _record(float_graph: Path, destination: Path, calibration: Calibration, quantized: int,
            method: str, kept: KeptFloat) -> dict[str, object]:
    """Return model_int8.onnx.json: the calibration, the method, what stayed float, checksums."""
    import onnxruntime  # noqa: PLC0415

    return {'precision': 'int8', 'calibration': calibration.__dict__ | {
                'bags': list(calibration.bags), 'summary': calibration.summary()},
            'float_graph_sha256': sha256_of(float_graph),
            'int8_sha256': sha256_of(destination / INT8_GRAPH),
            'tensorrt_graph_sha256': sha256_of(destination / TENSORRT_GRAPH),
            'quantized_nodes': quantized - len(kept.nodes),
            'calibration_method': method,
            'kept_float': kept.record(),
            'tool': f'onnxruntime {onnxruntime.__version__} quantize_static, QDQ, '
                    f'{CALIBRATION_METHODS[method]}, per-channel weights; CPU: U8 activations, '
                    '7-bit weights; TensorRT: symmetric INT8, float biases'}


def quantizer_problem() -> str | None:
    """
    Return why this onnxruntime cannot run `models quantize`, in one line; None when it can.

    The calibration is shared by the two flavours through `quantize_static`'s calibration
    cache, which older releases lack, such as the 1.12.1 the Orin pins (NumPy 1.21.5): there
    the command refuses and names the PC route instead of failing inside onnxruntime.
    """
    import inspect  # noqa: PLC0415

    import onnxruntime  # noqa: PLC0415
    from onnxruntime.quantization import quantize_static  # noqa: PLC0415

    return quantizer_refusal(onnxruntime.__version__,
                             list(inspect.signature(quantize_static).parameters))


def quantizer_refusal(version: str, parameters: Sequence[str]) -> str | None:
    """Return the refusal for onnxruntime `version` whose quantize_static takes `parameters`."""
    if 'calibration_cache_path' in parameters:
        return None
    return (f'models quantize needs a newer onnxruntime than {version} (the Orin pins '
            "1.12.1): quantize on a PC and copy the model steps' INT8 files to the Orin "
            '(docs/models.md, "INT8 from the PC to the Orin")')


def quantize_models(repository: Path, bags: Sequence[Path], staging: Path,
                    models: Sequence[str] = ('detection', 'lanes'), frames: int = DEFAULT_FRAMES,
                    topic: str | None = None, log: Callable[[str], None] = print,
                    options: Int8Options = Int8Options()) -> tuple[list[Candidate], Calibration]:
    """
    Quantize the served graphs of `models` into `staging`/<step>/; the repository is not touched.

    Raises BagError for a bag without a camera topic or frames, ModelInstallError when a float
    graph is not installed or this onnxruntime cannot quantize (`quantizer_problem`).
    """
    if problem := quantizer_problem():
        raise ModelInstallError(problem)
    steps = [QUANTIZED_STEPS[name] for name in models]
    for step in steps:
        if not (repository / step / '1' / FLOAT_GRAPH).is_file():
            raise ModelInstallError(f"{repository / step / '1' / FLOAT_GRAPH} is missing: run "
                                    "'triton-perception models install' first")
    calibration_method(options.method)
    if not isinstance(options.keep_float, str):
        check_names(options.keep_float, [_network_nodes(repository / step / '1' / FLOAT_GRAPH)
                                         for step in steps])
    sampled, calibration = sample_frames(list(bags), topic, frames, log)
    candidates = []
    for step in steps:
        log(f'{step}: quantizing to INT8 (onnxruntime quantize_static, QDQ)')
        candidates.append(quantize_step(repository / step / '1' / FLOAT_GRAPH,
                                        staging / step, sampled, calibration,
                                        f'{step}: calibrating', options, log))
    return candidates, calibration


def _network_nodes(float_graph: Path) -> list[str]:
    """Return the quantizable nodes of an installed served graph."""
    import onnx  # noqa: PLC0415

    from triton_perception.graphs import network_nodes  # noqa: PLC0415

    return network_nodes(onnx.load(str(float_graph)))


def install_quantized(repository: Path, candidates: Sequence[Candidate],
                      log: Callable[[str], None] = print) -> list[Path]:
    """
    Move each candidate's files into its step's version directory (each file atomically).

    The graphs first, the record that names their SHA-256 last: until the record is replaced,
    the step's graphs do not match it and precision int8 refuses the step by name.
    """
    installed = []
    for candidate in candidates:
        for name in INT8_FILES:
            target = repository / candidate.step / '1' / name
            partial = target.with_name(name + '.partial')
            shutil.copyfile(candidate.directory / name, partial)
            os.replace(partial, target)
            installed.append(target)
        log(f'{candidate.step}: installed {repository / candidate.step / "1" / INT8_GRAPH}')
    return installed


def candidate_repository(repository: Path, candidates: Sequence[Candidate], view: Path) -> Path:
    """
    Return a repository at `view` that serves the candidates as the INT8 graphs, nothing copied.

    Every model links to the repository's own; a candidate's step is a directory whose version
    directory links each float file and the candidate's INT8 files.
    """
    view.mkdir(parents=True, exist_ok=True)
    steps = {candidate.step: candidate for candidate in candidates}
    for model in sorted(path for path in Path(repository).resolve().iterdir() if path.is_dir()):
        if model.name not in steps:
            (view / model.name).symlink_to(model)
            continue
        for entry in model.iterdir():
            if entry.name != '1':
                (view / model.name / entry.name).parent.mkdir(parents=True, exist_ok=True)
                (view / model.name / entry.name).symlink_to(entry)
        version = view / model.name / '1'
        version.mkdir(parents=True)
        for entry in (model / '1').iterdir():
            if entry.name not in INT8_FILES:
                (version / entry.name).symlink_to(entry)
        for name in INT8_FILES:
            (version / name).symlink_to((steps[model.name].directory / name).resolve())
    return view


def int8_record(step_directory: Path) -> JsonObject | None:
    """Return the INT8 record of a model step (`<step>/1/model_int8.onnx.json`), or None."""
    try:
        record: JsonObject = json.loads(
            (step_directory / '1' / (INT8_GRAPH + '.json')).read_text(encoding='utf-8'))
    except (OSError, ValueError):
        return None
    return record
