"""
Launch-file glue shared by launch/*.launch.py; imported only where ROS launch is installed.

Uses only API that exists from ROS 2 Humble (launch 1.0, launch_ros 0.19) on.
"""
from __future__ import annotations

from typing import Callable

from launch import LaunchContext, LaunchDescriptionEntity
from launch.actions import (DeclareLaunchArgument, ExecuteProcess, LogInfo, RegisterEventHandler,
                            Shutdown)
from launch.event_handlers import OnProcessExit
from launch.events.process import ProcessExited
from launch.substitutions import LaunchConfiguration

from triton_perception.pipeline.arguments import ARGUMENTS, DECLARED, INCLUDED, refuse_undeclared
from triton_perception.pipeline.plan import PipelinePlan
from triton_perception.serving import find_tritonserver, server_command, server_environment
from triton_perception.system import stopping_last

# What launch waits for tritonserver's wrapper (ExecuteProcess sigterm_timeout and
# sigkill_timeout, launch's defaults made explicit): SIGTERM this long after a shutdown began,
# SIGKILL as long again after that.
SERVER_SIGTERM_TIMEOUT_S = 5
SERVER_SIGKILL_TIMEOUT_S = 5


def declare_arguments(file_name: str) -> list[DeclareLaunchArgument]:
    """Declare the arguments of launch file `file_name`: defaults, descriptions, choices."""
    names = DECLARED[file_name]
    return [DeclareLaunchArgument(argument.name, default_value=argument.default,
                                  description=argument.description,
                                  **({'choices': list(argument.choices)} if argument.choices
                                     else {}))
            for argument in ARGUMENTS if argument.name in names]


def argument_values(context: LaunchContext, file_name: str) -> dict[str, str]:
    """
    Return the values of `file_name`'s launch arguments in `context`, as strings.

    Run as the launch file named on the command line, first refuse (PlanError, one line) every
    argument it does not declare: `ros2 launch` takes any name:=value without a word. A file
    pipeline.launch.py includes takes the pipeline's arguments, already checked there.
    """
    if context.launch_configurations.get(INCLUDED) != 'true':
        refuse_undeclared(file_name, context.launch_configurations)
    return {name: LaunchConfiguration(name).perform(context) for name in DECLARED[file_name]}


def included_arguments(values: dict[str, str], file_name: str) -> dict[str, str]:
    """Return the arguments of `values` that included launch file `file_name` declares."""
    return {**{name: value for name, value in values.items() if name in DECLARED[file_name]},
            INCLUDED: 'true'}


def _stop_launch(reason: str) -> list[LaunchDescriptionEntity]:
    # Shutdown's reason is not printed by the launch service, hence the log line.
    return [LogInfo(msg=f'{reason}; stopping the launch'), Shutdown(reason=reason)]


def start_after_gate(gate: ExecuteProcess,
                     entities: list[LaunchDescriptionEntity]) -> RegisterEventHandler:
    """
    Start `entities` when the readiness gate exits 0, and only then.

    A gate that fails (Triton unreachable for good, the client missing, a crash) stops the
    launch with the reason instead of starting the nodes against a Triton that is not ready;
    a gate ended by the launch's own shutdown (Ctrl-C while waiting) starts nothing.
    """
    def on_gate_exit(event: ProcessExited,
                     context: LaunchContext) -> list[LaunchDescriptionEntity] | None:
        if event.returncode == 0:
            return entities
        if context.is_shutdown:
            return None
        return _stop_launch(f'readiness gate {event.process_name} failed with exit code '
                            f'{event.returncode}, so the nodes were not started')
    return RegisterEventHandler(OnProcessExit(target_action=gate, on_exit=on_gate_exit))


def stop_launch_on_exit(name: str) -> Callable[[ProcessExited, LaunchContext],
                                               list[LaunchDescriptionEntity] | None]:
    """
    `on_exit` for a required process.

    As in `triton-perception run`, a node that dies ends the pipeline (its exit during the launch's
    own shutdown does nothing).
    """
    def on_exit(event: ProcessExited,
                context: LaunchContext) -> list[LaunchDescriptionEntity] | None:
        if context.is_shutdown:
            return None
        return _stop_launch(f'{name} exited with code {event.returncode}')
    return on_exit


def server_process(plan: PipelinePlan) -> ExecuteProcess:
    """
    Return tritonserver's process action: through stops_last, respawned if the plan says so.

    On shutdown tritonserver stops after the nodes that send to it, and it ends when launch
    does, even by SIGTERM or SIGKILL. Launch's SIGKILL reaches the wrapper alone, so the wrapper
    kills the server a second after the server's own exit timeout (`kill_after_s`), which comes
    before launch's SIGKILL however launch was stopped (docs/ros-machine.md).
    """
    assert plan.server is not None
    installation = find_tritonserver(plan.server.tritonserver)
    return ExecuteProcess(
        cmd=stopping_last(server_command(plan.server, installation),
                          kill_after_s=plan.server.kill_after_s),
        env=server_environment(installation), name='tritonserver', output='screen',
        respawn=plan.respawn_triton, respawn_delay=plan.respawn_delay_s,
        sigterm_timeout=str(SERVER_SIGTERM_TIMEOUT_S),
        sigkill_timeout=str(SERVER_SIGKILL_TIMEOUT_S))
