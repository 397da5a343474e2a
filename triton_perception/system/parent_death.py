"""
Run a command that ends when the process that started it dies, by any signal.

    python -m triton_perception.system.parent_death COMMAND [ARGUMENT ...]

Sets Linux's parent-death signal (SIGTERM) in this process and then replaces itself with the
command (exec keeps the setting). ROS launch starts tritonserver through it: launch forwards
Ctrl-C, but when launch itself is ended by SIGTERM or SIGKILL it signals nobody, and a
tritonserver left behind keeps its ports and its Python-backend stubs alive.
"""
from __future__ import annotations

import os
import sys

from triton_perception.system.processes import die_with_parent


def main(argv: list[str]) -> int:
    """
    Run `argv` (command and arguments) as this process, ended with SIGTERM when its parent dies.

    Returns 2 without a command, 127 when the command cannot be executed; on success exec replaces
    this process and nothing returns.
    """
    if not argv:
        print('usage: python -m triton_perception.system.parent_death COMMAND [ARGUMENT ...]',
              file=sys.stderr)
        return 2
    die_with_parent()
    try:
        os.execvp(argv[0], argv)
    except OSError as error:
        print(f'parent_death: cannot run {argv[0]}: {error}', file=sys.stderr)
        return 127


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
