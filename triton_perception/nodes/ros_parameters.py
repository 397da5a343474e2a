"""
Declare the parameter table (`parameters.py`) on an rclpy node, with descriptors.

The descriptors carry each parameter's type, range or choices and whether it can change at run time,
so that `ros2 param describe` and rqt_reconfigure show the limits and refuse what a node would.
"""
from __future__ import annotations

from rcl_interfaces.msg import FloatingPointRange, IntegerRange, ParameterDescriptor, ParameterType
from rclpy.exceptions import InvalidParameterTypeException, InvalidParameterValueException
from rclpy.node import Node

from triton_perception.parameters import ParameterError, ParameterSpec, SettingsT

PARAMETER_TYPES = {bool: ParameterType.PARAMETER_BOOL, int: ParameterType.PARAMETER_INTEGER,
                   float: ParameterType.PARAMETER_DOUBLE, str: ParameterType.PARAMETER_STRING}


def descriptor(spec: ParameterSpec) -> ParameterDescriptor:
    """
    Return the ROS parameter descriptor of `spec`: description, type, range, read-only.

    Parameters that cannot change live are read-only. A list parameter is dynamically typed,
    since YAML and the command line mix integers and floats in one list.
    """
    live = 'can be changed while the node runs' if spec.dynamic else \
        'read-only: set it at start-up (params file or launch argument)'
    result = ParameterDescriptor(
        name=spec.name, description=f'{spec.description} ({live})',
        additional_constraints=spec.accepted, read_only=not spec.dynamic)
    if isinstance(spec.default, list):
        # Lists of numbers: YAML and `-p name:=[0, 0, 1.2, ...]` mix integers and floats, which
        # rclpy types as different arrays; the spec's own check judges them.
        result.dynamic_typing = True
        return result
    result.type = PARAMETER_TYPES[type(spec.default)]
    if spec.low is not None and spec.high is not None:
        if isinstance(spec.default, float):
            result.floating_point_range = [FloatingPointRange(
                from_value=float(spec.low), to_value=float(spec.high), step=0.0)]
        else:
            result.integer_range = [IntegerRange(
                from_value=int(spec.low), to_value=int(spec.high), step=1)]
    return result


def declare_parameters(node: Node, specs: tuple[ParameterSpec, ...],
                       settings_type: type[SettingsT]) -> SettingsT:
    """
    Declare every parameter and return the validated start-up values as `settings_type`.

    One ParameterError names every bad value and what is accepted (rclpy's own type and range errors
    included).
    """
    problems: list[str] = []
    values: dict[str, object] = {}
    for spec in specs:
        try:
            values[spec.name] = node.declare_parameter(spec.name, spec.default,
                                                       descriptor(spec)).value
        except (InvalidParameterTypeException, InvalidParameterValueException) as error:
            problems.append(f"parameter '{spec.name}': {error}; expected {spec.accepted} "
                            f'({type(spec.default).__name__}, e.g. {spec.default!r})')
    if problems:
        raise ParameterError('; '.join(problems))
    return settings_type.from_values(specs, values)
