"""
The whole pipeline: tritonserver (optional), perception nodes behind a readiness gate, rviz.

ros2 launch triton_perception pipeline.launch.py [name:=value ...]; `ros2 launch -s` lists the
arguments. `triton-perception run` starts the same plan on machines without ROS launch.
"""
from pathlib import Path

from launch import LaunchContext, LaunchDescription
from launch.actions import IncludeLaunchDescription, OpaqueFunction
from launch.launch_description_sources import PythonLaunchDescriptionSource
from launch_ros.actions import Node

from triton_perception.pipeline import (argument_values, declare_arguments, included_arguments,
                                        pipeline_plan)

HERE = Path(__file__).resolve().parent
FILE = 'pipeline.launch.py'


def include(file_name: str, arguments: dict) -> IncludeLaunchDescription:
    """Return an include of the launch file `file_name` beside this one, with its `arguments`."""
    return IncludeLaunchDescription(PythonLaunchDescriptionSource(str(HERE / file_name)),
                                    launch_arguments=list(included_arguments(
                                        arguments, file_name).items()))


def pipeline_actions(context: LaunchContext) -> list:
    """
    Return the server (when the plan starts one), the perception nodes and rviz (if asked).

    The whole plan is validated first, so a bad combination of arguments starts nothing.
    """
    values = argument_values(context, FILE)
    plan = pipeline_plan(values)  # validates the combination before anything starts
    actions = []
    if plan.server:
        actions.append(include('triton_server.launch.py', values))
    actions.append(include('perception_nodes.launch.py', {**values, 'triton_url': plan.triton_url}))
    if plan.rviz_config:
        actions.append(Node(package='rviz2', executable='rviz2', name='rviz2',
                            arguments=['-d', str(plan.rviz_config)], output='screen'))
    return actions


def generate_launch_description() -> LaunchDescription:
    """Return the launch description: every plan argument, then the actions they give."""
    return LaunchDescription([
        *declare_arguments(FILE),
        OpaqueFunction(function=pipeline_actions),
    ])
