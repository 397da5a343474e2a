"""tritonserver alone, bound to loopback, respawned after a crash (server arguments of the plan)."""
from launch import LaunchContext, LaunchDescription
from launch.actions import ExecuteProcess, LogInfo, OpaqueFunction

from triton_perception.pipeline import argument_values, declare_arguments, pipeline_plan
from triton_perception.serving import find_tritonserver, server_command, server_environment
from triton_perception.system import stopping_last

SERVER_ARGUMENTS = ('tritonserver', 'model_repository', 'profile', 'grpc_port', 'http_port',
                    'metrics_port', 'respawn_triton', 'respawn_delay')


def server_actions(context: LaunchContext) -> list:
    """Return tritonserver's process action, through stops_last and respawned if asked."""
    values = argument_values(context, SERVER_ARGUMENTS)
    plan = pipeline_plan(values)
    installation = find_tritonserver(plan.server.tritonserver)
    return [
        LogInfo(msg=f'tritonserver: {plan.server.model_repository} '
                    f'(profile {values["profile"]}), gRPC {plan.triton_url}'),
        # Through stops_last: on shutdown tritonserver stops after the nodes that send to it,
        # and it ends when launch does, even by SIGTERM or SIGKILL.
        ExecuteProcess(cmd=stopping_last(server_command(plan.server, installation)),
                       env=server_environment(installation), name='tritonserver',
                       output='screen', respawn=plan.respawn_triton,
                       respawn_delay=plan.respawn_delay_s, sigterm_timeout='5'),
    ]


def generate_launch_description() -> LaunchDescription:
    """Return the launch description: the server arguments, then the server they give."""
    return LaunchDescription([
        *declare_arguments(SERVER_ARGUMENTS),
        OpaqueFunction(function=server_actions),
    ])
