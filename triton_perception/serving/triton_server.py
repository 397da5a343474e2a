"""
Find, start, watch and stop a local tritonserver.

Used by `triton-perception server`, the pipeline runner, the launch files and the tests, so
that all of them start Triton the same way: bound to loopback, no model control over the
network, with the environment its Python backend needs, and never left behind as an orphan.
"""
from __future__ import annotations

import collections
from dataclasses import dataclass, field
import hashlib
import importlib.util
import json
import math
import os
from pathlib import Path
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from typing import Callable
import urllib.error
import urllib.request

from triton_perception.serving.engines import engine_steps, stale_engines
from triton_perception.system.paths import default_model_repository
from triton_perception.system.processes import die_with_parent

PROFILES = ('auto', 'tensorrt', 'cpu')
ENSEMBLES = ('yolov5', 'lane_detection')
SYSTEM_TRITON_DIR = Path('/opt/tritonserver')
# Harmless on a machine without a GPU; hidden so that real problems stand out.
NOISE = ('Failed to initialize NVML', 'DCGM', 'Unable to find GPU', 'CUDA driver version',
         'CudaDriverHelper')


class ServerError(RuntimeError):
    """tritonserver could not be found, started or made ready; the message says what to do."""


@dataclass(frozen=True)
class TritonInstallation:
    """A tritonserver binary, its backends directory, and libraries it needs on LD_LIBRARY_PATH."""

    binary: Path
    backend_directory: Path
    library_path: tuple[Path, ...] = ()


@dataclass(frozen=True, kw_only=True)
class ServerConfig:
    """
    How to start tritonserver: repository, profile, addresses and ports, models to wait for.

    `profile` is 'tensorrt', 'cpu' or 'auto' (`resolve_profile`); `tritonserver` an explicit
    binary, else one is found (`find_tritonserver`). `ready_timeout_s` bounds the wait for
    `models` to become ready, in s.
    """

    model_repository: Path = field(default_factory=default_model_repository)
    profile: str = 'auto'
    tritonserver: str | None = None
    address: str = '127.0.0.1'
    http_port: int = 8000
    grpc_port: int = 8001
    metrics_port: int = 8002
    models: tuple[str, ...] = ENSEMBLES
    ready_timeout_s: float = 600.0
    log_verbose: int = 0

    def __post_init__(self) -> None:
        """Raise ServerError on an unknown profile, bad or shared ports, or no repository."""
        if self.profile not in PROFILES:
            raise ServerError(f"profile '{self.profile}' is not one of {', '.join(PROFILES)}")
        for name in ('http_port', 'grpc_port', 'metrics_port'):
            port = getattr(self, name)
            if not 0 < port < 65536:
                raise ServerError(f'{name} {port} is not a TCP port (1-65535)')
        if len({self.http_port, self.grpc_port, self.metrics_port}) != 3:
            raise ServerError('http_port, grpc_port and metrics_port must differ')
        if not Path(self.model_repository).is_dir():
            raise ServerError(f'model repository {self.model_repository} does not exist; pass '
                              'the directory that holds yolov5/ and lane_detection/')

    @property
    def grpc_url(self) -> str:
        """host:port a local client uses for gRPC."""
        return f'{client_host(self.address)}:{self.grpc_port}'

    @property
    def http_url(self) -> str:
        """http://host:port a local client uses for HTTP (health and readiness)."""
        return f'http://{client_host(self.address)}:{self.http_port}'


def client_host(bind_address: str) -> str:
    """Return the address a local client uses to reach a server bound to `bind_address`."""
    return '127.0.0.1' if bind_address in ('0.0.0.0', '') else bind_address


def resolve_profile(profile: str, model_repository: Path) -> str:
    """
    Return the profile to serve: 'auto' is TensorRT where engines exist, else the CPU profile.

    Raises ServerError when the CPU profile is chosen without onnxruntime, which its runner
    needs: on a robot installed with `rosdep install --dependency-types exec` and no engines
    yet, that is the first thing to fix, and the server would otherwise fail to load models.
    """
    if profile == 'auto':
        engines = [Path(model_repository) / step / '1' / 'model.plan'
                   for step in engine_steps(Path(model_repository))]
        profile = 'tensorrt' if all(engine.is_file() for engine in engines) else 'cpu'
    if profile == 'cpu' and importlib.util.find_spec('onnxruntime') is None:
        raise ServerError(
            'the CPU profile runs the served graphs with onnxruntime, which is not installed: '
            "build the TensorRT engines ('triton-perception engines build', docs/orin.md) or "
            'install it (rosdep key python3-onnxruntime-numpy1-pip; on Jammy: pip install '
            '"onnxruntime<1.13", which keeps NumPy 1.21.5)')
    return profile


def find_tritonserver(explicit: str | None = None) -> TritonInstallation:
    """Explicit path > `tritonserver` on PATH > /opt/tritonserver > the nvidia-pytriton wheel."""
    if explicit:
        binary = Path(explicit).expanduser()
        if not (binary.is_file() and os.access(binary, os.X_OK)):
            raise ServerError(f"tritonserver '{explicit}' is not an executable file")
        return _installation_around(binary)
    on_path = shutil.which('tritonserver')
    if on_path:
        return _installation_around(Path(on_path).resolve())
    system_binary = SYSTEM_TRITON_DIR / 'bin' / 'tritonserver'
    if system_binary.is_file():
        return _installation_around(system_binary)
    wheel = _pytriton_installation()
    if wheel:
        return wheel
    raise ServerError(
        'no tritonserver found: pass its path (--tritonserver / tritonserver:=PATH), put it on '
        'PATH, install the JetPack Triton release in /opt/tritonserver (Jetson), or run '
        "'make setup' (installs the nvidia-pytriton wheel's server on x86_64)")


def _installation_around(binary: Path) -> TritonInstallation:
    """Return the installation around `binary`: a release tree keeps its backends beside bin/."""
    backends = binary.parent.parent / 'backends'
    if not backends.is_dir():
        raise ServerError(f'{binary} has no backends directory at {backends}; '
                          'pass a tritonserver from a complete Triton release')
    return TritonInstallation(binary=binary, backend_directory=backends,
                              library_path=(binary.parent.parent / 'lib',))


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
                              library_path=(libs,))


def _cache_directory() -> Path:
    base = os.environ.get('XDG_CACHE_HOME') or Path.home() / '.cache'
    return Path(base) / 'triton_perception'


def server_command(config: ServerConfig, installation: TritonInstallation) -> list[str]:
    """
    Return the tritonserver command line for `config`, with no model control over the network.

    Readiness is strict and the server exits on any model error; a profile other than
    'tensorrt' selects its model configs by name (--model-config-name).
    """
    profile = resolve_profile(config.profile, config.model_repository)
    command = [
        str(installation.binary),
        f'--model-repository={Path(config.model_repository).resolve()}',
        f'--backend-directory={installation.backend_directory}',
        # No loading or unloading of models over the network.
        '--model-control-mode=none',
        '--strict-readiness=true',
        '--exit-on-error=true',
        f'--http-address={config.address}', f'--http-port={config.http_port}',
        f'--grpc-address={config.address}', f'--grpc-port={config.grpc_port}',
        f'--metrics-address={config.address}', f'--metrics-port={config.metrics_port}',
        f'--log-verbose={config.log_verbose}',
    ]
    if profile != 'tensorrt':
        command.append(f'--model-config-name={profile}')
    return command


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


def check_ports_free(config: ServerConfig) -> None:
    """Raise ServerError if a port of `config` cannot be bound on its address (another server)."""
    for name in ('http_port', 'grpc_port', 'metrics_port'):
        port = getattr(config, name)
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
            # Our own readiness checks leave TIME_WAIT sockets: they must not block a restart.
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                probe.bind((config.address, port))
            except OSError as error:
                raise ServerError(
                    f'{config.address}:{port} ({name}) is in use ({error.strerror}): another '
                    f'tritonserver may be running; stop it or choose another {name}') from None


class TritonServer:
    """One tritonserver process: start, readiness gate, log capture, clean stop."""

    def __init__(self, config: ServerConfig, log: Callable[[str], None] | None = None,
                 show_server_log: bool = True) -> None:
        """
        Prepare a server for `config`; nothing starts before `start`.

        `log` receives this class's messages and the server's output lines (stderr by default);
        `show_server_log` False keeps the server's lines out of it.
        """
        self.config = config
        self.profile = resolve_profile(config.profile, config.model_repository)
        self._log = log or (lambda line: print(line, file=sys.stderr, flush=True))
        self._show_server_log = show_server_log
        self._process: subprocess.Popen[str] | None = None
        self._recent_lines: collections.deque[str] = collections.deque(maxlen=200)
        self._reader: threading.Thread | None = None

    @property
    def grpc_url(self) -> str:
        """host:port a local client uses for gRPC."""
        return self.config.grpc_url

    @property
    def http_url(self) -> str:
        """http://host:port a local client uses for HTTP."""
        return self.config.http_url

    @property
    def pid(self) -> int | None:
        """Return the server's process id, or None before `start`."""
        return self._process.pid if self._process else None

    def start(self) -> None:
        """
        Start tritonserver in its own session and return at once (`wait_until_ready` waits).

        Raises ServerError if a port is taken or no tritonserver is found. Stale engines of the
        TensorRT profile are logged as warnings.
        """
        check_ports_free(self.config)
        installation = find_tritonserver(self.config.tritonserver)
        command = server_command(self.config, installation)
        if self.profile == 'tensorrt':
            for warning in stale_engines(Path(self.config.model_repository)):
                self._log(f'warning: {warning}')
        self._log(f'starting tritonserver ({self.profile} profile, models from '
                  f'{self.config.model_repository}, gRPC {self.grpc_url})')
        self._process = subprocess.Popen(
            command, env=server_environment(installation), stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1,
            preexec_fn=die_with_parent, start_new_session=True)
        self._reader = threading.Thread(target=self._read_output, name='tritonserver-log',
                                        daemon=True)
        self._reader.start()

    def _read_output(self) -> None:
        assert self._process and self._process.stdout
        for raw_line in self._process.stdout:
            line = raw_line.rstrip()
            self._recent_lines.append(line)
            if self._show_server_log and line and not any(text in line for text in NOISE):
                self._log(f'[tritonserver] {line}')

    def recent_output(self) -> list[str]:
        """
        Return the server's last lines (up to 200), without the noise.

        What it said before dying.
        """
        return [line for line in self._recent_lines
                if line and not any(text in line for text in NOISE)]

    def poll(self) -> int | None:
        """Return the exit code once the server has stopped, else None."""
        return self._process.poll() if self._process else None

    def wait_until_ready(self, timeout_s: float | None = None) -> None:
        """Block until every configured model is ready; raise with Triton's reasons if not."""
        deadline = time.monotonic() + (timeout_s or self.config.ready_timeout_s)
        next_progress = time.monotonic() + 10.0
        while time.monotonic() < deadline:
            exit_code = self.poll()
            if exit_code is not None:
                if self._reader:
                    self._reader.join(timeout=2.0)
                raise ServerError(f'tritonserver exited with code {exit_code} before it was '
                                  f'ready.\n{self.failure_report()}')
            if self._http_ok('/v2/health/ready') and all(
                    self._http_ok(f'/v2/models/{model}/ready') for model in self.config.models):
                self._warm_up()
                self._log(f'tritonserver ready: {", ".join(self.config.models) or "no models"} '
                          f'at {self.grpc_url} (gRPC), {self.http_url} (HTTP)')
                return
            if time.monotonic() >= next_progress:
                self._log(f'waiting for models to load: {self._loading_summary()}')
                next_progress = time.monotonic() + 10.0
            time.sleep(0.2)
        raise ServerError(f'tritonserver was not ready within '
                          f'{timeout_s or self.config.ready_timeout_s:.0f} s.\n'
                          f'{self.failure_report()}')

    def _warm_up(self) -> None:
        """
        Send one tiny request per ensemble: a 1x1 frame, zeros for its other inputs.

        The first camera frame then does not pay the Python backend's first-call cost (~0.1 s per
        step). The inputs come from the model's metadata (yolov5's thresholds are required).
        """
        for model in self.config.models:
            try:
                with urllib.request.urlopen(f'{self.http_url}/v2/models/{model}',
                                            timeout=10.0) as response:
                    inputs = json.loads(response.read())['inputs']
                tensors = [{'name': tensor['name'], 'datatype': tensor['datatype'],
                            'shape': [max(1, dim) for dim in tensor['shape']],
                            'data': [0] * math.prod(max(1, dim) for dim in tensor['shape'])}
                           for tensor in inputs]
                request = urllib.request.Request(
                    f'{self.http_url}/v2/models/{model}/infer', method='POST',
                    data=json.dumps({'inputs': tensors}).encode())
                urllib.request.urlopen(request, timeout=30.0).close()
            except (urllib.error.URLError, OSError, KeyError, ValueError) as error:
                self._log(f'warm-up request to {model} failed: {error}')

    def _http_ok(self, path: str) -> bool:
        try:
            with urllib.request.urlopen(f'{self.http_url}{path}', timeout=2.0) as response:
                return bool(response.status == 200)
        except (urllib.error.URLError, OSError):
            return False

    def repository_index(self) -> list[dict]:
        """Every model Triton knows with its state and, for failures, the reason."""
        request = urllib.request.Request(f'{self.http_url}/v2/repository/index', data=b'{}',
                                         method='POST')
        try:
            with urllib.request.urlopen(request, timeout=2.0) as response:
                index: list[dict] = json.loads(response.read())
                return index
        except (urllib.error.URLError, OSError, ValueError):
            return []

    def _loading_summary(self) -> str:
        index = self.repository_index()
        if not index:
            return 'server starting'
        return ', '.join(f"{entry['name']} {entry.get('state', '?')}" for entry in index)

    def failure_report(self) -> str:
        """Triton's own reasons: the repository index, else its model table and error lines."""
        failed = [entry for entry in self.repository_index()
                  if entry.get('state') not in ('READY', None)]
        if failed:
            return 'models not ready:\n' + '\n'.join(
                f"  {entry['name']}: {entry.get('state')}: {entry.get('reason', '')}"
                for entry in failed)
        lines = self.recent_output()
        reasons = [line for line in lines if 'UNAVAILABLE' in line or line.startswith('E')]
        return 'tritonserver said:\n' + '\n'.join(
            f'  {line[:400]}' for line in (reasons or lines)[-25:])

    def stop(self, timeout_s: float = 10.0) -> int | None:
        """
        SIGTERM, then SIGKILL after `timeout_s`; returns the exit code.

        The Python-backend stubs share the server's process group and are killed with it: a stub
        blocked on a dead server would otherwise live on.
        """
        if not self._process:
            return None
        if self._process.poll() is None:
            self._process.send_signal(signal.SIGTERM)
            try:
                self._process.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                self._log(f'tritonserver did not stop within {timeout_s:g} s; killing it')
                self._process.kill()
                self._process.wait()
        try:
            os.killpg(self._process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass  # no stub left
        if self._reader:
            self._reader.join(timeout=2.0)
        return self._process.returncode

    def __enter__(self) -> 'TritonServer':
        """Start the server and wait until it is ready; stop it again if that fails."""
        self.start()
        try:
            self.wait_until_ready()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc_info: object) -> None:
        """Stop the server."""
        self.stop()
