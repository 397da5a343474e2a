"""tritonserver alone, bound to loopback, respawned after a crash (server arguments of the plan)."""
from launch import LaunchContext, LaunchDescription
from launch.actions import LogInfo, OpaqueFunction

from triton_perception.pipeline import (argument_values, declare_arguments, pipeline_plan,
                                        server_process)

FILE = 'triton_server.launch.py'


def server_actions(context: LaunchContext) -> list:
    """Return tritonserver's process action, through stops_last and respawned if asked."""
    values = argument_values(context, FILE)
    plan = pipeline_plan(values)
    return [
        LogInfo(msg=f'tritonserver: {plan.server.model_repository} '
                    f'(profile {values["profile"]}), gRPC {plan.triton_url}'),
        # Through stops_last: it stops after the nodes, and no later than launch ends.
        server_process(plan),
    ]


def generate_launch_description() -> LaunchDescription:
    """Return the launch description: the server arguments, then the server they give."""
    return LaunchDescription([
        *declare_arguments(FILE),
        OpaqueFunction(function=server_actions),
    ])
