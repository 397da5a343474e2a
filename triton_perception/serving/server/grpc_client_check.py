"""
Whether tritonclient's gRPC client imports here, and when it does not, which package is at fault.

rosdep counts any installed grpcio or protobuf as present (apt's python3-protobuf 3.12 on Jammy
shows in `pip freeze` too), so an install can report success and leave releases that
tritonclient's generated code refuses: service_pb2_grpc.py raises below its
GRPC_GENERATED_VERSION, service_pb2.py needs google.protobuf.internal.builder (protobuf 3.20)
and, in later releases, validates the protobuf runtime against the version it was generated
with. The needs are read from the installed tritonclient's own generated files, so they follow
whichever release is installed.
"""
from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util
from pathlib import Path
import re

from packaging.version import InvalidVersion, Version

BUILDER_PROTOBUF = '3.20.0'  # google.protobuf.internal.builder arrived in protobuf 3.20
MEND = ('python3 -m pip install --user --upgrade -c '
        '"$(ros2 pkg prefix triton_perception)/share/triton_perception/rosdep/constraints.txt" '
        'grpcio protobuf tritonclient')


def generated_requirements(grpc_directory: Path) -> dict[str, str]:
    """
    Return the lowest grpcio and protobuf the generated code in `grpc_directory` imports with.

    `grpc_directory` is tritonclient/grpc of an installed (or unpacked) tritonclient.
    """
    needs: dict[str, str] = {}
    stubs = (grpc_directory / 'service_pb2_grpc.py').read_text(encoding='utf-8')
    generated = re.search(r"^GRPC_GENERATED_VERSION = '([0-9.]+)'", stubs, re.MULTILINE)
    if generated:
        needs['grpcio'] = generated.group(1)
    messages = (grpc_directory / 'service_pb2.py').read_text(encoding='utf-8')
    if 'google.protobuf.internal import builder' in messages:
        needs['protobuf'] = BUILDER_PROTOBUF
    runtime = re.search(r'ValidateProtobufRuntimeVersion\(\s*[\w.]+,\s*(\d+),\s*(\d+),\s*(\d+),',
                        messages)
    if runtime:
        needs['protobuf'] = '.'.join(runtime.groups())
    return needs


def installed_version(distribution: str) -> str | None:
    """Return the installed release of `distribution`, or None."""
    try:
        return importlib.metadata.distribution(distribution).version
    except importlib.metadata.PackageNotFoundError:
        return None


def _older(installed: str, needed: str) -> bool:
    try:
        return Version(installed) < Version(needed)
    except InvalidVersion:
        return False


def grpc_client_problem() -> str | None:
    """
    Import tritonclient.grpc; return None when it imports, else one line: what, why, the mend.

    The line names each package whose installed release is below what the generated code
    needs, or, where none is, the import's own error.
    """
    try:
        importlib.import_module('tritonclient.grpc')
    except Exception as error:  # noqa: B902 (generated code raises RuntimeError, TypeError, ...)
        return _describe(error)
    return None


def _describe(error: BaseException) -> str:
    client = installed_version('tritonclient')
    if client is None:
        return f'tritonclient is not installed; mend: {MEND}'
    spec = importlib.util.find_spec('tritonclient')
    locations = list(spec.submodule_search_locations or []) if spec else []
    at_fault = []
    if locations:
        for distribution, needed in generated_requirements(Path(locations[0]) / 'grpc').items():
            installed = installed_version(distribution)
            if installed is None:
                at_fault.append(f'{distribution} is not installed (needs {needed} or later)')
            elif _older(installed, needed):
                at_fault.append(f'{distribution} {installed} is older than the {needed} its '
                                'generated code needs')
    cause = '; '.join(at_fault) or f'{type(error).__name__}: {str(error).splitlines()[0]}'
    return f'tritonclient {client}: tritonclient.grpc does not import: {cause}; mend: {MEND}'
