"""
A model step as Triton's Python backend sees it.

Its config and its modules, read from the model repository, for code that runs a step's processing
outside the server (bench, tests).
"""
from __future__ import annotations

import importlib.util
import os
from pathlib import Path
import sys
from types import ModuleType

from google.protobuf import text_format
from tritonclient.grpc import model_config_pb2


def load_step_module(repository: Path, step: str, module: str) -> ModuleType:
    """Import <step>/1/<module>.py by path: exactly the code Triton's Python backend runs."""
    name = f'triton_perception_step_{step}_{module}'
    spec = importlib.util.spec_from_file_location(name, repository / step / '1' / f'{module}.py')
    if spec is None or spec.loader is None:
        raise ImportError(f'cannot load {repository / step / "1" / module}.py')
    loaded = importlib.util.module_from_spec(spec)
    sys.modules[name] = loaded
    spec.loader.exec_module(loaded)
    return loaded


def link_step_code(repository: Path, template: str, step: str) -> None:
    """
    Link every code file of step `template`'s version directory into step `step`'s.

    Installed detectors and lane models run the package's own step code: one copy of it, so an
    update of the package updates every installed step.
    """
    target = repository / step / '1'
    target.mkdir(parents=True, exist_ok=True)
    for code in sorted((repository / template / '1').glob('*.py')):
        link = target / code.name
        if link.is_symlink() or link.exists():
            link.unlink()
        link.symlink_to(os.path.relpath(code.resolve(), link.parent))


def read_config(path: Path) -> model_config_pb2.ModelConfig:
    """Return a config.pbtxt as Triton parses it (the protobuf text format of ModelConfig)."""
    return text_format.Parse(path.read_text(encoding='utf-8'), model_config_pb2.ModelConfig())


def step_config(repository: Path, step: str,
                config_name: str | None = None) -> model_config_pb2.ModelConfig:
    """
    Return a step's config as Triton picks it.

    configs/<name>.pbtxt if present, else config.pbtxt.
    """
    path = repository / step / 'configs' / f'{config_name}.pbtxt'
    if config_name is None or not path.is_file():
        path = repository / step / 'config.pbtxt'
    return read_config(path)


def parameters_of(config: model_config_pb2.ModelConfig) -> dict[str, str]:
    """Return a config's `parameters` as plain strings (how the Python backend reads them)."""
    return {key: value.string_value for key, value in config.parameters.items()}
