"""
A running node's parameter changes: every value of one set_parameters call, or none of them.

rclpy hands the node's parameter callback the parameters of one call (`ros2 param set`, `ros2
param load`, rqt_reconfigure, a set_parameters_atomically request). Each is validated against
its spec, then the node checks the values against its own state; only when every value passed
do the settings and what the node derives from them change, all together.
"""
from __future__ import annotations

from typing import Callable, Generic, TYPE_CHECKING

from rcl_interfaces.msg import SetParametersResult
from rclpy.parameter import Parameter

from triton_perception.parameters import (ParameterError, ParameterSpec, ParameterValues,
                                          SettingsT)

if TYPE_CHECKING:  # the values a parameter may hold (typed from Jazzy on)
    from rclpy.parameter import AllowableParameterValue

# Raise ParameterError for values the node's state refuses; never change anything.
CheckChanges = Callable[[ParameterValues], None]
# Take the accepted values into what the node derives from them (`current` already holds them).
ApplyChanges = Callable[[ParameterValues], None]


class ParameterChanges(Generic[SettingsT]):
    """Validates one call's parameter values, then applies all of them or none."""

    def __init__(self, specs: tuple[ParameterSpec, ...], settings: SettingsT,
                 check: CheckChanges, apply: ApplyChanges) -> None:
        """
        Validate changes against `specs` and `check`, then replace `current` and `apply`.

        `settings` are the start-up values; each accepted call replaces them whole.
        """
        self._specs = {spec.name: spec for spec in specs}
        self._current = settings
        self._check = check
        self._apply = apply

    def on_set_parameters(self, parameters: list[Parameter[AllowableParameterValue]]
                          ) -> SetParametersResult:
        """
        Return whether the call is taken; a refusal's reason names the first bad value.

        Parameters without a spec (rclpy's own, such as use_sim_time) pass unchecked.
        """
        try:
            updates = self._validated(parameters)
            self._check(updates)
        except ParameterError as error:
            return SetParametersResult(successful=False, reason=str(error))
        self._current = self._current.changed(updates)
        self._apply(updates)
        return SetParametersResult(successful=True)

    @property
    def current(self) -> SettingsT:
        """Return the node's settings after the last accepted call."""
        return self._current

    def _validated(self, parameters: list[Parameter[AllowableParameterValue]]
                   ) -> ParameterValues:
        return {spec.name: spec.validate(parameter.value) for parameter in parameters
                if (spec := self._specs.get(parameter.name)) is not None}
