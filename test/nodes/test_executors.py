"""
The hot path apart from housekeeping (nodes.executors), in a real perception_process.

With camera frames arriving at 120 Hz, the detection node still answers a parameter change and
the lane node a lifecycle transition, and results keep coming while the process is asked for
its parameters over and over: on the EventsExecutor and on the classic executor alike. The
executor in use is named in every node's /diagnostics. The figures are printed; the
assertions are on what was answered, with limits a loaded machine keeps.
"""
from __future__ import annotations

from pathlib import Path
import time
from typing import Any

from diagnostic_msgs.msg import DiagnosticArray
import numpy as np
import pytest
from rcl_interfaces.msg import Parameter, ParameterType, ParameterValue
from rcl_interfaces.srv import GetParameters, SetParameters
from sensor_msgs.msg import Image
from vision_msgs.msg import Detection2DArray

from support.fault_plumbing import image, Replay
from support.ros_helpers import Probe, RELIABLE, wait_until
from triton_perception.nodes.executors import EVENTS, EXECUTOR_ENV, SINGLE_THREADED
from triton_perception.system.processes import NodeProcess, ros_arguments

pytestmark = [pytest.mark.ros, pytest.mark.server]

FRAME_RATE_HZ = 120.0
ANSWER_LIMIT_S = 10.0  # what a loaded machine keeps; the measured figure is printed
PARAMETER_CALLS = 40


def call(probe: Probe, service_type: Any, service: str, request: Any) -> tuple[Any, float]:
    """Call `service` once; return its response and how long it took to answer (s)."""
    client = probe.node.create_client(service_type, service)
    try:
        assert client.wait_for_service(timeout_sec=30.0), service
        began = time.monotonic()
        future = client.call_async(request)
        response = wait_until(lambda: future.done() and future.result(), ANSWER_LIMIT_S,
                              f'{service} to answer')
        return response, time.monotonic() - began
    finally:
        probe.node.destroy_client(client)


def executors_named(statuses: list[DiagnosticArray], namespace: str) -> set[str]:
    """Return the hot path executors the nodes of `namespace` report."""
    return {value.value for array in list(statuses) for status in array.status
            if namespace.strip('/') in status.name
            for value in status.values if value.key == 'hot_path_executor'}


@pytest.mark.parametrize('executor', [EVENTS, SINGLE_THREADED])
def test_housekeeping_answers_while_the_hot_path_takes_120_frames_a_second(
        executor: str, probe: Probe, triton_server: Any, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A parameter change and a lifecycle transition are answered; results keep coming."""
    monkeypatch.setenv(EXECUTOR_ENV, executor)
    namespace = f'/split_{executor}'
    process = NodeProcess('perception_process', ['--no-overlay', *ros_arguments(
        {'triton_url': triton_server.grpc_url, 'qos_reliability': 'reliable', 'qos_depth': 10,
         'diagnostics_period_s': 0.5}, namespace=namespace)], tmp_path)
    camera = probe.publisher(Image, f'{namespace}/image')
    results = probe.record(Detection2DArray, f'{namespace}/detections')
    statuses = probe.record(DiagnosticArray, '/diagnostics', RELIABLE)
    rng = np.random.default_rng(7)
    replay = None
    try:
        probe.wait_for_subscribers(camera, timeout_s=60.0)
        replay = Replay(camera, [image(rng.integers(0, 255, (48, 64, 3), np.uint8))
                                 for _ in range(3)], FRAME_RATE_HZ).start()
        wait_until(lambda: results, 60.0, 'a first result')
        threshold = Parameter(name='score_threshold', value=ParameterValue(
            type=ParameterType.PARAMETER_DOUBLE, double_value=0.3))
        response, parameter_s = call(probe, SetParameters,
                                     f'{namespace}/detection_node/set_parameters',
                                     SetParameters.Request(parameters=[threshold]))
        assert response.results[0].successful, response.results[0].reason
        began = time.monotonic()
        assert probe.change_state(f'{namespace}/lane_node', 'deactivate')
        assert probe.change_state(f'{namespace}/lane_node', 'activate')
        lifecycle_s = time.monotonic() - began
        before = len(results)
        for _ in range(PARAMETER_CALLS):  # housekeeping kept busy: frames still answered
            call(probe, GetParameters, f'{namespace}/detection_node/get_parameters',
                 GetParameters.Request(names=['score_threshold']))
        wait_until(lambda: len(results) > before, 30.0, 'results while parameters are asked')
        wait_until(lambda: executors_named(statuses, namespace), 30.0, 'a diagnostics status')
        assert executors_named(statuses, namespace) == {executor}
        print(f'{executor}: at {FRAME_RATE_HZ:g} frames/s, a parameter change answered in '
              f'{parameter_s * 1e3:.0f} ms, deactivate + activate in {lifecycle_s * 1e3:.0f} ms; '
              f'{len(results) - before} results during {PARAMETER_CALLS} parameter calls')
    finally:
        if replay is not None:
            replay.stop()
        assert process.stop() == 0, process.output()
