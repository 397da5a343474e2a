"""
What a node parameter is: its spec (default, accepted values, live or not) and its validation.

The tables of every node's parameters (tables.py) are made of these specs.
"""
from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import Callable, cast, Mapping, SupportsFloat

from triton_perception.errors import TritonPerceptionError

ParameterValue = bool | int | float | str | list[float]
# Validated values by name, as one set_parameters call or the start-up values bring them. Each
# has its spec's type (`validate` checks it); nodes read them typed, through node_settings.
ParameterValues = dict[str, ParameterValue]


class ParameterError(TritonPerceptionError, ValueError):
    """A parameter value is outside its accepted values; the message names both."""


@dataclass(frozen=True)
class ParameterSpec:
    """
    One node parameter: its default, what it accepts, and whether it may change while running.

    The default's type is the parameter's type (bool, int, float, str or a list of floats).
    `accepted` is the wording of the accepted values that error messages and docs/parameters.md
    show; `check` is the test behind it, called with a value of the right type. `dynamic`
    parameters may be set while the node runs; the others are read at configure.
    """

    name: str
    default: ParameterValue
    description: str
    accepted: str
    check: Callable[[ParameterValue], bool]
    dynamic: bool = False
    # For parameter descriptors (ros2 param describe, rqt_reconfigure): the closed range of a
    # number, or the accepted words of a choice.
    low: float | None = None
    high: float | None = None
    choices: tuple[str, ...] = ()

    def validate(self, value: object) -> ParameterValue:
        """
        Return `value` as this parameter's type, or raise if it is not accepted.

        An integer is accepted for a float parameter and returned as a float (ROS tools send `1` for
        `1.0`); a bool is never taken for a number. A list parameter accepts any sequence of numbers
        (rclpy hands over lists, tuples or array.array) and returns a list of floats.

        `value`: the value as rclpy or a launch file gives it.

        Returns the value with the default's type, unchanged otherwise.

        Raises ParameterError if the type differs from the default's or `check` rejects the value;
        the message names the parameter, the value and the accepted values.
        """
        if isinstance(self.default, list):
            return self._validate_numbers(value)
        if isinstance(self.default, float) and isinstance(value, int) and not isinstance(
                value, bool):
            value = float(value)
        # The isinstance test only tells the type checker what the type test already implies.
        if (not isinstance(value, (bool, int, float, str)) or type(value) is not type(self.default)
                or not self.check(value)):
            raise ParameterError(f"parameter '{self.name}': {value!r} is not accepted; "
                                 f'expected {self.accepted}')
        return value

    def _validate_numbers(self, value: object) -> list[float]:
        """
        Return a list of numbers.

        rclpy gives lists, tuples or array.array, integers or floats. Anything without a length
        fails, as len() would; float() raises TypeError for an item it cannot convert.
        """
        numbers: list[float] = []
        complete = False
        if isinstance(value, Collection):
            try:
                numbers = [float(cast(SupportsFloat, item)) for item in value
                           if not isinstance(item, (bool, str))]
                complete = len(numbers) == len(value)
            except TypeError:
                complete = False
        if not (complete and self.check(numbers)):
            raise ParameterError(f"parameter '{self.name}': {value!r} is not accepted; "
                                 f'expected {self.accepted}')
        return numbers


def choice(name: str, default: str, description: str, *, options: tuple[str, ...],
           dynamic: bool = False) -> ParameterSpec:
    """Return the spec of a text parameter that must be one of `options`."""
    return ParameterSpec(name, default, description, 'one of ' + ', '.join(options),
                         lambda value: value in options, dynamic, choices=options)


def number(name: str, default: int | float, description: str, *, low: float, high: float,
           dynamic: bool = False) -> ParameterSpec:
    """
    Return the spec of a number parameter in the closed range [low, high].

    An int default makes an integer parameter (a float value is then rejected), a float default a
    floating-point one that also accepts integers.
    """
    kind = 'an integer' if isinstance(default, int) else 'a number'
    return ParameterSpec(name, default, description, f'{kind} in [{low:g}, {high:g}]',
                         lambda value: isinstance(value, (int, float)) and low <= value <= high,
                         dynamic, low=low, high=high)


def text(name: str, default: str, description: str, *, accepted: str,
         check: Callable[[str], bool] = lambda _value: True) -> ParameterSpec:
    """Return the spec of a free-text parameter; `check` narrows it and `accepted` describes it."""
    return ParameterSpec(name, default, description, accepted,
                         lambda value: isinstance(value, str) and check(value))


def flag(name: str, default: bool, description: str, *, dynamic: bool = False) -> ParameterSpec:
    """Return the spec of a true/false parameter."""
    return ParameterSpec(name, default, description, 'true or false', lambda _value: True,
                         dynamic)


def specs_by_name(specs: tuple[ParameterSpec, ...]) -> dict[str, ParameterSpec]:
    """Return the specs keyed by parameter name."""
    return {spec.name: spec for spec in specs}


def validate_all(specs: tuple[ParameterSpec, ...],
                 values: Mapping[str, object]) -> ParameterValues:
    """Validate every value; one error message lists every bad parameter."""
    problems, valid = [], {}
    for spec in specs:
        try:
            valid[spec.name] = spec.validate(values.get(spec.name, spec.default))
        except ParameterError as error:
            problems.append(str(error))
    if problems:
        raise ParameterError('; '.join(problems))
    return valid
