"""
Install the ONNX weights into the model repository, checked against config/models.yaml.

A model with a `graph` entry is not copied: the graph builder (triton_perception.graphs) turns
the upstream file into the graph its model step serves, and a record beside it
(`model.onnx.json`: the source's sha256, the tested file's, the builder fingerprint and how
the source was checked) says what it was built from. The pinned sha256 is the file this
package was tested with; another export of the same network is accepted after the structure
and behaviour checks of models/export_check.py.
"""
from __future__ import annotations

from dataclasses import dataclass, field
import json
import os
from pathlib import Path
import shutil
from typing import Callable, TYPE_CHECKING

import yaml

from triton_perception.errors import TritonPerceptionError
from triton_perception.models.detectors import Detector, DETECTOR_RECORD, TEMPLATE
from triton_perception.models.health_model import (health_graph_current, HEALTH_GRAPH_FILE,
                                                   install_health_graph)
from triton_perception.system import config_file, sha256_of, shared_directory

if TYPE_CHECKING:
    from triton_perception.models.export_check import BehaviourCheck, Structure

MODELS_DIR_ENV = 'TRITON_PERCEPTION_MODELS_DIR'


class ModelInstallError(TritonPerceptionError, RuntimeError):
    """A weight file is missing or corrupt; the message says where to obtain it."""


# A model whose entry has no `structure` or `check`: nothing to compare.
def _no_structure() -> Structure:
    return {}


def _no_check() -> BehaviourCheck:
    return {}


@dataclass(frozen=True)
class ModelFile:
    """
    One weight file of config/models.yaml: where it goes in the repository and how to get it.

    `file` is its name in the models directory and `sha256` the checksum of the file this
    package was tested with; `install_as` is its path in the model repository; `licence` and
    `obtain` are shown when it is missing; `graph` names the builder (triton_perception.graphs)
    that turns it into the served graph, or is '' for a file installed as it is; `structure`
    and `check` are what another export of it must match (models/export_check.py).
    """

    name: str
    file: str
    sha256: str
    install_as: str
    licence: str
    obtain: str
    graph: str = ''  # '' (served as is) or a builder of triton_perception.graphs: 'detection'
    structure: Structure = field(default_factory=_no_structure)
    check: BehaviourCheck = field(default_factory=_no_check)


@dataclass(frozen=True)
class ExportChecks:
    """How `models install` checks a file whose sha256 is not the tested one."""

    image_directories: tuple[Path, ...] = ()
    behaviour: bool = True  # False: structure only (`--no-behaviour-check`)


def manifest(path: Path | None = None) -> list[ModelFile]:
    """Return the model files listed in `path`, by default the package's config/models.yaml."""
    with open(path or config_file('models.yaml'), encoding='utf-8') as stream:
        return [ModelFile(**entry) for entry in yaml.safe_load(stream)['models']]


def default_models_directory() -> Path | None:
    """$TRITON_PERCEPTION_MODELS_DIR, else the shared folder's models/ (system.shared_directory)."""
    if os.environ.get(MODELS_DIR_ENV):
        return Path(os.environ[MODELS_DIR_ENV])
    shared = shared_directory() / 'models'
    return shared if shared.is_dir() else None


def build_record(model: ModelFile, source_sha256: str = '', checked: str = '') -> dict[str, str]:
    """Return what an installed file must have been made from to be current."""
    from triton_perception.graphs import builder_fingerprint  # noqa: PLC0415 (needs onnx)
    return {'source_sha256': source_sha256 or model.sha256, 'tested_sha256': model.sha256,
            'graph': model.graph, 'builder': builder_fingerprint() if model.graph else '',
            'checked': checked or 'the tested file'}


def record_path(target: Path) -> Path:
    """Return the path of the build record kept beside an installed file: `target` + '.json'."""
    return target.with_name(target.name + '.json')


def is_current(model: ModelFile, target: Path, source_sha256: str | None = None) -> bool:
    """
    Say whether `target` was built by this builder for this entry (from `source_sha256`).

    Without a source (`models install` with nothing to install from, or `check_models`), any
    accepted source counts.
    """
    if not target.is_file():
        return False
    if not model.graph:
        return sha256_of(target) == model.sha256
    try:
        record = json.loads(record_path(target).read_text(encoding='utf-8'))
    except (OSError, ValueError):
        return False
    expected = build_record(model)
    return (all(record.get(key) == expected[key] for key in ('tested_sha256', 'graph', 'builder'))
            and source_sha256 in (None, record.get('source_sha256')))


def install_file(model: ModelFile, origin: Path, target: Path, source_sha256: str = '',
                 checks: ExportChecks | None = None, log: Callable[[str], None] = print) -> None:
    """
    Copy the file, or build the served graph from it; atomically either way.

    A source whose sha256 is not the tested one is built beside the target first, checked
    (export_check), and only then moved into place.

    Raises ModelInstallError when the source is not an equivalent export, saying what differs.
    """
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix('.partial')
    equivalent = bool(source_sha256) and source_sha256 != model.sha256
    checked = ''
    if equivalent:
        checked = _check_structure(model, origin, log)
    try:
        if model.graph:
            from triton_perception.graphs import build_graph  # noqa: PLC0415 (needs onnx)
            build_graph(model.graph, origin, partial)
        else:
            shutil.copyfile(origin, partial)
        if equivalent:
            checked = _check_behaviour(model, partial, checks or ExportChecks(), checked, log)
        partial.replace(target)
    finally:
        partial.unlink(missing_ok=True)
    if model.graph:
        record_path(target).write_text(json.dumps(build_record(model, source_sha256, checked),
                                                  indent=2) + '\n', encoding='utf-8')


def _check_structure(model: ModelFile, origin: Path, log: Callable[[str], None]) -> str:
    import onnx  # noqa: PLC0415

    from triton_perception.models.export_check import structure_differences  # noqa: PLC0415
    differences = structure_differences(onnx.load(str(origin), load_external_data=False),
                                        model.structure)
    if differences:
        raise ModelInstallError(
            f'{origin} is not an export of {model.name}: ' + '; '.join(differences)
            + f'. {model.obtain}')
    log(f'{model.name}: structure matches (inputs, outputs, shapes, opset)')
    return 'structure'


def _check_behaviour(model: ModelFile, served_graph: Path, checks: ExportChecks, checked: str,
                     log: Callable[[str], None]) -> str:
    from triton_perception.models.export_check import (behaviour_differences,  # noqa: PLC0415
                                                       find_check_image)
    image = find_check_image(model.check, list(checks.image_directories))
    if image is None:
        where = ', '.join(dict.fromkeys(str(directory) for directory in checks.image_directories))
        where = where or 'nowhere'
        if checks.behaviour:
            raise ModelInstallError(
                f'{model.name}: the behaviour check needs {Path(model.check["image"]).name} '
                f'({model.check["upstream"]}); looked in {where}. Pass --check-images DIR with '
                'that file, or --no-behaviour-check to accept the file on its structure alone')
        log(f'{model.name}: WARNING behaviour not checked (--no-behaviour-check): accepted on '
            'its structure alone')
        return checked
    differences, summary = behaviour_differences(served_graph, model.graph, model.check, image)
    if differences:
        raise ModelInstallError(f'{model.name}: the file does not behave as the tested one: '
                                + '; '.join(differences))
    log(f'{model.name}: behaviour matches: {summary}')
    return f'{checked} and behaviour ({summary})'


def install_models(repository: Path, source: Path | None,
                   log: Callable[[str], None] = print,
                   checks: ExportChecks | None = None) -> list[Path]:
    """
    Install each model unless what is installed is current.

    A source file with another sha256 than the tested one is installed when it is the same
    network (structure and behaviour checks); the check images are looked for in
    `checks.image_directories`, then beside the models directory (`data/`, as ../shared has it).
    """
    installed = []
    if checks is None:
        checks = ExportChecks()
    if source is not None:
        checks = ExportChecks((*checks.image_directories, source, source.parent / 'data'),
                              checks.behaviour)
    for model in manifest():
        target = repository / model.install_as
        origin = source / model.file if source is not None else None
        actual = sha256_of(origin) if origin is not None and origin.is_file() else None
        if is_current(model, target, actual):
            log(f'{model.name}: up to date ({target})')
            installed.append(target)
            continue
        if origin is None or actual is None:
            raise ModelInstallError(_missing_message(model, origin))
        if actual != model.sha256:
            log(f'{model.name}: {origin} has sha256 {actual[:16]}..., not the file this package '
                f'was tested with ({model.sha256[:16]}...): checking it is the same network')
        action = f'building the {model.graph} graph from' if model.graph else 'installing'
        log(f'{model.name}: {action} {origin} -> {target} (licence {model.licence})')
        install_file(model, origin, target, actual, checks, log)
        if model.graph == 'detection':
            record_default_detector(repository, origin, actual)
        installed.append(target)
    installed.append(install_health_graph(repository, log))
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
    if not health_graph_current(repository):
        problems.append(f'{repository / HEALTH_GRAPH_FILE} is missing or was written by another '
                        "version of the graph builder: run 'triton-perception models install'")
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

    from triton_perception.graphs import inspect_head  # noqa: PLC0415
    head = inspect_head(onnx.load(str(origin)))
    detector = Detector(TEMPLATE, head.layout, head.input_width, head.input_height,
                        head.classes, sha256, str(origin))
    (repository / TEMPLATE).mkdir(parents=True, exist_ok=True)
    (repository / TEMPLATE / DETECTOR_RECORD).write_text(
        json.dumps(detector.__dict__, indent=2) + '\n', encoding='utf-8')
