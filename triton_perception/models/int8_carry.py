"""
INT8 graphs made on a PC, carried to the Orin in one folder and installed there.

`models quantize` needs onnxruntime's calibration, which the Orin's pinned onnxruntime lacks
(docs/models.md): it runs on a PC and writes the guarded graphs into its output folder's int8/,
one folder per model step. On the Orin `models install-int8 FOLDER` checks each step against
the repository there (the record's SHA-256 of the graphs and of the float graph they were made
from) and installs it as `models quantize` does, graphs first and the record last. Plain file
work: no onnxruntime.
"""
from __future__ import annotations

import json
from pathlib import Path
import shutil
from typing import Sequence

from triton_perception.models.quantization import (Candidate, FLOAT_GRAPH, INT8_FILES,
                                                   INT8_GRAPH, TENSORRT_GRAPH)
from triton_perception.models.shipped_models import ModelInstallError
from triton_perception.system import sha256_of

CARRIED = 'int8'  # the folder of a guard's output that goes to the Orin


def write_carried(candidates: Sequence[Candidate], folder: Path) -> Path:
    """
    Write the candidates' files into `folder`/int8/<step>/: the one folder to copy to the Orin.

    `models install-int8` installs it there (`install_carried`).
    """
    carried = folder / CARRIED
    for candidate in candidates:
        (carried / candidate.step).mkdir(parents=True, exist_ok=True)
        for name in INT8_FILES:
            shutil.copyfile(candidate.directory / name, carried / candidate.step / name)
    return carried


def carried_candidates(repository: Path, folder: Path) -> list[Candidate]:
    """
    Return the steps of a carried INT8 folder, each checked against this repository.

    `folder` is a `models quantize --output` folder (its int8/ is read) or that int8/ itself.
    ModelInstallError, in one line, for a folder without steps, a file missing or not the one
    its record names (an interrupted copy), or graphs made from another float graph than the
    one installed here (other weights or another version of the package).
    """
    source = folder / CARRIED if (folder / CARRIED).is_dir() else folder
    steps = sorted(path for path in source.iterdir() if path.is_dir()) if source.is_dir() else []
    if not steps:
        raise ModelInstallError(f'{source} holds no INT8 step (<step>/{INT8_GRAPH} ...): give '
                                "the --output folder of 'models quantize' or its int8/")
    candidates = []
    for step in steps:
        missing = [name for name in INT8_FILES if not (step / name).is_file()]
        if missing:
            raise ModelInstallError(f'{step / missing[0]} is missing: copy the whole folder again')
        record = json.loads((step / (INT8_GRAPH + '.json')).read_text(encoding='utf-8'))
        for key, name in (('int8_sha256', INT8_GRAPH), ('tensorrt_graph_sha256', TENSORRT_GRAPH)):
            if record.get(key) != sha256_of(step / name):
                raise ModelInstallError(f'{step / name} is not the graph its record names (an '
                                        'interrupted copy?): copy the folder again')
        float_graph = repository / step.name / '1' / FLOAT_GRAPH
        if not float_graph.is_file():
            raise ModelInstallError(f"{float_graph} is missing: run 'triton-perception models "
                                    "install' first")
        if record.get('float_graph_sha256') != sha256_of(float_graph):
            raise ModelInstallError(
                f'{step.name}: its INT8 graphs were made from another float graph than '
                f'{float_graph}: install the same weights with the same version of the package '
                'on both machines, or quantize again from this one')
        candidates.append(Candidate(step.name, step))
    return candidates
