"""Launch-file glue shared by launch/*.launch.py; imported only where ROS launch is installed."""
from __future__ import annotations

from launch import LaunchContext
from launch.actions import DeclareLaunchArgument
from launch.substitutions import LaunchConfiguration

from triton_perception.plan import ARGUMENTS


def declare_arguments(names: tuple[str, ...]) -> list[DeclareLaunchArgument]:
    """The plan's arguments with their defaults, descriptions and choices (`ros2 launch -s`)."""
    return [DeclareLaunchArgument(argument.name, default_value=argument.default,
                                  description=argument.description,
                                  **({'choices': list(argument.choices)} if argument.choices
                                     else {}))
            for argument in ARGUMENTS if argument.name in names]


def argument_values(context: LaunchContext, names: tuple[str, ...]) -> dict[str, str]:
    return {name: LaunchConfiguration(name).perform(context) for name in names}
