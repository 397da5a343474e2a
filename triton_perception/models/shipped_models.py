"""
Install the ONNX weights into the model repository, verified against config/models.yaml.

A model with a `graph` entry is not copied: the graph builder (triton_perception.graphs) turns
the upstream file into the graph its model step serves, and a record beside it
(`model.onnx.json`: upstream sha256, builder fingerprint) says what it was built from.
"""
from __future__ import annotations

from dataclasses import dataclass
import json
import os
from pathlib import Path
import shutil
from typing import Callable

import yaml

from triton_perception.models.detectors import Detector, DETECTOR_RECORD, TEMPLATE
from triton_perception.system.checksums import sha256_of
from triton_perception.system.paths import config_file, SOURCE_ROOT

MODELS_DIR_ENV = 'TRITON_PERCEPTION_MODELS_DIR'


class ModelInstallError(RuntimeError):
    """A weight file is missing or corrupt; the message says where to obtain it."""


@dataclass(frozen=True)
class ModelFile:
    """
    One weight file of config/models.yaml: where it goes in the repository and how to get it.

    `file` is its name in the models directory and `sha256` its checksum; `install_as` is its
    path in the model repository; `licence` and `obtain` are shown when it is missing; `graph`
    names the builder (triton_perception.graphs) that turns it into the served graph, or is ''
    for a file installed as it is.
    """

    name: str
    file: str
    sha256: str
    install_as: str
    licence: str
    obtain: str
    graph: str = ''  # '' (served as is) or a builder of triton_perception.graphs: 'detection'


def manifest(path: Path | None = None) -> list[ModelFile]:
    """Return the model files listed in `path`, by default the package's config/models.yaml."""
    with open(path or config_file('models.yaml'), encoding='utf-8') as stream:
        return [ModelFile(**entry) for entry in yaml.safe_load(stream)['models']]


def default_models_directory() -> Path | None:
    """$TRITON_PERCEPTION_MODELS_DIR, else ../shared/models beside a source checkout."""
    if os.environ.get(MODELS_DIR_ENV):
        return Path(os.environ[MODELS_DIR_ENV])
    shared = SOURCE_ROOT.parent / 'shared' / 'models'
    return shared if shared.is_dir() else None


def build_record(model: ModelFile) -> dict[str, str]:
    """Return what an installed file must have been made from to be current."""
    from triton_perception.graphs import builder_fingerprint  # noqa: PLC0415 (needs onnx)
    return {'source_sha256': model.sha256, 'graph': model.graph,
            'builder': builder_fingerprint() if model.graph else ''}


def record_path(target: Path) -> Path:
    """Return the path of the build record kept beside an installed file: `target` + '.json'."""
    return target.with_name(target.name + '.json')


def is_current(model: ModelFile, target: Path) -> bool:
    """
    Return whether `target` is what installing `model` would make now.

    A file served as it is must have the listed SHA-256; a built graph must have a build record
    equal to `build_record` (same source checksum, builder and builder version).
    """
    if not target.is_file():
        return False
    if not model.graph:
        return sha256_of(target) == model.sha256
    try:
        record = json.loads(record_path(target).read_text(encoding='utf-8'))
        return bool(record == build_record(model))
    except (OSError, ValueError):
        return False


def install_file(model: ModelFile, origin: Path, target: Path) -> None:
    """Copy the file, or build the served graph from it; atomically either way."""
    target.parent.mkdir(parents=True, exist_ok=True)
    if model.graph:
        from triton_perception.graphs.build import build_graph  # noqa: PLC0415 (needs onnx)
        build_graph(model.graph, origin, target)
        record_path(target).write_text(json.dumps(build_record(model), indent=2) + '\n',
                                       encoding='utf-8')
        return
    partial = target.with_suffix('.partial')
    shutil.copyfile(origin, partial)
    partial.replace(target)


def install_models(repository: Path, source: Path | None,
                   log: Callable[[str], None] = print) -> list[Path]:
    """Install each model unless what is installed is current."""
    installed = []
    for model in manifest():
        target = repository / model.install_as
        if is_current(model, target):
            log(f'{model.name}: up to date ({target})')
            installed.append(target)
            continue
        if source is None:
            raise ModelInstallError(_missing_message(model, None))
        origin = source / model.file
        if not origin.is_file():
            raise ModelInstallError(_missing_message(model, origin))
        actual = sha256_of(origin)
        if actual != model.sha256:
            raise ModelInstallError(
                f'{origin} has sha256 {actual}, expected {model.sha256}: it is not the '
                f'{model.name} file this package was tested with. {model.obtain}')
        action = f'building the {model.graph} graph from' if model.graph else 'installing'
        log(f'{model.name}: {action} {origin} -> {target} (licence {model.licence})')
        install_file(model, origin, target)
        if model.graph == 'detection':
            record_default_detector(repository, origin, model.sha256)
        installed.append(target)
    return installed


def check_models(repository: Path) -> list[str]:
    """Problems that would stop the model repository from loading (empty when fine)."""
    problems = []
    for model in manifest():
        target = repository / model.install_as
        if not target.is_file():
            problems.append(f"{target} is missing: run 'triton-perception models install'")
        elif not is_current(model, target):
            problems.append(f'{target} was built from other weights or by another version of '
                            "the graph builder: run 'triton-perception models install'")
    return problems


def _missing_message(model: ModelFile, origin: Path | None) -> str:
    where = (f'{origin} does not exist' if origin else
             f'no models directory: pass --from DIR or set {MODELS_DIR_ENV}')
    return (f'{model.name} weights not found ({where}). {model.obtain} '
            f'Licence: {model.licence}. Then: triton-perception models install --from DIR '
            f'(DIR holding {model.file}).')


def record_default_detector(repository: Path, origin: Path, sha256: str) -> None:
    """Record the default yolov5 detector for `models list`, like the ones users install."""
    import onnx  # noqa: PLC0415

    from triton_perception.graphs.detection_graph import inspect_head  # noqa: PLC0415
    head = inspect_head(onnx.load(str(origin)))
    detector = Detector(TEMPLATE, head.layout, head.input_width, head.input_height,
                        head.classes, sha256, str(origin))
    (repository / TEMPLATE / DETECTOR_RECORD).write_text(
        json.dumps(detector.__dict__, indent=2) + '\n', encoding='utf-8')
