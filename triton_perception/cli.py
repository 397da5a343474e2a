"""
`triton-perception`: the command line of the package.

One entry point for the server, models, the pipeline, bags and benchmarks.
"""
from __future__ import annotations

import argparse
import sys
from typing import Callable, Sequence

from triton_perception.bag.bag_cli import add_bag_commands
from triton_perception.bag.bag_format import BagError
from triton_perception.commands.app_commands import (add_demo_command, add_docs_command,
                                                     add_soak_command)
from triton_perception.commands.bench_commands import add_bench_command
from triton_perception.commands.model_commands import add_models_command
from triton_perception.commands.pipeline_commands import add_run_command, add_wait_ready_command
from triton_perception.commands.server_commands import add_engines_command, add_server_command
from triton_perception.frames.frame_range import FrameRangeError
from triton_perception.models.shipped_models import ModelInstallError
from triton_perception.pipeline.plan import PlanError
from triton_perception.scoring.labels import LabelError
from triton_perception.serving.engines import EngineBuildError
from triton_perception.serving.server_config import ServerError


def build_parser() -> argparse.ArgumentParser:
    """Return the argument parser of every command; each sets `run` to its command function."""
    parser = argparse.ArgumentParser(prog='triton-perception', description=__doc__)
    commands = parser.add_subparsers(dest='command', required=True)
    add_server_command(commands)
    add_models_command(commands)
    add_run_command(commands)
    add_wait_ready_command(commands)
    add_bag_commands(commands)
    add_engines_command(commands)
    add_soak_command(commands)
    add_demo_command(commands)
    add_bench_command(commands)
    add_docs_command(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """
    Run the command of `argv` (default: the process's arguments) and return its exit code.

    Known errors (server, models, plan, bag, engines, frame range, labels, a missing file) are
    printed as one line and return 2.
    """
    arguments = build_parser().parse_args(argv)
    run: Callable[[argparse.Namespace], int] = arguments.run
    try:
        return run(arguments)
    except (ServerError, ModelInstallError, PlanError, BagError, EngineBuildError, FrameRangeError,
            LabelError, FileNotFoundError) as error:
        print(f'triton-perception: error: {error}', file=sys.stderr)
        return 2


if __name__ == '__main__':
    sys.exit(main())
