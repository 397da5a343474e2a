"""
How tritonserver is to be started: profile, repository, addresses, ports, models to wait for.

The pipeline plan, the launch files, the commands and the bench all describe a server with
ServerConfig and check it here, before anything is started; ServerError is the one error every
step of finding, starting and readying a server raises, with what to do in its message.
"""
from __future__ import annotations

from dataclasses import dataclass, field
import importlib.util
from pathlib import Path

from triton_perception.errors import TritonPerceptionError
from triton_perception.serving.server.engines import engine_steps
from triton_perception.system import default_model_repository

PROFILES = ('auto', 'tensorrt', 'cpu')
PRECISIONS = ('fp', 'int8')  # float graphs, or the INT8 ones of `models quantize`
JOINED_MODEL = 'perception'  # both models and the camera's health, one request per frame
MAX_BATCH = 4  # cameras per request; a round with more ready cameras sends several requests
# How long tritonserver drains after its first stop signal (--exit-timeout-secs; Triton's own
# default is 30 s). Shorter than what launch and `triton-perception run` wait for it before
# they kill it (ServerConfig.kill_after_s; pipeline.launch_support: SERVER_SIGKILL_TIMEOUT_S).
EXIT_TIMEOUT_S = 3


def batched_name(joined: str, count: int) -> str:
    """Return the name of the ensemble serving `count` cameras through `joined` at once."""
    return f'{joined}_x{count}'


ENSEMBLES = ('yolov5', 'lane_detection', JOINED_MODEL,
             *(batched_name(JOINED_MODEL, count) for count in range(2, MAX_BATCH + 1)))


class ServerError(TritonPerceptionError, RuntimeError):
    """tritonserver could not be found, started or made ready; the message says what to do."""


@dataclass(frozen=True, kw_only=True)
class ServerConfig:
    """
    How to start tritonserver: repository, profile, addresses and ports, models to wait for.

    `profile` is 'tensorrt', 'cpu' or 'auto' (`resolve_profile`); `tritonserver` an explicit
    binary, else one is found (`find_tritonserver`). `ready_timeout_s` bounds the wait for
    `models` to become ready, in s; `exit_timeout_s` the server's own drain after its first stop
    signal (`--exit-timeout-secs`).
    """

    model_repository: Path = field(default_factory=default_model_repository)
    profile: str = 'auto'
    precision: str = 'fp'  # or 'int8': the graphs of `models quantize` (profile_repository)
    tritonserver: str | None = None
    address: str = '127.0.0.1'
    http_port: int = 8000
    grpc_port: int = 8001
    metrics_port: int = 8002
    models: tuple[str, ...] = ENSEMBLES
    ready_timeout_s: float = 600.0
    log_verbose: int = 0
    exit_timeout_s: int = EXIT_TIMEOUT_S

    def __post_init__(self) -> None:
        """Raise ServerError on an unknown profile, bad or shared ports, or no repository."""
        if self.profile not in PROFILES:
            raise ServerError(f"profile '{self.profile}' is not one of {', '.join(PROFILES)}")
        if self.precision not in PRECISIONS:
            raise ServerError(f"precision '{self.precision}' is not one of "
                              f"{', '.join(PRECISIONS)}")
        for name in ('http_port', 'grpc_port', 'metrics_port'):
            port = getattr(self, name)
            if not 0 < port < 65536:
                raise ServerError(f'{name} {port} is not a TCP port (1-65535)')
        if self.exit_timeout_s < 0:
            raise ServerError(f'exit_timeout_s {self.exit_timeout_s} is negative')
        if len({self.http_port, self.grpc_port, self.metrics_port}) != 3:
            raise ServerError('http_port, grpc_port and metrics_port must differ')
        if not Path(self.model_repository).is_dir():
            raise ServerError(f'model repository {self.model_repository} does not exist; pass '
                              'the directory that holds yolov5/ and lane_detection/')

    @property
    def kill_after_s(self) -> int:
        """How long a supervisor waits after the server's first stop signal before SIGKILL."""
        return self.exit_timeout_s + 1

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
