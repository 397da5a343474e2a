"""
A running node's parameter changes: every value of one set_parameters call, or none of them.

rclpy hands the node's parameter callback the parameters of one call (`ros2 param set`, `ros2
param load`, rqt_reconfigure, a set_parameters_atomically request). Each is validated against
its spec, then the node checks the values against its own state; only when every value passed
do the settings and what the node derives from them change, all together.
"""
from __future__ import annotations

from typing import Callable

from rcl_interfaces.msg import SetParametersResult
from rclpy.parameter import Parameter

from triton_perception.parameters import ParameterError, ParameterSpec, Settings

# Raise ParameterError for values the node's state refuses; never change anything.
CheckChanges = Callable[[Settings], None]
# Take the accepted values into what the node derives from them (the settings already hold them).
ApplyChanges = Callable[[Settings], None]


class ParameterChanges:
    """Validates one call's parameter values, then applies all of them or none."""

    def __init__(self, specs: tuple[ParameterSpec, ...], settings: Settings,
                 check: CheckChanges, apply: ApplyChanges) -> None:
        """
        Validate changes against `specs` and `check`; update `settings` in place and `apply`.

        `settings` is updated in place: the node's collaborators hold the same dictionary.
        """
        self._specs = {spec.name: spec for spec in specs}
        self._settings = settings
        self._check = check
        self._apply = apply

    def on_set_parameters(self, parameters: list[Parameter]) -> SetParametersResult:
        """
        Return whether the call is taken; a refusal's reason names the first bad value.

        Parameters without a spec (rclpy's own, such as use_sim_time) pass unchecked.
        """
        try:
            updates = self._validated(parameters)
            self._check(updates)
        except ParameterError as error:
            return SetParametersResult(successful=False, reason=str(error))
        self._settings.update(updates)
        self._apply(updates)
        return SetParametersResult(successful=True)

    def _validated(self, parameters: list[Parameter]) -> Settings:
        return {spec.name: spec.validate(parameter.value) for parameter in parameters
                if (spec := self._specs.get(parameter.name)) is not None}
