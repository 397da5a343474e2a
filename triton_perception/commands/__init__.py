"""
The subcommands of `triton-perception`: each one's options, help text and handler.

Owns: one module per group of commands (server and engines, models, run and wait-ready,
soak, demo and docs, bench), each adding its commands to the parser that cli.py builds, and
the termination handling the long-running ones share. `bag` keeps its commands in bag/. May
import everything below it; only cli.py imports it.
Imports: `apps/`, `bag/`, `bench/`, `frames/`, `graphs/`, `lanes/`, `models/`, `nodes/`,
`pipeline/`, `scoring/`, `serving/`, `system/`, `tracking/`.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from triton_perception.system.faces import lazy_face

if TYPE_CHECKING:
    from triton_perception.commands.app_commands import (add_demo_command, add_docs_command,
                                                         add_soak_command)
    from triton_perception.commands.bench_commands import add_bench_command
    from triton_perception.commands.model_commands import add_models_command
    from triton_perception.commands.pipeline_commands import add_run_command, add_wait_ready_command
    from triton_perception.commands.server_commands import add_engines_command, add_server_command

__all__ = ['add_bench_command', 'add_demo_command', 'add_docs_command', 'add_engines_command',
           'add_models_command', 'add_run_command', 'add_server_command', 'add_soak_command',
           'add_wait_ready_command']
__getattr__ = lazy_face(__name__, {
    'app_commands': ('add_demo_command', 'add_docs_command', 'add_soak_command'),
    'bench_commands': ('add_bench_command',),
    'model_commands': ('add_models_command',),
    'pipeline_commands': ('add_run_command', 'add_wait_ready_command'),
    'server_commands': ('add_engines_command', 'add_server_command'),
})
