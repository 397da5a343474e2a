"""tritonserver alone, bound to loopback, respawned after a crash (server arguments of the plan)."""
from launch import LaunchContext, LaunchDescription
from launch.actions import LogInfo, OpaqueFunction

from triton_perception.pipeline import (argument_values, declare_arguments, pipeline_plan,
                                        server_process)

SERVER_ARGUMENTS = ('tritonserver', 'model_repository', 'profile', 'grpc_port', 'http_port',
                    'metrics_port', 'respawn_triton', 'respawn_delay')


def server_actions(context: LaunchContext) -> list:
    """Return tritonserver's process action, through stops_last and respawned if asked."""
    values = argument_values(context, SERVER_ARGUMENTS)
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
        *declare_arguments(SERVER_ARGUMENTS),
        OpaqueFunction(function=server_actions),
    ])
