"""The perception nodes against a running Triton (local or remote), started once it is ready."""
import sys

from launch import LaunchContext, LaunchDescription
from launch.actions import ExecuteProcess, OpaqueFunction, SetEnvironmentVariable
from launch_ros.actions import Node

from triton_perception.pipeline import (argument_values, declare_arguments, pipeline_plan,
                                        start_after_gate, stop_launch_on_exit)

FILE = 'perception_nodes.launch.py'


def node_actions(context: LaunchContext) -> list:
    """
    Return the readiness gate and the node actions the plan gives for the launch arguments.

    The nodes start once the gate (`triton-perception wait-ready`) finds the plan's models ready
    at triton_url (default 127.0.0.1:8001); this file never starts a server.
    """
    values = argument_values(context, FILE)
    plan = pipeline_plan({**values, 'start_triton': 'false',
                          'triton_url': values['triton_url'] or '127.0.0.1:8001'})
    # Readiness gate: the nodes start once Triton serves the ensembles, not after a sleep.
    gate = ExecuteProcess(cmd=[sys.executable, '-m', 'triton_perception.cli', 'wait-ready',
                               '--url', plan.triton_url, '--models', *plan.ready_models],
                          name='wait_for_triton', output='screen')
    # perception_process holds several nodes: a name or namespace here would rename them all.
    nodes = [Node(package='triton_perception', executable=node.executable,
                  name=None if node.hosts_nodes else node.name,
                  namespace=None if node.hosts_nodes else node.namespace or None,
                  arguments=list(node.arguments),
                  parameters=[str(node.params_file), node.parameters],
                  remappings=list(node.remappings), output='screen',
                  on_exit=stop_launch_on_exit(node.fqn))
             for node in plan.nodes]
    return [*[SetEnvironmentVariable(name, value) for name, value in plan.environment.items()],
            gate, start_after_gate(gate, nodes)]


def generate_launch_description() -> LaunchDescription:
    """Return the launch description: the node arguments, then the nodes they give."""
    return LaunchDescription([
        *declare_arguments(FILE),
        OpaqueFunction(function=node_actions),
    ])
