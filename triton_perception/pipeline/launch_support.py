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

from triton_perception.pipeline.plan import ARGUMENTS


def declare_arguments(names: tuple[str, ...]) -> list[DeclareLaunchArgument]:
    """Declare the plan's arguments, with defaults, descriptions and choices (`ros2 launch -s`)."""
    return [DeclareLaunchArgument(argument.name, default_value=argument.default,
                                  description=argument.description,
                                  **({'choices': list(argument.choices)} if argument.choices
                                     else {}))
            for argument in ARGUMENTS if argument.name in names]


def argument_values(context: LaunchContext, names: tuple[str, ...]) -> dict[str, str]:
    """Return the values of the named launch arguments in `context`, as strings."""
    return {name: LaunchConfiguration(name).perform(context) for name in names}


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
