"""
Start, watch and stop a local tritonserver process.

Used by `triton-perception server`, the pipeline runner, the bench and the tests, so that all
of them start Triton the same way: bound to loopback, no model control over the network, with
the environment its Python backend needs (server_installation), ready only once its models
are, and never left behind as an orphan.
"""
from __future__ import annotations

import collections
import json
import math
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from typing import Callable
import urllib.error
import urllib.request

from triton_perception.serving.server.server_config import (resolve_profile, ServerConfig,
                                                            ServerError)
from triton_perception.serving.server.server_installation import (find_tritonserver, server_command,
                                                                  server_environment)
from triton_perception.system import ending_with_parent, JsonObject, JsonValue, with_parent_pid

# Harmless on a machine without a GPU; hidden so that real problems stand out.
NOISE = ('Failed to initialize NVML', 'DCGM', 'Unable to find GPU', 'CUDA driver version',
         'CudaDriverHelper')


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

        Raises ServerError if a port is taken, no tritonserver is found, or an engine of the
        TensorRT profile is stale (server_command).
        """
        check_ports_free(self.config)
        installation = find_tritonserver(self.config.tritonserver)
        command = server_command(self.config, installation)
        self._log(f'starting tritonserver ({self.profile} profile, models from '
                  f'{self.config.model_repository}, gRPC {self.grpc_url})')
        self._process = subprocess.Popen(
            ending_with_parent(command), env=with_parent_pid(server_environment(installation)),
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            bufsize=1, start_new_session=True)
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

    def wait_until_ready(self, timeout_s: float | None = None,
                         stop: threading.Event | None = None) -> bool:
        """
        Block until every configured model is ready; raise with Triton's reasons if not.

        A model the server does not have at all (its repository index, once the server is
        ready, does not name it) is named at once, not waited for. Returns False, at once,
        when `stop` is set during the wait (SIGINT or SIGTERM to the caller), True when ready.
        """
        deadline = time.monotonic() + (timeout_s or self.config.ready_timeout_s)
        next_progress = time.monotonic() + 10.0
        while time.monotonic() < deadline:
            if stop is not None and stop.is_set():
                return False
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
                return True
            if missing := self._missing_models():
                raise ServerError(
                    f'tritonserver has no model {", ".join(missing)} in its repository '
                    f'{self.config.model_repository} (it serves: '
                    f'{", ".join(self._index_names()) or "nothing"}); install the models '
                    '(`triton-perception models install`) or give model_repository:=')
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

    def metadata(self) -> JsonObject:
        """
        Return what the server says of itself (GET /v2): name, release version, extensions.

        Triton has no --version option; a running server reports its version here, on every
        release.
        """
        try:
            with urllib.request.urlopen(f'{self.http_url}/v2', timeout=5.0) as response:
                metadata: JsonValue = json.loads(response.read())
        except (urllib.error.URLError, OSError, ValueError) as error:
            raise ServerError(f'tritonserver at {self.http_url} gave no metadata: '
                              f'{error}') from error
        if not isinstance(metadata, dict):
            raise ServerError(f'tritonserver at {self.http_url} gave metadata that is not a '
                              f'JSON object: {str(metadata)[:200]}')
        return metadata

    def repository_index(self) -> list[JsonObject]:
        """Every model Triton knows with its state and, for failures, the reason."""
        request = urllib.request.Request(f'{self.http_url}/v2/repository/index', data=b'{}',
                                         method='POST')
        try:
            with urllib.request.urlopen(request, timeout=2.0) as response:
                index: JsonValue = json.loads(response.read())
        except (urllib.error.URLError, OSError, ValueError):
            return []
        # A list of objects, one per model (Triton's model repository extension).
        entries = index if isinstance(index, list) else []
        return [entry for entry in entries if isinstance(entry, dict)]

    def _index_names(self) -> list[str]:
        return sorted(str(entry['name']) for entry in self.repository_index())

    def _missing_models(self) -> list[str]:
        """Return the configured models a server that is up does not have in its repository."""
        if not self._http_ok('/v2/health/ready'):
            return []  # still starting: its index may not be complete yet
        names = set(self._index_names())
        return [model for model in self.config.models if model not in names]

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
