"""
The model repository tritonserver is given for a profile: the repository itself, or a view of it.

Each model step keeps its Orin configuration in `config.pbtxt` and its CPU one in
`configs/cpu.pbtxt`. Triton selects a configuration by name only from r24.05 on
(`--model-config-name`, triton-inference-server/server PR #7185); r24.03, the release for
JetPack 6.0, refuses the option. So every release is given the CPU profile the same way: a
view of the repository in the user's cache, one directory per model, whose `config.pbtxt`
links to `configs/cpu.pbtxt` and whose every other entry (the version directories, labels,
records) links to the repository's own. Nothing is copied, so an installed model or engine is
seen at once; the view's name is derived from what it links, so servers started side by side
share one view and never rebuild it under each other.

Precision `int8` (`models quantize`) is a view too, on either profile: the steps that have an
INT8 graph (`1/model_int8.onnx`; on the Orin its engine `1/model_int8.plan`) get a config of the
view's own, the profile's with the INT8 file (`onnx_file`, `default_model_filename`) and two
parameters that the nodes read back for /diagnostics: `precision` and `calibration` (from the
record beside the graph). Every other file is still a link, so the float graphs stay served as
they were.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path
import re
import shutil
import tempfile

from triton_perception.serving.server.engines import TENSORRT_QDQ_GRAPH
from triton_perception.serving.server.server_config import ServerError
from triton_perception.system import sha256_of

CPU_CONFIG = Path('configs') / 'cpu.pbtxt'
# The INT8 file each profile serves, and the record `models quantize` writes beside the graph.
INT8_FILES = {'cpu': 'model_int8.onnx', 'tensorrt': 'model_int8.plan'}
INT8_RECORD = 'model_int8.onnx.json'


def profile_repository(repository: Path, profile: str, cache: Path,
                       precision: str = 'fp') -> Path:
    """
    Return the repository to serve `profile` from: `repository`, or its view under `cache`.

    Raises ServerError if the view cannot be written (the message names the directory), or
    for precision int8 when no model step has an INT8 graph.
    """
    repository = Path(repository).resolve()
    if profile == 'tensorrt' and precision == 'fp':
        return repository
    links = view_links(repository, cpu=profile != 'tensorrt')
    written = int8_configs(repository, profile, links) if precision == 'int8' else {}
    for name in written:
        links.pop(name)
    digest = hashlib.sha256(repr((str(repository), sorted(links.items()),
                                  sorted(written.items()))).encode())
    view = cache / f"{profile}{'-int8' if written else ''}-profile-{digest.hexdigest()[:16]}"
    if view.is_dir():
        return view
    try:
        cache.mkdir(parents=True, exist_ok=True)
        partial = Path(tempfile.mkdtemp(prefix=f'.{view.name}.', dir=cache))
        for name, target in links.items():
            (partial / name).parent.mkdir(parents=True, exist_ok=True)
            (partial / name).symlink_to(target)
        for name, text in written.items():
            (partial / name).parent.mkdir(parents=True, exist_ok=True)
            (partial / name).write_text(text, encoding='utf-8')
        try:
            partial.rename(view)
        except OSError:
            if not view.is_dir():
                raise
            shutil.rmtree(partial)  # another start made the same view meanwhile
    except OSError as error:
        raise ServerError(f'cannot write the CPU profile view of {repository} in {cache} '
                          f'({error.strerror or error}); set XDG_CACHE_HOME to a writable '
                          'directory') from error
    return view


def int8_configs(repository: Path, profile: str, links: dict[str, str]) -> dict[str, str]:
    """
    Return the view's written configs for INT8: its relative path -> the config's text.

    Raises ServerError when no step has an INT8 file for `profile`.
    """
    written = {}
    for name, target in links.items():
        model = Path(name).parent
        if Path(name).name != 'config.pbtxt' or not (
                repository / model / '1' / INT8_FILES[profile]).is_file():
            continue
        text = Path(target).read_text(encoding='utf-8')
        if profile == 'tensorrt':
            text = re.sub(r'(?m)^default_model_filename:.*\n', '', text)
            text += f'default_model_filename: "{INT8_FILES[profile]}"\n'
        else:
            text = re.sub(r'(key: "onnx_file" value \{ string_value: )"[^"]*"',
                          rf'\1"{INT8_FILES[profile]}"', text)
        calibration = _installed_calibration(repository / model / '1')
        text += ('parameters { key: "precision" value { string_value: "int8" } }\n'
                 f'parameters {{ key: "calibration" value {{ string_value: '
                 f'{json.dumps(calibration)} }} }}\n')
        written[name] = text
    if not written:
        raise ServerError(
            f'precision int8: no model step of {repository} has an INT8 '
            f"{'engine' if profile == 'tensorrt' else 'graph'} ({INT8_FILES[profile]}): run "
            "'triton-perception models quantize --calibrate BAG ... --guard DRIVE ...'"
            + (" and then 'triton-perception engines build --int8'" if profile == 'tensorrt'
               else ''))
    return written


def _installed_calibration(version: Path) -> str:
    """
    Return the calibration of a step's INT8 graphs, checked against the record that names them.

    Raises ServerError for a half-installed step: no record, or graphs whose SHA-256 is not the
    record's (an install that was interrupted, or files copied from two calibrations).
    """
    try:
        record = json.loads((version / INT8_RECORD).read_text(encoding='utf-8'))
        calibration = str(record['calibration']['summary'])
        recorded = {INT8_FILES['cpu']: str(record['int8_sha256']),
                    TENSORRT_QDQ_GRAPH: str(record['tensorrt_graph_sha256'])}
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise ServerError(f'{version.parent.name}: its INT8 graphs have no readable record '
                          f'({INT8_RECORD}: {error}); run models quantize again, or copy all '
                          'three INT8 files of the step') from None
    for name, sha256 in recorded.items():
        if (version / name).is_file() and sha256_of(version / name) != sha256:
            raise ServerError(f'{version.parent.name}: {name} is not the graph its record '
                              f'{INT8_RECORD} names (a half-installed step); run models '
                              'quantize again, or copy all three INT8 files of the step')
    return calibration


def view_links(repository: Path, cpu: bool = True) -> dict[str, str]:
    """
    Return the view's entries: its relative path -> the absolute path it links to.

    A model directory is one with a `config.pbtxt`; its configuration is `configs/cpu.pbtxt`
    where it has one (the ensembles have none and serve the same graph in both profiles), or
    with `cpu` False its own `config.pbtxt` (the TensorRT profile's INT8 view).
    """
    links = {}
    for model in sorted(path for path in repository.iterdir() if (path / 'config.pbtxt').is_file()):
        cpu_config = model / CPU_CONFIG
        links[f'{model.name}/config.pbtxt'] = str(
            cpu_config if cpu and cpu_config.is_file() else model / 'config.pbtxt')
        for entry in sorted(model.iterdir()):
            if entry.name not in ('config.pbtxt', 'configs'):
                links[f'{model.name}/{entry.name}'] = str(entry)
    return links
