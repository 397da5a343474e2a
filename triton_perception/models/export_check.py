"""
A user's own export of a shipped model: accepted when it is the same network, not the same bytes.

config/models.yaml pins each file's sha256: the file this package was tested with. An export made
with the documented recipe differs from it byte for byte (exporter and PyTorch versions write
other metadata and constant layouts), so a file with another sha256 is accepted when

1. its structure is the shipped one: input and output shapes and element types, tensor names
   where the graph builder relies on them, and an opset the builder writes (11-12); and
2. its behaviour is the shipped one: the served graph built from it, run with onnxruntime on a
   check image taken from the upstream repository (yolov5's `data/images/bus.jpg`,
   TwinLiteNet's `images/` frames), reproduces the reference in config/models.yaml within the
   tolerance stated there.

Each mismatch is reported with what was expected and what was found.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence, TYPE_CHECKING, TypedDict

import numpy as np
from numpy.typing import NDArray

from triton_perception.errors import TritonPerceptionError

if TYPE_CHECKING:
    from onnx import ModelProto, ValueInfoProto

# Thresholds of the detection reference (shared/models/README.md: conf 0.25, IoU 0.45).
REFERENCE_SCORE_THRESHOLD = 0.25
REFERENCE_IOU_THRESHOLD = 0.45
REFERENCE_MAX_DETECTIONS = 300
LANE_THRESHOLD = 128      # lane_probability >= 128: the lane head's foreground wins
DRIVABLE_ZERO = 128       # drivable_margin > 128: the drivable head's foreground wins
ELEMENT_TYPES = {1: 'float32', 10: 'float16'}


class ExportCheckError(TritonPerceptionError, ValueError):
    """A file is not an equivalent export of a shipped model; the message says what differs."""


class Structure(TypedDict, total=False):
    """A model's `structure` entry of config/models.yaml (see structure_differences)."""

    opset: list[int]  # [lowest, highest]
    names: str  # 'any': the graph builder takes any tensor names
    classes: int  # a detector's class count
    inputs: list[list[str | list[int]]]  # [name, shape] pairs
    outputs: list[list[str | list[int]]]


class BehaviourCheck(TypedDict, total=False):
    """A model's `check` entry of config/models.yaml (see behaviour_differences)."""

    image: str  # the check image, relative to a --check-images directory
    upstream: str  # where it comes from
    detections: list[list[float]]  # detection: [class, score, x1, y1, x2, y2] each
    min_iou: float
    score_tolerance: float
    extra_detections: int
    lane_pixels: int  # lanes: pixel counts of the network-sized maps
    drivable_pixels: int
    relative_tolerance: float


@dataclass(frozen=True)
class CheckResult:
    """What was compared, for the install log."""

    structure: str
    behaviour: str


def _tensors(values: Iterable[ValueInfoProto]) -> list[tuple[str, list[int | str], str]]:
    """(name, shape, element type) of an ONNX graph's inputs or outputs."""
    found = []
    for value in values:
        tensor = value.type.tensor_type
        shape: list[int | str] = [dim.dim_value if dim.HasField('dim_value') else dim.dim_param
                                  for dim in tensor.shape.dim]
        found.append((value.name, shape, ELEMENT_TYPES.get(tensor.elem_type,
                                                           f'type {tensor.elem_type}')))
    return found


def structure_differences(model: ModelProto, expected: Structure) -> list[str]:
    """
    Return how an ONNX model's interface differs from `expected` (empty when it matches).

    `expected` is a model's `structure` entry of config/models.yaml: `inputs` and `outputs` as
    [name, shape] pairs (float32), `opset` as [lowest, highest], and `names: any` where the graph
    builder takes any tensor names (yolov5 v6 exports name the head `output`, v7 `output0`).
    """
    differences = []
    opset = next((entry.version for entry in model.opset_import if entry.domain in ('', 'ai.onnx')),
                 0)
    lowest, highest = expected['opset']
    if not lowest <= opset <= highest:
        differences.append(f'opset {opset}, expected {lowest} to {highest} (export with '
                           f'--opset {highest})')
    initializers = {initializer.name for initializer in model.graph.initializer}
    for kind, values, wanted in (('input', [value for value in model.graph.input
                                            if value.name not in initializers],
                                  expected['inputs']),
                                 ('output', model.graph.output, expected['outputs'])):
        found = _tensors(values)
        if len(found) != len(wanted):
            differences.append(f'{len(found)} {kind}s ({_listed(found)}), expected {len(wanted)} '
                               f'({_listed([(n, s, "float32") for n, s in wanted])})')
            continue
        for (name, shape, element), (wanted_name, wanted_shape) in zip(found, wanted):
            if expected.get('names') != 'any' and name != wanted_name:
                differences.append(f'{kind} {name!r}, expected {wanted_name!r}')
            if shape != wanted_shape:
                differences.append(f'{kind} {name} has shape {shape}, expected {wanted_shape}'
                                   + _class_hint(kind, shape, wanted_shape, expected))
            if element != 'float32':
                differences.append(f'{kind} {name} is {element}, expected float32 (export in '
                                   'FP32; engines build makes the FP16 engine)')
    return differences


def _listed(tensors: Sequence[tuple[object, object, str]]) -> str:
    return ', '.join(f'{name} {shape}' for name, shape, _element in tensors)


def _class_hint(kind: str, shape: list[int | str], wanted: object, expected: Structure) -> str:
    """Say what a detector head's last dimension means: its class count."""
    classes = expected.get('classes')
    if kind != 'output' or not classes or len(shape) != 3 or not isinstance(shape[2], int):
        return ''
    return (f': {shape[2] - 5} classes, expected {classes}. A detector of your own classes '
            'installs with `triton-perception models install --detector FILE.onnx --labels '
            'LABELS.txt --name NAME`')


def find_check_image(check: BehaviourCheck, directories: list[Path]) -> Path | None:
    """Return the check image: DIR/<image> or DIR/<its file name>, in the first DIR holding it."""
    relative = Path(check['image'])
    for directory in directories:
        for candidate in (directory / relative, directory / relative.name):
            if candidate.is_file():
                return candidate
    return None


def behaviour_differences(served_graph: Path, graph: str, check: BehaviourCheck,
                          image_path: Path) -> tuple[list[str], str]:
    """
    Run the served graph on the check image; return the differences and a one-line summary.

    Detection: every reference detection [class, score, x1, y1, x2, y2] must be found with the
    same class, IoU >= `min_iou` and a score within `score_tolerance`, and at most
    `extra_detections` more may appear. Lanes: the lane and drivable pixel counts of the
    network-sized maps within `relative_tolerance` of the reference.
    """
    import cv2  # noqa: PLC0415 (OpenCV and onnxruntime load only for a check)
    import onnxruntime  # noqa: PLC0415

    bgr = cv2.imread(str(image_path))
    if bgr is None:
        raise ExportCheckError(f'{image_path} is not an image OpenCV can read')
    frame = np.ascontiguousarray(bgr[:, :, ::-1])
    session = onnxruntime.InferenceSession(str(served_graph), providers=['CPUExecutionProvider'])
    if graph == 'detection':
        detections, count = session.run(None, {
            'image': frame,
            'score_threshold': np.array([REFERENCE_SCORE_THRESHOLD], np.float32),
            'iou_threshold': np.array([REFERENCE_IOU_THRESHOLD], np.float32),
            'max_detections': np.array([REFERENCE_MAX_DETECTIONS], np.int32)})
        return _detection_differences(detections[:int(count[0])], check, image_path.name)
    # The served graph also returns the mask's runs and the frame-sized drivable area; the
    # reference counts are of the two network-sized maps.
    lane_probability, drivable_margin = session.run(['lane_probability', 'drivable_margin'],
                                                    {'image': frame})
    found = {'lane_pixels': int((lane_probability >= LANE_THRESHOLD).sum()),
             'drivable_pixels': int((drivable_margin > DRIVABLE_ZERO).sum())}
    tolerance = check['relative_tolerance']
    reference = {'lane_pixels': check['lane_pixels'], 'drivable_pixels': check['drivable_pixels']}
    differences = [f'{name} on {image_path.name}: {found[name]}, reference {reference[name]} '
                   f'(tolerance {tolerance:.0%})' for name in found
                   if abs(found[name] - reference[name]) > tolerance * reference[name]]
    summary = (f'{image_path.name}: {found["lane_pixels"]} lane and {found["drivable_pixels"]} '
               f'drivable pixels (reference {reference["lane_pixels"]}, '
               f'{reference["drivable_pixels"]}, tolerance {tolerance:.0%})')
    return differences, summary


def _detection_differences(found: NDArray[np.float32], check: BehaviourCheck,
                           image_name: str) -> tuple[list[str], str]:
    unmatched = list(range(len(found)))
    differences = []
    matched = 0
    for class_id, score, *box in check['detections']:
        candidates = [(_iou(np.asarray(box, np.float64), found[index, :4]), index)
                      for index in unmatched if int(found[index, 5]) == class_id]
        best_iou, best = max(candidates, default=(0.0, -1))
        if best < 0 or best_iou < check['min_iou'] or abs(found[best, 4] - score) > check[
                'score_tolerance']:
            nearest = (f'nearest: score {found[best, 4]:.3f}, IoU {best_iou:.2f}' if best >= 0
                       else 'no detection of that class')
            differences.append(f'class {class_id} at {box} score {score} on {image_name} not '
                               f'reproduced ({nearest})')
            continue
        unmatched.remove(best)
        matched += 1
    if len(unmatched) > check['extra_detections']:
        differences.append(f'{len(unmatched)} detections on {image_name} beyond the reference '
                           f'(at most {check["extra_detections"]}): '
                           + '; '.join(f'class {int(found[i, 5])} score {found[i, 4]:.3f}'
                                       for i in unmatched))
    summary = (f'{image_name}: {matched} of '
               f'{len(check["detections"])} reference detections within IoU '
               f'{check["min_iou"]} and score {check["score_tolerance"]}')
    return differences, summary


def _iou(first: NDArray[np.float64], second: NDArray[np.float32]) -> float:
    width = max(0.0, min(first[2], second[2]) - max(first[0], second[0]))
    height = max(0.0, min(first[3], second[3]) - max(first[1], second[1]))
    overlap = width * height
    union = ((first[2] - first[0]) * (first[3] - first[1])
             + (second[2] - second[0]) * (second[3] - second[1]) - overlap)
    return float(overlap / union) if union > 0 else 0.0
