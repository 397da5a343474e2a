"""
Run a pipeline plan without ROS launch: tritonserver, readiness gate, nodes, supervision.

Does what pipeline.launch.py does, for machines with rclpy but no launch system: the server
is respawned after a crash, a node that dies ends the pipeline with its exit code, and
SIGINT/SIGTERM stop every process within a few seconds.
"""
from __future__ import annotations

import signal
import subprocess
import sys
import threading
import time
from typing import Callable

import tritonclient.grpc as grpcclient
from tritonclient.utils import InferenceServerException

from triton_perception.pipeline.arguments import READY_TIMEOUT_S
from triton_perception.pipeline.plan import PipelinePlan
from triton_perception.pipeline.viewer import rviz_command
from triton_perception.serving import ServerError, TritonServer
from triton_perception.system import node_command, with_parent_pid

STOP_TIMEOUT_S = 3.0
STOP_WHILE_LOADING_S = 0.5  # a server stopped before it was ready gets this long after SIGTERM
SUPERVISION_PERIOD_S = 0.2


def wait_for_remote_models(url: str, models: tuple[str, ...], stop: threading.Event,
                           log: Callable[[str], None],
                           timeout_s: float = READY_TIMEOUT_S) -> bool:
    """
    Readiness gate for a Triton this process did not start; False when stopped or given up.

    Gives up, naming each model and what the server's repository index says of it (absent, or
    its state and reason), after `timeout_s`, or at once when a live server's index lacks one
    of them. A stop (SIGINT, SIGTERM) ends the wait within a second.
    """
    client = grpcclient.InferenceServerClient(url)
    deadline = time.monotonic() + timeout_s
    next_log = 0.0
    try:
        while not stop.is_set():
            try:
                if all(client.is_model_ready(model, client_timeout=2.0) for model in models):
                    log(f'Triton at {url} has {", ".join(models)} ready')
                    return True
                states = _model_states(client, models)
                problem = 'not ready: ' + '; '.join(states)
                if any(state.endswith('not in the repository') for state in states):
                    log(f'Triton at {url} cannot serve the models: {"; ".join(states)}')
                    return False
            except InferenceServerException as error:
                problem = f'unreachable ({error.status() or error.message()})'
            if time.monotonic() >= deadline:
                log(f'gave up after {timeout_s:g} s waiting for Triton at {url}: {problem}')
                return False
            if time.monotonic() >= next_log:
                log(f'waiting for Triton at {url}: {problem}')
                next_log = time.monotonic() + 10.0
            stop.wait(1.0)
        return False
    finally:
        client.close()


def _model_states(client: grpcclient.InferenceServerClient,
                  models: tuple[str, ...]) -> list[str]:
    """Return what the server's repository index says of each of `models` that is not ready."""
    index = client.get_model_repository_index(as_json=True, client_timeout=2.0)
    entries = {entry.get('name'): entry for entry in index.get('models', [])}
    states = []
    for model in models:
        entry = entries.get(model)
        if entry is None:
            states.append(f'{model}: not in the repository')
        elif entry.get('state') != 'READY':
            states.append(f"{model}: {entry.get('state', 'UNKNOWN')} {entry.get('reason', '')}"
                          .rstrip())
    return states


class PipelineRunner:
    """Starts a plan's server and nodes as child processes and supervises them until stopped."""

    def __init__(self, plan: PipelinePlan, log: Callable[[str], None] | None = None,
                 python: str = sys.executable, show_server_log: bool = True,
                 domain_id: int | None = None) -> None:
        """
        Run `plan`; `show_server_log` False keeps tritonserver's output for failure reports only.

        `domain_id`: the ROS domain of the nodes (None: the caller's ROS_DOMAIN_ID).
        """
        self.plan = plan
        self._domain_id = domain_id
        self._show_server_log = show_server_log
        self._log = log or (lambda line: print(f'[run] {line}', file=sys.stderr, flush=True))
        self._python = python
        self.server: TritonServer | None = None
        self.nodes: dict[str, subprocess.Popen[bytes]] = {}
        self.server_restarts = 0

    def _environment(self) -> dict[str, str]:
        environment = with_parent_pid()
        for name, value in self.plan.environment.items():
            environment.setdefault(name, value)
        if self._domain_id is not None:
            environment['ROS_DOMAIN_ID'] = str(self._domain_id)
        return environment

    def _start_server(self, stop: threading.Event) -> bool:
        """Start tritonserver and wait until it serves the plan's models; False if stopped."""
        assert self.plan.server is not None
        self.server = TritonServer(self.plan.server, log=self._log,
                                   show_server_log=self._show_server_log)
        self.server.start()
        return self.server.wait_until_ready(stop=stop)

    def _start_nodes(self) -> None:
        environment = self._environment()
        for node in self.plan.nodes:
            command = [*node_command(node.executable, self._python), *node.ros_arguments()]
            self._log(f'starting {node.fqn}')
            # A node process sets its own parent-death signal (run_nodes).
            self.nodes[node.fqn] = subprocess.Popen(command, env=environment,
                                                    stdin=subprocess.DEVNULL)
        if self.plan.rviz_config:
            self.nodes['rviz2'] = subprocess.Popen(
                rviz_command(self.plan.rviz_config, self._python), env=environment,
                stdin=subprocess.DEVNULL)

    def run(self, stop: threading.Event) -> int:
        """Start everything, supervise until `stop` is set or a node dies; returns an exit code."""
        if self.plan.rviz_config:
            rviz_command(self.plan.rviz_config, self._python)  # refused before anything starts
        try:
            if self.plan.server:
                if not self._start_server(stop):
                    assert self.server is not None
                    # It has served nothing: no request of a node to drain.
                    self.server.stop(timeout_s=STOP_WHILE_LOADING_S)
                    return 0
            elif not wait_for_remote_models(self.plan.triton_url, self.plan.ready_models, stop,
                                            self._log, READY_TIMEOUT_S):
                return 0 if stop.is_set() else 1
            if stop.is_set():
                return 0
            self._start_nodes()
            return self._supervise(stop)
        finally:
            self.stop()

    def _supervise(self, stop: threading.Event) -> int:
        while not stop.wait(SUPERVISION_PERIOD_S):
            for name, process in self.nodes.items():
                if process.poll() is not None:
                    self._log(f'{name} exited with code {process.returncode}; stopping the '
                              'pipeline')
                    return process.returncode or 1
            if self.server and (self.server.pid is None or self.server.poll() is not None):
                self._log(f'tritonserver crashed (exit code {self.server.poll()}); the nodes '
                          'report it in /diagnostics and wait for it')
                self.server.stop()  # reap it and its orphaned Python-backend stubs
                if not self.plan.respawn_triton:
                    return 1
                if stop.wait(self.plan.respawn_delay_s):
                    break
                self.server_restarts += 1
                self._log(f'restarting tritonserver (restart {self.server_restarts})')
                try:
                    self._start_server(stop)
                except ServerError as error:
                    self._log(f'restart failed: {error}')
        return 0

    def stop(self) -> None:
        """
        SIGINT to the nodes, then, once they ended, SIGTERM to the server.

        The server outlives the nodes' last requests (system.stops_last says why). The nodes are
        killed when they outlive STOP_TIMEOUT_S, the server (with its Python-backend stubs) when
        it outlives its exit timeout by a second (`kill_after_s`), so the whole pipeline is gone
        within a few seconds even when Triton hangs.
        """
        for process in self.nodes.values():
            if process.poll() is None:
                process.send_signal(signal.SIGINT)
        deadline = time.monotonic() + STOP_TIMEOUT_S
        for name, process in self.nodes.items():
            try:
                process.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                self._log(f'{name} did not stop within {STOP_TIMEOUT_S:g} s; killing it')
                process.kill()
                process.wait()
        if self.server:
            self.server.stop(timeout_s=self.server.config.kill_after_s)
