"""
How a pipeline is started: launch arguments -> processes, parameters and remappings.

Owns: the plan (plan), the launch files' helpers (launch_support) and `triton-perception run`
without ROS launch (runner). Never nodes/: nodes are started as processes.
Imports: `frames/`, `parameters/`, `serving/`, `system/`.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from triton_perception.system.faces import lazy_face

if TYPE_CHECKING:
    from triton_perception.pipeline.launch_support import (argument_values, declare_arguments,
                                                           start_after_gate, stop_launch_on_exit)
    from triton_perception.pipeline.plan import (ARGUMENT_NAMES, ARGUMENTS, BOOLEAN,
                                                 parse_launch_arguments, pipeline_plan,
                                                 PipelinePlan, PlanError)
    from triton_perception.pipeline.runner import PipelineRunner, wait_for_remote_models

__all__ = ['ARGUMENT_NAMES', 'argument_values', 'ARGUMENTS', 'BOOLEAN', 'declare_arguments',
           'parse_launch_arguments', 'pipeline_plan', 'PipelinePlan', 'PipelineRunner',
           'PlanError', 'start_after_gate', 'stop_launch_on_exit', 'wait_for_remote_models']
__getattr__ = lazy_face(__name__, {
    'launch_support': ('argument_values', 'declare_arguments', 'start_after_gate',
                       'stop_launch_on_exit'),
    'plan': ('ARGUMENT_NAMES', 'ARGUMENTS', 'BOOLEAN', 'parse_launch_arguments', 'pipeline_plan',
             'PipelinePlan', 'PlanError'),
    'runner': ('PipelineRunner', 'wait_for_remote_models'),
})
