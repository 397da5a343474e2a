"""
The readiness gate gives up with a reason, and stops when told.

`run` against a repository without the plan's models names them and exits at once; `wait-ready`
against a server that lacks them names what the server's repository index says and exits 1; a
SIGINT while `run` waits for a server still loading its models ends it, server included, within
two seconds. Real tritonserver throughout.
"""
from __future__ import annotations

from pathlib import Path
import signal
import subprocess
import sys
import time
from typing import Iterator

import pytest

from support.fault_repository import write_repository
from triton_perception.serving.server.server_config import ServerConfig
from triton_perception.serving.server.triton_server import TritonServer
from triton_perception.system.processes import alive, free_ports, process_tree

pytestmark = [pytest.mark.server]

CLI = [sys.executable, '-m', 'triton_perception.cli']
LIMIT_S = 120.0  # generous on a loaded machine; the figures measured are printed


def ports() -> list[str]:
    """Return the three ports of a tritonserver of the test's own."""
    grpc, http, metrics = free_ports(3)
    return [f'grpc_port:={grpc}', f'http_port:={http}', f'metrics_port:={metrics}']


def test_run_names_the_models_a_repository_lacks(tmp_path: Path) -> None:
    """An empty model repository: `run` exits 2 naming both models, not waiting for them."""
    started = time.monotonic()
    result = subprocess.run(
        [*CLI, 'run', f'model_repository:={tmp_path}', 'profile:=cpu', *ports()],
        capture_output=True, text=True, timeout=LIMIT_S, stdin=subprocess.DEVNULL)
    print(f'refused after {time.monotonic() - started:.1f} s')
    assert result.returncode == 2, result.stderr[-2000:]
    last = result.stderr.strip().splitlines()[-1]
    assert 'has no model yolov5, lane_detection in its repository' in last, last


@pytest.fixture
def empty_server(tmp_path: Path) -> Iterator[TritonServer]:
    """Start a tritonserver on an empty repository (it serves no model)."""
    (tmp_path / 'repository').mkdir()
    grpc, http, metrics = free_ports(3)
    server = TritonServer(ServerConfig(model_repository=str(tmp_path / 'repository'),
                                       profile='cpu', grpc_port=grpc, http_port=http,
                                       metrics_port=metrics, models=()))
    server.start()
    server.wait_until_ready()
    yield server
    server.stop()


def test_wait_ready_names_the_models_the_server_lacks(empty_server: TritonServer) -> None:
    """The launch files' gate gives up at once, naming each model, and exits 1."""
    result = subprocess.run(
        [*CLI, 'wait-ready', '--url', empty_server.grpc_url, '--models', 'yolov5',
         'lane_detection'], capture_output=True, text=True, timeout=LIMIT_S,
        stdin=subprocess.DEVNULL)
    assert result.returncode == 1, result.stderr
    assert ('cannot serve the models: yolov5: not in the repository; lane_detection: not in '
            'the repository') in result.stderr, result.stderr


def is_tritonserver(pid: int) -> bool:
    """Return whether process `pid` runs tritonserver."""
    try:
        return 'tritonserver' in Path(f'/proc/{pid}/cmdline').read_text(errors='replace')
    except OSError:
        return False


@pytest.mark.parametrize('stop_signal', [signal.SIGINT, signal.SIGTERM])
def test_a_stop_while_the_server_loads_ends_run_and_the_server(tmp_path: Path,
                                                               stop_signal: int) -> None:
    """A model that takes a minute to load; the signal comes while `run` waits for it."""
    repository = write_repository(tmp_path / 'repository', {'yolov5': 'slow_load'},
                                  delay_s=60.0)
    process = subprocess.Popen(
        [*CLI, 'run', f'model_repository:={repository}', 'profile:=cpu', 'enable_lanes:=false',
         *ports()], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + LIMIT_S
        tree: list[int] = []
        while time.monotonic() < deadline and not any(map(is_tritonserver, tree)):
            time.sleep(0.2)
            tree = process_tree(process.pid)
        time.sleep(3.0)  # the server is loading the slow model now
        tree = process_tree(process.pid)
        assert process.poll() is None
        process.send_signal(stop_signal)
        stopped = time.monotonic()
        process.wait(timeout=LIMIT_S)
        took_s = time.monotonic() - stopped
        output = process.stdout.read() if process.stdout else ''
        print(f'{signal.Signals(stop_signal).name} ended run in {took_s:.2f} s')
        assert process.returncode == 0, output[-2000:]
        assert took_s < 2.0 * 3, output[-2000:]  # two seconds, with room for a loaded machine
        assert not [pid for pid in tree if alive(pid)], 'tritonserver outlived run'
    finally:
        if process.poll() is None:
            process.kill()
