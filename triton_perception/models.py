"""Install the ONNX weights into the model repository, verified against config/models.yaml."""
from __future__ import annotations

import hashlib
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import yaml

from triton_perception.paths import SOURCE_ROOT, config_file

MODELS_DIR_ENV = 'TRITON_PERCEPTION_MODELS_DIR'


class ModelInstallError(RuntimeError):
    """A weight file is missing or corrupt; the message says where to obtain it."""


@dataclass(frozen=True)
class ModelFile:
    name: str
    file: str
    sha256: str
    install_as: str
    licence: str
    obtain: str


def manifest(path: Path | None = None) -> list[ModelFile]:
    with open(path or config_file('models.yaml'), encoding='utf-8') as stream:
        return [ModelFile(**entry) for entry in yaml.safe_load(stream)['models']]


def default_models_directory() -> Path | None:
    """$TRITON_PERCEPTION_MODELS_DIR, else ../shared/models beside a source checkout."""
    if os.environ.get(MODELS_DIR_ENV):
        return Path(os.environ[MODELS_DIR_ENV])
    shared = SOURCE_ROOT.parent / 'shared' / 'models'
    return shared if shared.is_dir() else None


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, 'rb') as stream:
        for chunk in iter(lambda: stream.read(1 << 20), b''):
            digest.update(chunk)
    return digest.hexdigest()


def install_models(repository: Path, source: Path | None,
                   log: Callable[[str], None] = print) -> list[Path]:
    """Copy each weight file into the repository unless an identical one is already there."""
    installed = []
    for model in manifest():
        target = repository / model.install_as
        if target.is_file() and sha256_of(target) == model.sha256:
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
        log(f'{model.name}: installing {origin} -> {target} (licence {model.licence})')
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_suffix('.partial')
        shutil.copyfile(origin, partial)
        partial.replace(target)
        installed.append(target)
    return installed


def check_models(repository: Path) -> list[str]:
    """Problems that would stop the model repository from loading (empty when fine)."""
    problems = []
    for model in manifest():
        target = repository / model.install_as
        if not target.is_file():
            problems.append(f"{target} is missing: run 'triton-perception models install'")
    return problems


def _missing_message(model: ModelFile, origin: Path | None) -> str:
    where = (f'{origin} does not exist' if origin else
             f'no models directory: pass --from DIR or set {MODELS_DIR_ENV}')
    return (f'{model.name} weights not found ({where}). {model.obtain} '
            f'Licence: {model.licence}. Then: triton-perception models install --from DIR '
            f'(DIR holding {model.file}).')
