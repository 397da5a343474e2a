"""
A child's parent-death signal (system.processes): set by the child itself, first thing.

Children are started without a preexec_fn, so a starter that dies between the child's start
and its own die_with_parent call would leave it running; the starter's pid in the child's
environment lets the child see that and end as the signal would have ended it.
"""
from __future__ import annotations

import signal
import subprocess
import sys

from triton_perception.system.processes import PARENT_PID_ENV, with_parent_pid

CHILD = ('import os, sys\n'
         'from triton_perception.system import die_with_parent\n'
         'die_with_parent()\n'
         f'print(os.environ.get({PARENT_PID_ENV!r}, "gone"))\n')


def test_a_child_whose_starter_is_alive_runs_and_does_not_pass_the_pid_on() -> None:
    """Started by this process and naming it: the child runs; its own children see no pid."""
    child = subprocess.run([sys.executable, '-c', CHILD], env=with_parent_pid(),
                           capture_output=True, text=True, timeout=60)
    assert child.returncode == 0, child.stderr
    assert child.stdout.strip() == 'gone'


def test_a_child_whose_starter_is_already_gone_ends_by_sigterm() -> None:
    """Naming a starter that is not its parent (it died, the child was adopted): SIGTERM."""
    environment = with_parent_pid()
    environment[PARENT_PID_ENV] = '1'  # init adopted the child: its starter is gone
    child = subprocess.run([sys.executable, '-c', CHILD], env=environment,
                           capture_output=True, text=True, timeout=60)
    assert child.returncode == -signal.SIGTERM, (child.returncode, child.stdout, child.stderr)
    assert child.stdout == ''
