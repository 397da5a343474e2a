"""
Live parameter changes of a running detection_node: one set_parameters call is all or nothing.

Real Fast DDS, real tritonserver, the node as its own process.
"""
from __future__ import annotations

from typing import Any, Iterator

import numpy as np
import pytest
from rcl_interfaces.msg import Parameter, ParameterType, ParameterValue
from rcl_interfaces.srv import GetParameters, SetParametersAtomically
from vision_msgs.msg import Detection2DArray

from support.perception_nodes import image_message, send_and_receive, start_node
from support.ros_helpers import Probe, wait_until
from triton_perception.outputs.result_messages import load_labels
from triton_perception.system.processes import NodeProcess

pytestmark = [pytest.mark.ros, pytest.mark.server]
COCO = load_labels()  # class id -> name, as the node's LabelInfo gives them
NODE = '/params/detection_node'


@pytest.fixture(scope='module')
def filtered_node(triton_server: Any, tmp_path_factory: Any) -> Iterator[NodeProcess]:
    """Start a detection_node in /params filtering for buses; it must exit with 0."""
    node = start_node('detection_node', '/params', triton_server, tmp_path_factory,
                      class_filter='bus', qos_reliability='reliable')
    yield node
    assert node.stop() == 0, node.output()


def text_parameter(name: str, value: str) -> Parameter:
    """Return a string parameter `name` = `value`, as `ros2 param set` sends it."""
    return Parameter(name=name, value=ParameterValue(type=ParameterType.PARAMETER_STRING,
                                                     string_value=value))


def number_parameter(name: str, value: float) -> Parameter:
    """Return a double parameter `name` = `value`."""
    return Parameter(name=name, value=ParameterValue(type=ParameterType.PARAMETER_DOUBLE,
                                                     double_value=value))


def numbers_parameter(name: str, values: list[float]) -> Parameter:
    """Return a double-array parameter `name` = `values`."""
    return Parameter(name=name, value=ParameterValue(
        type=ParameterType.PARAMETER_DOUBLE_ARRAY, double_array_value=values))


def call(probe: Probe, service_type: Any, service: str, request: Any) -> Any:
    """Call `service` once (as `ros2 param` does) and return its response."""
    client = probe.node.create_client(service_type, service)
    try:
        assert client.wait_for_service(timeout_sec=20.0), service
        future = client.call_async(request)
        return wait_until(lambda: future.done() and future.result(), 20.0, f'{service} to answer')
    finally:
        probe.node.destroy_client(client)


def set_atomically(probe: Probe, *parameters: Parameter) -> Any:
    """Set `parameters` in one call; return its SetParametersResult."""
    response = call(probe, SetParametersAtomically, f'{NODE}/set_parameters_atomically',
                    SetParametersAtomically.Request(parameters=list(parameters)))
    return response.result


def detected_classes(probe: Probe, frame: np.ndarray, stamp_s: int) -> list[str]:
    """Return the sorted class names the node detects in `frame`."""
    received = probe.received.get('/params/detections') or probe.record(
        Detection2DArray, '/params/detections')
    message = image_message(frame, 'rgb8', 'camera_optical', stamp_s)
    result = send_and_receive(probe, '/params/image', message, '/params/detections',
                              Detection2DArray, received)
    return sorted(COCO[int(d.results[0].hypothesis.class_id)] for d in result.detections)


def test_a_refused_call_changes_no_parameter(probe: Probe, filtered_node: NodeProcess,
                                             bus_rgb: np.ndarray) -> None:
    """
    A call refused for one parameter changes none of the others it carries.

    The filter stays as it was, in the parameters and in the detections; alone, the same filter
    is taken.
    """
    assert detected_classes(probe, bus_rgb, 1) == ['bus']
    # class_filter first: it is valid, and the call fails only at camera_pose after it. A
    # camera below the ground passes rclpy's descriptor checks (the pose is dynamically typed)
    # and is refused by the node's own check, so the node's callback sees both.
    result = set_atomically(probe, text_parameter('class_filter', 'person'),
                            numbers_parameter('camera_pose', [0.0, 0.0, -1.0, 0.0, 0.0, 0.0]))
    assert not result.successful
    assert 'camera_pose' in result.reason, result.reason
    values = call(probe, GetParameters, f'{NODE}/get_parameters',
                  GetParameters.Request(names=['class_filter', 'camera_pose'])).values
    assert values[0].string_value == 'bus'
    assert list(values[1].double_array_value) == [0.0] * 6
    assert detected_classes(probe, bus_rgb, 2) == ['bus']
    # Positive control: the same filter on its own is taken and changes the detections.
    assert set_atomically(probe, text_parameter('class_filter', 'person')).successful
    assert detected_classes(probe, bus_rgb, 3) == ['person', 'person', 'person']


def test_an_unknown_class_is_refused_with_the_rest_of_its_call(
        probe: Probe, filtered_node: NodeProcess, bus_rgb: np.ndarray) -> None:
    """
    An unknown class in class_filter refuses the whole call, naming the class.

    The score threshold sent with it stays unchanged.
    """
    result = set_atomically(probe, number_parameter('score_threshold', 0.5),
                            text_parameter('class_filter', 'bus,unicorn'))
    assert not result.successful
    assert 'unicorn' in result.reason, result.reason
    values = call(probe, GetParameters, f'{NODE}/get_parameters',
                  GetParameters.Request(names=['score_threshold'])).values
    assert values[0].double_value == 0.25
