"""
A child's parent-death signal (system.processes), and a server that stops last (stops_last).

Children are started without a preexec_fn and set the signal themselves, first thing, so a
starter that dies between the child's start and the child's die_with_parent call would leave it
running; the starter's pid in the child's environment lets the child see that and end as the
signal would have ended it.
"""
from __future__ import annotations

import ast
import os
from pathlib import Path
import signal
import subprocess
import sys
import time

from triton_perception.system.processes import live_children, PARENT_PID_ENV, with_parent_pid

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


# The launch's parent in miniature: a node that takes 1.5 s to stop after SIGINT, and a server
# (through stops_last) that writes when its stop signal arrived. The parent ignores SIGINT, as
# a terminal's Ctrl-C reaches the whole process group, and reports the wrapper's exit code.
SCENE = '''
import signal, subprocess, sys
signal.signal(signal.SIGINT, signal.SIG_IGN)
out = sys.argv[1]
node = subprocess.Popen([sys.executable, '-c', """
import signal, sys, time
def stop(*_):
    time.sleep(1.5)
    open(sys.argv[1] + '/node', 'w').write(repr(time.time()))
    sys.exit(0)
signal.signal(signal.SIGINT, stop)
signal.signal(signal.SIGTERM, stop)
open(sys.argv[1] + '/node_ready', 'w').close()
time.sleep(60)
""", out])
server = subprocess.Popen([sys.executable, '-m', 'triton_perception.system.stops_last',
                           '--grace', sys.argv[2], sys.executable, '-c', """
import signal, sys, time
def stop(signum, _):
    open(sys.argv[1] + '/server', 'w').write(repr((signal.Signals(signum).name, time.time())))
    sys.exit(0)
signal.signal(signal.SIGINT, stop)
signal.signal(signal.SIGTERM, stop)
open(sys.argv[1] + '/server_ready', 'w').close()
time.sleep(60)
""", out])
code = server.wait(timeout=60)
node.kill()
node.wait()
open(out + '/exit', 'w').write(repr(code))
'''


def _scene(tmp_path: Path, grace_s: float) -> subprocess.Popen[bytes]:
    """Start the scene in a session of its own and wait until node and server run."""
    scene = subprocess.Popen([sys.executable, '-c', SCENE, str(tmp_path), str(grace_s)],
                             start_new_session=True)
    deadline = time.monotonic() + 60
    while not ((tmp_path / 'node_ready').exists() and (tmp_path / 'server_ready').exists()):
        assert scene.poll() is None and time.monotonic() < deadline, 'the scene did not start'
        time.sleep(0.05)
    return scene


def _read(path: Path) -> object:
    return ast.literal_eval(path.read_text())


def test_ctrl_c_reaches_the_server_after_the_node_has_ended(tmp_path: Path) -> None:
    """SIGINT to the whole process group: the server's SIGINT comes once the node has ended."""
    scene = _scene(tmp_path, grace_s=30.0)
    os.killpg(scene.pid, signal.SIGINT)
    assert scene.wait(timeout=60) == 0
    name, server_stopped = _read(tmp_path / 'server')
    assert name == 'SIGINT'
    assert server_stopped >= _read(tmp_path / 'node')
    assert _read(tmp_path / 'exit') == 0


def test_the_grace_bounds_the_wait_for_a_slow_node(tmp_path: Path) -> None:
    """A node slower to stop than `--grace` does not hold the server's SIGINT back longer."""
    scene = _scene(tmp_path, grace_s=0.2)
    os.killpg(scene.pid, signal.SIGINT)
    assert scene.wait(timeout=60) == 0
    assert _read(tmp_path / 'server')[0] == 'SIGINT'
    assert not (tmp_path / 'node').exists()  # still stopping when the server ended: killed


def test_sigterm_reaches_the_server_at_once(tmp_path: Path) -> None:
    """SIGTERM to the wrapper alone is passed on while the node still runs."""
    scene = _scene(tmp_path, grace_s=30.0)
    wrapper = [child for child in live_children(scene.pid)
               if 'stops_last' in Path(f'/proc/{child}/cmdline').read_text()]
    assert len(wrapper) == 1
    os.kill(wrapper[0], signal.SIGTERM)
    assert scene.wait(timeout=60) == 0
    assert _read(tmp_path / 'server')[0] == 'SIGTERM'
    assert not (tmp_path / 'node').exists()  # the node was killed, never stopped
    assert _read(tmp_path / 'exit') == 0
