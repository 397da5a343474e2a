"""
Which tritonserver runs, and with what command line and environment.

An installation is found (an explicit path, PATH, /opt/tritonserver or the nvidia-pytriton
wheel) and turned into the command and environment a ServerConfig asks for. TritonServer and
triton_server.launch.py both start the server from these, so that it runs the same way whether
this package or ROS launch starts it.
"""
from __future__ import annotations

from dataclasses import dataclass
import hashlib
import os
from pathlib import Path
import re
import shutil
import subprocess
import sys

from triton_perception.serving.server.engines import engine_mismatches, stale_engines
from triton_perception.serving.server.profile_repository import profile_repository
from triton_perception.serving.server.server_config import (resolve_profile, ServerConfig,
                                                            ServerError)
from triton_perception.system import missing_library_cause

SYSTEM_TRITON_DIR = Path('/opt/tritonserver')


@dataclass(frozen=True)
class TritonInstallation:
    """A tritonserver binary, its backends directory, and libraries it needs on LD_LIBRARY_PATH."""

    binary: Path
    backend_directory: Path
    library_path: tuple[Path, ...] = ()
    found_by: str = ''  # how find_tritonserver found it, in words (server --check prints it)


def find_tritonserver(explicit: str | None = None) -> TritonInstallation:
    """Explicit path > `tritonserver` on PATH > /opt/tritonserver > the nvidia-pytriton wheel."""
    if explicit:
        binary = Path(explicit).expanduser()
        if not (binary.is_file() and os.access(binary, os.X_OK)):
            raise ServerError(f"tritonserver '{explicit}' is not an executable file")
        return _installation_around(binary, 'the path given')
    on_path = shutil.which('tritonserver')
    if on_path:
        return _installation_around(Path(on_path).resolve(), 'on PATH')
    system_binary = SYSTEM_TRITON_DIR / 'bin' / 'tritonserver'
    if system_binary.is_file():
        return _installation_around(system_binary, f'in {SYSTEM_TRITON_DIR}')
    wheel = _pytriton_installation()
    if wheel:
        return wheel
    raise ServerError(
        'no tritonserver found: pass its path (--tritonserver / tritonserver:=PATH), put it on '
        "PATH, install the JetPack Triton release in /opt/tritonserver (Jetson), run NVIDIA's "
        'Triton container (a PC with an NVIDIA GPU), or pip install nvidia-pytriton (x86_64, '
        'the CPU profile; docs/ros-pc.md)')


def _installation_around(binary: Path, found_by: str = '') -> TritonInstallation:
    """Return the installation around `binary`: a release tree keeps its backends beside bin/."""
    backends = binary.parent.parent / 'backends'
    if not backends.is_dir():
        raise ServerError(f'{binary} has no backends directory at {backends}; '
                          'pass a tritonserver from a complete Triton release')
    return TritonInstallation(binary=binary, backend_directory=backends,
                              library_path=(binary.parent.parent / 'lib',), found_by=found_by)


def _pytriton_installation() -> TritonInstallation | None:
    """Use the server inside the nvidia-pytriton wheel, giving it a Python backend directory."""
    try:
        import pytriton  # noqa: PLC0415 (optional dependency)
    except ImportError:
        return None
    root = Path(pytriton.__file__).resolve().parent / 'tritonserver'
    libs = root.parent.parent / 'nvidia_pytriton.libs'
    version = f'{sys.version_info.major}.{sys.version_info.minor}'
    stub = root / 'python_backend_stubs' / version / 'triton_python_backend_stub'
    backend_files = [root / 'backends' / 'python' / 'libtriton_python.so',
                     root / 'backends' / 'python' / 'triton_python_backend_utils.py', stub]
    missing = [str(path) for path in backend_files if not path.is_file()]
    if missing:
        raise ServerError(f'the nvidia-pytriton wheel lacks {", ".join(missing)}; '
                          f'reinstall it for Python {version}')
    # One directory per installed wheel: two environments on one machine (two checkouts, CI
    # beside a developer) must not relink each other's stub under a running server.
    installed = hashlib.sha256(str(root).encode()).hexdigest()[:12]
    backends = _cache_directory() / f'backends-py{version}-{installed}'
    python_backend = backends / 'python'
    python_backend.mkdir(parents=True, exist_ok=True)
    for source in backend_files:
        link = python_backend / source.name
        if not (link.is_symlink() and link.resolve() == source):
            partial = link.with_name(f'{link.name}.{os.getpid()}.partial')
            partial.unlink(missing_ok=True)
            partial.symlink_to(source)
            os.replace(partial, link)  # a server starting now sees the old link or the new
    return TritonInstallation(binary=root / 'bin' / 'tritonserver', backend_directory=backends,
                              library_path=(libs,), found_by='the nvidia-pytriton wheel')


def _cache_directory() -> Path:
    base = os.environ.get('XDG_CACHE_HOME') or Path.home() / '.cache'
    return Path(base) / 'triton_perception'


def server_command(config: ServerConfig, installation: TritonInstallation) -> list[str]:
    """
    Return the tritonserver command line for `config`, with no model control over the network.

    Readiness is strict and the server exits on any model error; a profile other than
    'tensorrt' is served from its view of the repository (profile_repository). Raises
    ServerError, before anything starts, when this tritonserver does not accept an option of
    the command line (an older release), or when an engine does not fit its config (another
    frame range or TensorRT release): either would exit at once, for ever if respawned.
    """
    profile = resolve_profile(config.profile, config.model_repository)
    if profile == 'tensorrt' and (mismatches := engine_mismatches(Path(config.model_repository))):
        raise ServerError('the TensorRT engines do not fit their configs; ' + '; '.join(mismatches))
    if profile == 'tensorrt' and (stale := stale_engines(Path(config.model_repository))):
        raise ServerError('the TensorRT engines are older than what they were built from, or '
                          'from another machine; ' + '; '.join(stale))
    repository = profile_repository(Path(config.model_repository), profile, _cache_directory(),
                                    config.precision)
    command = [
        str(installation.binary),
        f'--model-repository={repository}',
        f'--backend-directory={installation.backend_directory}',
        # No loading or unloading of models over the network.
        '--model-control-mode=none',
        '--strict-readiness=true',
        '--exit-on-error=true',
        f'--http-address={config.address}', f'--http-port={config.http_port}',
        f'--grpc-address={config.address}', f'--grpc-port={config.grpc_port}',
        f'--metrics-address={config.address}', f'--metrics-port={config.metrics_port}',
        f'--log-verbose={config.log_verbose}',
        # Triton acts on its first SIGINT or SIGTERM only, then drains this long (default 30 s)
        # while keeping its ports: bounded below what launch waits before SIGKILL.
        f'--exit-timeout-secs={config.exit_timeout_s}',
    ]
    check_options_accepted(command, installation)
    return command


def accepted_options(installation: TritonInstallation) -> frozenset[str]:
    """
    Return the long options this tritonserver accepts, read from its usage text.

    Triton has no --version; asked for --help, every release up to 2.51 at least prints
    `Usage: tritonserver [options]` and one `  --option <value>` line per option it parses
    (src/command_line_parser.cc, TritonParser::Usage), then exits 1.
    """
    key = (str(installation.binary), installation.binary.stat().st_mtime_ns)
    if key not in _OPTIONS:
        try:
            usage = subprocess.run([str(installation.binary), '--help'], capture_output=True,
                                   text=True, timeout=60, env=server_environment(installation),
                                   stdin=subprocess.DEVNULL, check=False)
        except (OSError, subprocess.TimeoutExpired) as error:
            raise ServerError(f'{installation.binary} --help did not run: {error}') from error
        options = frozenset(re.findall(r'^\s+--([a-z0-9][a-z0-9-]*)', usage.stdout + usage.stderr,
                                       re.MULTILINE))
        if not options:
            cause = missing_library_cause(str(installation.binary), usage.stdout + usage.stderr)
            if cause:
                raise ServerError(cause)
            said = (usage.stdout + usage.stderr).strip().splitlines()[-5:]
            raise ServerError(f'{installation.binary} printed no usage for --help (exit '
                              f'{usage.returncode}): ' + ' | '.join(said))
        _OPTIONS[key] = options
    return _OPTIONS[key]


_OPTIONS: dict[tuple[str, int], frozenset[str]] = {}


def check_options_accepted(command: list[str], installation: TritonInstallation) -> None:
    """Raise ServerError naming every option of `command` that this tritonserver refuses."""
    accepted = accepted_options(installation)
    refused = [argument.split('=', 1)[0] for argument in command[1:]
               if argument.startswith('--') and argument[2:].split('=', 1)[0] not in accepted]
    if refused:
        raise ServerError(
            f'{installation.binary} does not accept {", ".join(refused)}: its Triton release '
            'is older than this package supports (2.44.0, r24.03, for JetPack 6.0, or newer); '
            'install the release docs/orin.md gives for your JetPack')


def server_environment(installation: TritonInstallation) -> dict[str, str]:
    """
    Return the server's environment: the Python backend imports numpy, OpenCV, onnxruntime here.

    The backend stub embeds Python and ignores PYTHONPATH; it locates its environment through
    the `python3` first on PATH, so this interpreter's bin/ goes first (as PyTriton does).
    """
    environment = dict(os.environ)
    library_path = [str(path) for path in installation.library_path if path.is_dir()]
    if environment.get('LD_LIBRARY_PATH'):
        library_path.append(environment['LD_LIBRARY_PATH'])
    environment['LD_LIBRARY_PATH'] = os.pathsep.join(library_path)
    environment['PATH'] = os.pathsep.join([str(Path(sys.executable).parent),
                                           environment.get('PATH', os.defpath)])
    # The ROS wheels' bootstrap re-executes Python to set library paths; never inside the stub.
    environment['_ROS_WHEELS_BOOTSTRAP_COMPLETE'] = '1'
    return environment
