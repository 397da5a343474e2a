"""
Bring your own detector.

Install a YOLOv5 or YOLOv8/YOLO11 ONNX export, with any classes and input size, as a detection
ensemble NAME beside the default `yolov5`, with the same IMAGE -> DETECTIONS + NUM_DETECTIONS
contract (model_repository/README.md).

    triton-perception models install --detector best.onnx --labels classes.txt --name cones

writes into the model repository:
  NAME/               the ensemble, and `labels.txt` + `detector.json` (what `models list` shows)
  NAME_model/         the served graph built from the file, letterbox to the detector's input
                      size included (TensorRT on the Orin after `engines build`, onnxruntime
                      in the CPU profile)
detection_node then serves it with `model_name:=NAME`, with its labels.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
import json
from pathlib import Path
import re
from typing import Callable

from triton_perception.errors import TritonPerceptionError
from triton_perception.serving import link_step_code
from triton_perception.system import sha256_of

DETECTOR_RECORD = 'detector.json'
LABELS_FILE = 'labels.txt'
TEMPLATE = 'yolov5'  # the default detector's ensemble, whose configs the new ones follow
NAME_PATTERN = re.compile(r'[A-Za-z][A-Za-z0-9_\-]{0,63}')


class DetectorInstallError(TritonPerceptionError, ValueError):
    """The detector, its labels or its name cannot be installed; the message says why."""


@dataclass(frozen=True)
class Detector:
    """
    An installed detector, as `models list` shows it and detector.json records it.

    `layout` is the head layout found in the file (YOLOv5 or YOLOv8/YOLO11 rows), the input size
    is in px, `classes` is the number of classes the head scores, and `sha256` and `source` are
    the checksum and path of the ONNX file it was built from.
    """

    name: str
    layout: str
    input_width: int
    input_height: int
    classes: int
    sha256: str
    source: str


def read_labels(path: Path) -> list[str]:
    """
    Return the class names of a labels file, one per non-blank line, in class-id order.

    Raises DetectorInstallError if the file does not exist.
    """
    if not path.is_file():
        raise DetectorInstallError(f'labels file {path} does not exist')
    labels = [line.strip() for line in path.read_text(encoding='utf-8').splitlines()]
    return [label for label in labels if label]


def install_detector(repository: Path, onnx_path: Path, labels_path: Path, name: str,
                     layout: str = 'auto', log: Callable[[str], None] = print) -> Detector:
    """Check the file and its labels, build the served graph and write the three steps."""
    import onnx  # noqa: PLC0415

    from triton_perception.graphs import build_detection_graph, inspect_head
    from triton_perception.graphs import HeadLayoutError  # noqa: PLC0415

    if not NAME_PATTERN.fullmatch(name) or name in ('lane_detection', TEMPLATE):
        raise DetectorInstallError(
            f"detector name {name!r}: use letters, digits, '_' and '-', starting with a letter, "
            f"and not {TEMPLATE} or lane_detection (the package's own models)")
    if not onnx_path.is_file():
        raise DetectorInstallError(f'detector file {onnx_path} does not exist')
    try:
        head = inspect_head(onnx.load(str(onnx_path)), layout)
    except (HeadLayoutError, ValueError) as error:
        raise DetectorInstallError(f'{onnx_path}: {error}') from None
    labels = read_labels(labels_path)
    if len(labels) != head.classes:
        raise DetectorInstallError(
            f'{labels_path} has {len(labels)} labels but {onnx_path} has {head.classes} classes '
            f'({head.layout} head): give one class name per line, in class-id order')

    model_step = repository / f'{name}_model'
    log(f'{name}: building the detection graph from {onnx_path} ({head.layout}, '
        f'{head.classes} classes, {head.input_width}x{head.input_height})')
    build_detection_graph(onnx_path, model_step / '1' / 'model.onnx', head.layout)
    detector = Detector(name, head.layout, head.input_width, head.input_height, head.classes,
                        sha256_of(onnx_path), str(onnx_path))
    _write_steps(repository, detector)
    (repository / name / LABELS_FILE).write_text('\n'.join(labels) + '\n', encoding='utf-8')
    (repository / name / DETECTOR_RECORD).write_text(json.dumps(asdict(detector), indent=2) +
                                                     '\n', encoding='utf-8')
    log(f'{name}: installed ({repository / name}); serve it with detection_node '
        f'model_name:={name} (run `triton-perception engines build` on the Orin)')
    return detector


def _write_steps(repository: Path, detector: Detector) -> None:
    """
    Write the template's configs with the new names, and link its code files.

    The frame input, thresholds and outputs are the template's: the input size lives in the graph.
    """
    name = detector.name
    replacements = [(f'"{TEMPLATE}_model"', f'"{name}_model"'),
                    (f'name: "{TEMPLATE}"', f'name: "{name}"')]
    for step, files in ((TEMPLATE, ('config.pbtxt',)),
                        (f'{TEMPLATE}_model', ('config.pbtxt', 'configs/cpu.pbtxt'))):
        target_step = repository / step.replace(TEMPLATE, name, 1)
        for file in files:
            text = (repository / step / file).read_text(encoding='utf-8')
            for old, new in replacements:
                text = text.replace(old, new)
            (target_step / file).parent.mkdir(parents=True, exist_ok=True)
            (target_step / file).write_text(text, encoding='utf-8')
        link_step_code(repository, step, target_step.name)


def installed_detectors(repository: Path) -> list[Detector]:
    """Every detector with a record, the default one first."""
    found = []
    for record in sorted(repository.glob(f'*/{DETECTOR_RECORD}')):
        found.append(Detector(**json.loads(record.read_text(encoding='utf-8'))))
    return sorted(found, key=lambda detector: (detector.name != TEMPLATE, detector.name))


def detector_labels_file(repository: Path, model_name: str) -> Path | None:
    """Return the labels an installed detector came with (None for one without)."""
    path = repository / model_name / LABELS_FILE
    return path if path.is_file() else None


def labels_for(model_name: str, labels_file: str = '',
               repository: Path | None = None) -> list[str]:
    """
    Return a detector's class names.

    `labels_file` if given, else the labels its install stored in the model repository, else the 80
    COCO names (the default yolov5).
    """
    from triton_perception.outputs import load_labels  # noqa: PLC0415
    from triton_perception.system import default_model_repository  # noqa: PLC0415

    if labels_file:
        return load_labels(labels_file)
    stored = detector_labels_file(repository or default_model_repository(), model_name)
    return load_labels(str(stored) if stored else '')
