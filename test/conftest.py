"""Session-wide test environment: isolated ROS graph, temporary ROS home, one real tritonserver."""
from __future__ import annotations

import os
from pathlib import Path
import tempfile
from typing import Any, Callable, Iterator, TYPE_CHECKING

import cv2
import numpy as np
import pytest

from support.checkout import REPO, SHARED, shared_path
from triton_perception.system.paths import dds_profile_environment
from triton_perception.system.processes import free_ports

if TYPE_CHECKING:
    from sensor_msgs.msg import Image

    from support.fault_plumbing import Arrivals, StartNode
    from support.ros_helpers import Probe
    from triton_perception.serving.server.triton_server import TritonServer

# Before anything imports rclpy: keep ROS traffic on this host, in a domain of our own (other
# test runs may share the machine), and logs out of the home directory.
_ros_home = tempfile.mkdtemp(prefix='triton_perception-ros-')
# Domain 1-100: the ROS documentation advises 0-101 on Linux (higher IDs can collide with
# ephemeral ports); 0, everyone's default, is left alone.
os.environ.setdefault('ROS_DOMAIN_ID', str(1 + os.getpid() % 100))
os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
# Humble's generated message classes check every field assignment (under __debug__, so always);
# from Iron on only with this variable (ros2/rosidl_python#194). The suite runs with the checks,
# in its own process and in every node it starts, so that what Humble refuses fails here too.
os.environ['ROS_PYTHON_CHECK_FIELDS'] = '1'
os.environ['ROS_HOME'] = _ros_home
os.environ['ROS_LOG_DIR'] = os.path.join(_ros_home, 'log')
os.environ.update(dds_profile_environment())


@pytest.fixture(scope='session')
def shared() -> Path:
    """Return the shared models and data; without them every test that needs them fails."""
    if not SHARED.is_dir():
        pytest.fail(f'{SHARED} is missing: tests need the shared models and data beside the '
                    'repository (see docs/development.md)')
    return SHARED


@pytest.fixture(scope='session')
def triton_server(shared: Path) -> Iterator[TritonServer]:
    """One real tritonserver (CPU profile) for the whole session: starting one costs seconds."""
    from triton_perception.models.shipped_models import install_models
    from triton_perception.serving.server.server_config import ServerConfig
    from triton_perception.serving.server.triton_server import TritonServer

    repository = REPO / 'model_repository'
    install_models(repository, shared / 'models', log=lambda _line: None)
    http_port, grpc_port, metrics_port = free_ports(3)
    server = TritonServer(
        ServerConfig(model_repository=repository, profile='cpu', http_port=http_port,
                     grpc_port=grpc_port, metrics_port=metrics_port, ready_timeout_s=300),
        log=lambda _line: None, show_server_log=False)
    with server:
        yield server


@pytest.fixture(autouse=True)
def session_server_alive(request: pytest.FixtureRequest) -> Iterator[None]:
    """
    Fail a test at once if the session's tritonserver has gone.

    The failure carries the server's last words; otherwise every later test would wait out its
    timeouts and blame itself.
    """
    if 'triton_server' not in request.fixturenames:
        yield
        return
    server = request.getfixturevalue('triton_server')

    def check(when: str) -> None:
        exit_code = server.poll()
        if exit_code is not None:
            pytest.fail(f'the session tritonserver exited with code {exit_code} {when}; its last '
                        'lines:\n' + '\n'.join(server.recent_output()[-30:]), pytrace=False)
    check('before this test')
    yield
    check('during this test')


@pytest.fixture(scope='module')
def ros_node(request: pytest.FixtureRequest) -> Iterator[Any]:
    """Give one test module an rclpy node in a context of its own, named after the module."""
    import rclpy
    from rclpy.context import Context

    context = Context()
    rclpy.init(context=context)
    node = rclpy.create_node(f'{request.module.__name__}_{os.getpid()}', context=context)
    try:
        yield node
    finally:
        node.destroy_node()
        context.try_shutdown()


@pytest.fixture(scope='module')
def probe(request: pytest.FixtureRequest) -> Iterator[Any]:
    """Give one test module a probe node spinning in the background (ros_helpers.Probe)."""
    from support.ros_helpers import Probe

    probe = Probe(f'{request.module.__name__}_probe')
    yield probe
    probe.close()


@pytest.fixture(scope='session')
def road_rgb(shared: Path) -> np.ndarray:
    """Frame 100 of the highway clip as RGB: a road with cars and both ego lines."""
    capture = cv2.VideoCapture(str(shared_path('data', 'videos', 'solidWhiteRight.mp4')))
    capture.set(cv2.CAP_PROP_POS_FRAMES, 100)
    ok, bgr = capture.read()
    capture.release()
    assert ok
    return cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB)


# The fault tests' fixtures (real nodes and servers; their helpers are support.fault_plumbing),
# imported where they run: rclpy's messages load after the environment above is set.


@pytest.fixture
def measured(request: pytest.FixtureRequest) -> Callable[[str, Any], None]:
    """
    Attach a measured figure to the test's report (user_properties).

    --junitxml shows them with -o junit_family=legacy.
    """
    return lambda name, value: request.node.user_properties.append((name, value))


@pytest.fixture(scope='module')
def diagnostics(probe: Probe) -> Arrivals:
    """Record the module's /diagnostics arrays with their arrival times."""
    from diagnostic_msgs.msg import DiagnosticArray

    from support.fault_plumbing import record_arrivals

    return record_arrivals(probe, DiagnosticArray, '/diagnostics')


@pytest.fixture
def start_node(tmp_path: Path) -> Iterator[StartNode]:
    """
    Start node processes for one test, with reliable input and fast diagnostics.

    Every frame sent is accounted for by the node; whatever a failed test left running is stopped
    after it.
    """
    from triton_perception.system.processes import NodeProcess, ros_arguments

    started: list[NodeProcess] = []

    def start(executable: str, namespace: str, url: str, **parameters: Any) -> NodeProcess:
        started.append(NodeProcess(executable, ros_arguments(
            {'triton_url': url, 'qos_reliability': 'reliable', 'qos_depth': 10,
             'diagnostics_period_s': 0.2, **parameters}, namespace=namespace), tmp_path))
        return started[-1]
    yield start
    for node in started:
        node.stop()


@pytest.fixture(scope='module')
def detector_repository(shared: Path, tmp_path_factory: Any) -> Path:
    """
    Return the real yolov5 ensemble alone (links into the package's repository).

    Starts in ~2 s.
    """
    from support.fault_plumbing import DETECTOR_STEPS
    from triton_perception.models.shipped_models import install_models

    install_models(REPO / 'model_repository', shared / 'models', log=lambda _line: None)
    root = tmp_path_factory.mktemp('detector_repository')
    for step in DETECTOR_STEPS:
        (root / step).symlink_to(REPO / 'model_repository' / step)
    return root


@pytest.fixture(scope='module')
def fault_server(tmp_path_factory: Any) -> Iterator[TritonServer]:
    """Serve the misbehaving models of test/support/fault_model.py from a real tritonserver."""
    from support.fault_plumbing import FAULT_MODELS, quiet_server, SLOW_MODEL_DELAY_S
    from support.fault_repository import write_repository

    root = write_repository(tmp_path_factory.mktemp('fault_repository'), FAULT_MODELS)
    write_repository(root, {'slow': 'ok'}, delay_s=SLOW_MODEL_DELAY_S, instances=2)
    # 'slow' is left out of the readiness list only so that its warm-up does not cost 2 s.
    with quiet_server(root, tuple(free_ports(3)), tuple(FAULT_MODELS)) as server:
        yield server


@pytest.fixture(scope='module')
def clip(shared: Path) -> list[Image]:
    """Return the first 30 frames of the highway clip as bgr8 Image messages."""
    from support.fault_plumbing import image
    from support.highway_clip import clip_frames

    return [image(bgr) for bgr in clip_frames(shared, 30)]
