"""
One bench session: what every bench sets up before its first case and undoes after its last.

A scratch directory, a ROS domain of the bench's own with the environment that points ROS and
Fast DDS at it, a tritonserver started on free ports (or one found at a URL), and the bench's
ROS participant. Leaving the `with` block, on return, error or Ctrl-C, closes the participant,
stops the server, removes the scratch directory, gives the domain up and puts `os.environ`
back as it was, so that a bench run in a longer process (the tests, the CLI running several)
leaves no domain or environment behind.
"""
from __future__ import annotations

from dataclasses import dataclass
import os
from pathlib import Path
import shutil
import tempfile
import threading
from types import TracebackType
from typing import Callable

from triton_perception.bench.session.measures import listening_pid
from triton_perception.bench.session.ros_side import ros_environment, RosSide
from triton_perception.bench.session.settings import BenchError, NODES, READY_TIMEOUT_S
from triton_perception.pipeline import wait_for_remote_models
from triton_perception.serving import is_loopback, ServerConfig, TritonServer
from triton_perception.system import free_ports, private_domain, PrivateDomain


@dataclass(frozen=True)
class ServedTriton:
    """The Triton a bench measures: its gRPC URL, its pid when local, and its release."""

    url: str
    pid: int | None
    version: str
    server: TritonServer | None  # the one the session started, None for one found at a URL


class BenchSession:
    """The scratch directory, domain, environment, server and ROS side of one bench run."""

    def __init__(self, prefix: str, log: Callable[[str], None]) -> None:
        """Name the scratch directory `prefix`...; nothing is set up until the `with` block."""
        self.prefix = prefix
        self.log = log
        self.server: TritonServer | None = None
        self.ros: RosSide | None = None
        self._environment: dict[str, str] = {}

    def __enter__(self) -> BenchSession:
        """Make the scratch directory, reserve the domain and point ROS at both."""
        self.scratch = Path(tempfile.mkdtemp(prefix=self.prefix))
        self._environment = dict(os.environ)
        try:
            self.domain: PrivateDomain = private_domain()
        except BaseException:
            shutil.rmtree(self.scratch, ignore_errors=True)
            raise
        os.environ.update(ros_environment(self.scratch / 'ros', self.domain))
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 traceback: TracebackType | None) -> None:
        """Close the ROS side, stop the server, remove the scratch, restore the environment."""
        try:
            if self.ros:
                self.ros.close()
            if self.server:
                self.server.stop()
            shutil.rmtree(self.scratch, ignore_errors=True)
            self.domain.release()
        finally:
            os.environ.clear()
            os.environ.update(self._environment)

    def start_server(self, repository: Path, profile: str,
                     precision: str = ServerConfig.precision) -> ServedTriton:
        """Start tritonserver on free ports, quiet, and wait until it serves; stopped on exit."""
        http_port, grpc_port, metrics_port = free_ports(3)
        self.server = TritonServer(ServerConfig(
            model_repository=repository, profile=profile, precision=precision,
            http_port=http_port, grpc_port=grpc_port, metrics_port=metrics_port),
            log=self.log, show_server_log=False)
        self.server.start()
        self.server.wait_until_ready()
        return ServedTriton(self.server.grpc_url, self.server.pid,
                            triton_version(self.server.grpc_url), self.server)

    def find_server(self, url: str) -> ServedTriton:
        """Use the Triton at `url`, once it serves the models (not stopped on exit)."""
        return ServedTriton(url, external_server(url, self.log), triton_version(url), None)

    def open_ros(self, announce: bool = True) -> RosSide:
        """Start the bench's ROS participant in the session's domain; closed on exit."""
        self.ros = RosSide()
        if announce:
            self.log(f'ROS domain {self.domain.domain_id} (of its own), load average '
                     f'{" ".join(f"{value:.2f}" for value in os.getloadavg())}')
        return self.ros


def triton_version(url: str) -> str:
    """Return the release the Triton at `url` reports."""
    import tritonclient.grpc as grpcclient  # noqa: PLC0415 (not for a stand-in pipeline)

    with grpcclient.InferenceServerClient(url) as client:
        version: str = client.get_server_metadata().version
    return version


def external_server(url: str, log: Callable[[str], None]) -> int | None:
    """
    Wait for a Triton the bench did not start to serve the models; return its pid if local.

    A server on another host gives no pid, and so no server CPU or memory figures.
    """
    if not wait_for_remote_models(url, tuple(kind.model for kind in NODES.values()),
                                  threading.Event(), log, READY_TIMEOUT_S):
        raise BenchError(f'Triton at {url} does not serve the models')
    host, port = url.rsplit(':', 1)
    server_pid = listening_pid(int(port)) if is_loopback(host.strip('[]')) else None
    log(f'Triton at {url}: ' + (f'tritonserver pid {server_pid}' if server_pid else
                                'not a local tritonserver; no server CPU/memory figures'))
    return server_pid
