"""
What `triton-perception server --check` reports: the server found and what each profile needs.

One Finding per thing looked for, found or missing, each one line with what it is or what to
do: the server (how it was found, its release, whether it takes this package's command line),
its backends, an NVIDIA GPU and the Triton container release for its driver, TensorRT and
trtexec, the served graphs and engines in the model repository, the Python packages the CPU
profile runs with, the gRPC client, and last the profile `--profile` serves here. Every probe
takes its inputs as arguments, so tests can hand it another machine.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
import importlib.metadata
import importlib.util
from pathlib import Path
import re
import shutil
import tempfile
from typing import Callable

from triton_perception.serving.server.engines import (DEVICE_MODEL, engine_mismatches, engine_steps,
                                                      EngineBuildError, find_trtexec,
                                                      installed_tensorrt)
from triton_perception.serving.server.grpc_client_check import grpc_client_problem
from triton_perception.serving.server.server_config import ServerConfig, ServerError
from triton_perception.serving.server.server_installation import (find_tritonserver,
                                                                  TritonInstallation)
from triton_perception.serving.server.triton_server import TritonServer

NVIDIA_DRIVER_VERSION = Path('/proc/driver/nvidia/version')
# NVIDIA's Triton container for a driver: (oldest driver branch, release, Triton version), from
# the release notes' "Driver Requirements" (release 24.10: CUDA 12.6.2, R560 or later; 24.03:
# CUDA 12.4, R545 or later). 24.10 is the release of the development environment's server;
# 24.03 the oldest this package supports (server_installation.check_options_accepted).
CONTAINER_RELEASES = ((560, '24.10', '2.51.0'), (545, '24.03', '2.44.0'))
# Backends each profile's configs name (model_repository/README.md, "Two profiles").
PROFILE_BACKENDS = {'cpu': ('python',), 'tensorrt': ('tensorrt', 'onnxruntime')}
PROFILE_NAMES = {'cpu': 'the CPU profile', 'tensorrt': 'the TensorRT profile'}
SERVED_GRAPH_STEPS = ('yolov5_model', 'lane_model')


@dataclass(frozen=True)
class Finding:
    """One thing `server --check` looked for: found or not, and what it is or what to do."""

    found: bool
    what: str
    detail: str

    def line(self) -> str:
        """Return the report's line: 'found    WHAT: DETAIL' or 'missing  WHAT: DETAIL'."""
        return f'{"found" if self.found else "missing":<8} {self.what}: {self.detail}'


def container_release(driver_major: int) -> str:
    """Return which Triton container release runs on an NVIDIA driver of this branch, and why."""
    for oldest, release, version in CONTAINER_RELEASES:
        if driver_major >= oldest:
            return (f'nvcr.io/nvidia/tritonserver:{release}-py3 (Triton {version}; it needs '
                    f'driver R{oldest} or later)')
    return ('no supported container for a driver older than R545: update the driver to R560 or '
            'later for release 24.10 (data center GPUs also run it on R470.57+, R525.85+ or '
            'R535.86+, through CUDA forward compatibility)')


def gpu_finding(driver_version: Path = NVIDIA_DRIVER_VERSION,
                device_model: Path = DEVICE_MODEL) -> Finding:
    """Return what GPU this machine has: a Jetson, an NVIDIA driver's version, or none."""
    try:
        model = device_model.read_text(encoding='utf-8').strip('\x00\n ')
    except OSError:
        model = ''
    if 'jetson' in model.lower():
        return Finding(True, 'NVIDIA GPU', f'{model}: the Triton release for its JetPack goes in '
                       '/opt/tritonserver (docs/orin.md)')
    try:
        text = driver_version.read_text(encoding='utf-8')
    except OSError:
        return Finding(False, 'NVIDIA GPU', f'no NVIDIA driver ({driver_version}): serve the CPU '
                       "profile, or install the driver and NVIDIA's Triton container "
                       '(docs/ros-pc.md)')
    match = re.search(r'\s(\d{3,})\.(\d+)(?:\.\d+)?\s', text)
    if not match:
        return Finding(True, 'NVIDIA GPU', f'a driver whose version {driver_version} does not '
                       'say; see docs/ros-pc.md for the container release per driver')
    version = match.group(0).strip()
    return Finding(True, 'NVIDIA GPU', f'driver {version}; container '
                   f'{container_release(int(match.group(1)))}')


def backend_findings(installation: TritonInstallation) -> list[Finding]:
    """Return which backends the installation has, and which of each profile's it lacks."""
    directory = installation.backend_directory
    present = sorted(path.name for path in directory.iterdir() if path.is_dir())
    findings = [Finding(True, 'backends', f'{", ".join(present) or "none"} (in {directory})')]
    for profile, needed in PROFILE_BACKENDS.items():
        lacking = [name for name in needed if name not in present]
        if lacking:
            where = ("NVIDIA's Triton container or a Triton release has them (docs/ros-pc.md)"
                     if profile == 'tensorrt' else 'a Triton release or the nvidia-pytriton wheel '
                     'has it')
            findings.append(Finding(False, f'backends of {PROFILE_NAMES[profile]}',
                                    f'{", ".join(lacking)}: {where}'))
    return findings


def repository_findings(repository: Path, tensorrt: str | None) -> list[Finding]:
    """Return whether the served graphs and the TensorRT engines are in the repository."""
    graphs = [repository / step / '1' / 'model.onnx' for step in SERVED_GRAPH_STEPS]
    missing_graphs = [str(graph.relative_to(repository)) for graph in graphs if not graph.is_file()]
    findings = [Finding(not missing_graphs, 'served graphs',
                        f'in {repository}' if not missing_graphs else
                        f'{", ".join(missing_graphs)} not in {repository}: run triton-perception '
                        'models install (docs/models.md)')]
    engines = [repository / step / '1' / 'model.plan' for step in engine_steps(repository)]
    if not all(engine.is_file() for engine in engines):
        findings.append(Finding(False, 'TensorRT engines', 'none built: run triton-perception '
                                'engines build where TensorRT and a GPU are (docs/ros-pc.md, '
                                'docs/orin.md)'))
    elif problems := engine_mismatches(repository, tensorrt):
        findings.append(Finding(False, 'TensorRT engines', '; '.join(problems)))
    else:
        findings.append(Finding(True, 'TensorRT engines', f'{len(engines)} in {repository}'))
    return findings


def tensorrt_findings(tensorrt: str | None, trtexec: str | None = None) -> list[Finding]:
    """Return whether TensorRT's library and trtexec (which builds the engines) are here."""
    findings = [Finding(bool(tensorrt), 'TensorRT', f'libnvinfer {tensorrt}' if tensorrt else
                        'no libnvinfer: engines are built where TensorRT is (a Jetson, or '
                        "NVIDIA's TensorRT container of the Triton release; docs/ros-pc.md)")]
    try:
        findings.append(Finding(True, 'trtexec', str(find_trtexec(trtexec))))
    except EngineBuildError:
        findings.append(Finding(False, 'trtexec', 'not on PATH nor in /usr/src/tensorrt/bin: '
                                'needed only to build engines'))
    return findings


def python_findings(find_spec: Callable[[str], object] = importlib.util.find_spec,
                    version_of: Callable[[str], str] = importlib.metadata.version) -> list[Finding]:
    """Return whether the CPU profile's runner can run here: onnxruntime and NumPy 1.x."""
    findings = []
    if find_spec('onnxruntime') is None:
        findings.append(Finding(False, 'onnxruntime', 'the CPU profile runs the served graphs '
                                'with it: rosdep key python3-onnxruntime-numpy1-pip '
                                '(docs/ros-machine.md)'))
    else:
        findings.append(Finding(True, 'onnxruntime', version_of('onnxruntime')))
    numpy = version_of('numpy')
    if numpy.split('.')[0] == '1':
        findings.append(Finding(True, 'numpy', f'{numpy} (the Python backend needs 1.x)'))
    else:
        findings.append(Finding(False, 'numpy 1.x', f"numpy {numpy}: under NumPy 2 Triton's "
                                "Python backend returns empty tensors; keep the distribution's "
                                '(rosdep/constraints.txt)'))
    return findings


def chosen_profile(profile: str, repository: Path) -> str:
    """Return the profile `profile` serves ('auto': tensorrt where every engine is built)."""
    if profile != 'auto':
        return profile
    engines = [repository / step / '1' / 'model.plan' for step in engine_steps(repository)]
    return 'tensorrt' if engines and all(engine.is_file() for engine in engines) else 'cpu'


def profile_finding(profile: str, findings: list[Finding]) -> Finding:
    """Return the last line: the profile served here, and what of its needs is missing."""
    name = PROFILE_NAMES[profile]
    needs = {'cpu': ('tritonserver', f'backends of {name}', 'served graphs', 'onnxruntime',
                     'numpy 1.x', 'tritonclient'),
             'tensorrt': ('tritonserver', f'backends of {name}', 'served graphs',
                          'TensorRT engines', 'tritonclient')}[profile]
    lacking = [finding.what for finding in findings if not finding.found and finding.what in needs]
    if lacking:
        return Finding(False, 'serves', f'not {name}: it lacks {", ".join(lacking)}')
    return Finding(True, 'serves', f'{name}: everything it needs is here')


def check_findings(config: ServerConfig,
                   start: Callable[[ServerConfig], str] | None = None) -> list[Finding]:
    """
    Return every finding for `config`, the last one the profile served here.

    `start` starts the installed server with no models and returns its release version (the
    server's metadata: Triton has no --version); the default does it with TritonServer.
    """
    findings = []
    try:
        installation = find_tritonserver(config.tritonserver)
    except ServerError as error:
        installation = None
        findings.append(Finding(False, 'tritonserver', str(error)))
    if installation is not None:
        try:
            version = (start or _started_version)(config)
            findings.append(Finding(True, 'tritonserver', f'{version} at {installation.binary} '
                                    f'({installation.found_by or "found"}); it runs and takes '
                                    'the command line this package gives it'))
        except ServerError as error:
            how = installation.found_by or 'found'
            findings.append(Finding(False, 'tritonserver', f'{installation.binary} ({how}) does '
                                    f'not serve: {error}'))
        findings += backend_findings(installation)
    gpu = gpu_finding()
    findings.append(gpu)
    if gpu.found and 'Jetson' not in gpu.detail:
        findings.append(docker_finding())
    tensorrt = installed_tensorrt()
    findings += tensorrt_findings(tensorrt)
    repository = Path(config.model_repository)
    findings += repository_findings(repository, tensorrt)
    findings += python_findings()
    client_problem = grpc_client_problem()
    findings.append(Finding(not client_problem, 'tritonclient',
                            client_problem or 'tritonclient.grpc imports'))
    findings.append(profile_finding(chosen_profile(config.profile, repository), findings))
    return findings


def _started_version(config: ServerConfig) -> str:
    """Start the server with an empty repository and no models; return its release version."""
    with tempfile.TemporaryDirectory(prefix='triton_perception-check-') as empty:
        bare = dataclasses.replace(config, model_repository=Path(empty), profile='tensorrt',
                                   models=(), ready_timeout_s=60.0)
        with TritonServer(bare, log=lambda _line: None, show_server_log=False) as server:
            return str(server.metadata().get('version', 'unknown'))


def docker_finding() -> Finding:
    """Return whether docker is here (NVIDIA's container runs with it on a PC with a GPU)."""
    docker = shutil.which('docker')
    return Finding(bool(docker), 'docker', docker or "not on PATH: NVIDIA's Triton container "
                   'runs with docker and the NVIDIA Container Toolkit')
