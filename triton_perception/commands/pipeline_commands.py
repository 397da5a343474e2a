"""
`triton-perception run` and `wait-ready`: the pipeline without ROS launch, and its gate.

`run` takes the launch arguments of pipeline.launch.py; `wait-ready` is the readiness gate
the launch files start before the nodes.
"""
from __future__ import annotations

import argparse
import sys

from triton_perception.pipeline import (ARGUMENTS, parse_launch_arguments, pipeline_plan,
                                        READY_TIMEOUT_S)
from triton_perception.system import die_with_parent, StopRequest


def command_run(arguments: argparse.Namespace) -> int:
    """Run `run`: the pipeline of the name:=value launch arguments until SIGINT or SIGTERM."""
    # Deferred: the runner imports tritonclient.
    from triton_perception.pipeline import PipelineRunner  # noqa: PLC0415

    plan = pipeline_plan(parse_launch_arguments(arguments.launch_arguments))
    stop = StopRequest.on_signals(
        lambda name: print(f'[run] {name}: stopping', file=sys.stderr, flush=True))
    return PipelineRunner(plan).run(stop.event)


def command_wait_ready(arguments: argparse.Namespace) -> int:
    """Run `wait-ready`: 0 once Triton at `--url` has the models ready, 1 on timeout or signal."""
    from triton_perception.pipeline import wait_for_remote_models  # noqa: PLC0415

    die_with_parent()  # the readiness gate ends with the launch that started it
    stop = StopRequest.on_signals()
    ready = wait_for_remote_models(arguments.url, tuple(arguments.models), stop.event,
                                   lambda line: print(line, file=sys.stderr, flush=True),
                                   arguments.timeout)
    return 0 if ready else 1


def add_run_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `run`, whose help lists the launch arguments it takes."""
    run = commands.add_parser(
        'run', help='run the pipeline (server + nodes) without ROS launch',
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description='Takes the arguments of pipeline.launch.py as name:=value:\n' + '\n'.join(
            f'  {argument.name}:={argument.default or "<empty>"}  {argument.description}'
            for argument in ARGUMENTS))
    run.add_argument('launch_arguments', nargs='*', metavar='name:=value')
    run.set_defaults(run=command_run)


def add_wait_ready_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `wait-ready`: 0 once a Triton serves the models."""
    wait_ready = commands.add_parser('wait-ready', help='wait until a Triton serves the models '
                                     "(the launch files' readiness gate)")
    wait_ready.add_argument('--url', default='127.0.0.1:8001', help='gRPC HOST:PORT')
    wait_ready.add_argument('--models', nargs='+', default=['yolov5', 'lane_detection'])
    wait_ready.add_argument('--timeout', type=float, default=READY_TIMEOUT_S,
                            help='give up after this many seconds, naming the models not ready '
                            f'and why (default: {READY_TIMEOUT_S:g})')
    wait_ready.set_defaults(run=command_wait_ready)
