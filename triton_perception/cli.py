"""
`triton-perception`: the command line of the package.

One entry point for the server, models, the pipeline, bags and benchmarks.
"""
from __future__ import annotations

import argparse
import sys
from typing import Callable, Sequence

from triton_perception.commands import (add_bag_commands, add_bench_command, add_demo_command,
                                        add_docs_command, add_engines_command, add_models_command,
                                        add_run_command, add_server_command, add_soak_command,
                                        add_wait_ready_command)
from triton_perception.errors import TritonPerceptionError


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

    The package's errors (TritonPerceptionError: server, models, plan, bag, engines, frame
    range, labels, ...) and a missing file are printed as one line and return 2.
    """
    arguments = build_parser().parse_args(argv)
    run: Callable[[argparse.Namespace], int] = arguments.run
    try:
        return run(arguments)
    except (TritonPerceptionError, FileNotFoundError) as error:
        print(f'triton-perception: error: {error}', file=sys.stderr)
        return 2


if __name__ == '__main__':
    sys.exit(main())
