"""
Run a node executable that signals itself while it converts its Nth received frame.

`python test/support/signal_in_take.py EXECUTABLE SIGNAL N [--ros-args ...]`. Every node takes its
frames serialized (raw=True) and reads them in Python (frames/frame.py). A replaced
reader sends SIGNAL (INT or TERM) to this process on the Nth frame, then reads it as usual,
so the signal's Python handler runs in the middle of a take, the moment a loaded machine only
hits by chance. The same signal is sent once more as the node is
destroyed, as Ctrl-C in a terminal reaches a node twice, and once more from a helper process
shortly after the node returns, which most often lands while the interpreter exits (where
CPython has reset Python-level handlers to the default).
"""
from __future__ import annotations

import importlib
import os
import signal
import subprocess
import sys
from typing import Any

from rclpy.node import Node

from triton_perception.frames import frame as frame_reading


def signal_on_take(signum: int, nth: int) -> None:
    """
    Make the `nth` received frame send `signum` to this process while it is read.

    Every node reads the frames it takes serialized with frame_reading's reader.
    """
    original_read = frame_reading.read_image
    takes = 0

    def taken() -> None:
        nonlocal takes
        takes += 1
        if takes == nth:
            print(f'sending {signal.Signals(signum).name} in take {nth}', file=sys.stderr,
                  flush=True)
            os.kill(os.getpid(), signum)

    def read_image(*args: Any, **kwargs: Any) -> Any:
        taken()
        return original_read(*args, **kwargs)
    frame_reading.read_image = read_image  # type: ignore[assignment]


def signal_on_destroy(signum: int) -> None:
    """Make Node.destroy_node send `signum` to this process before it destroys."""
    original = Node.destroy_node

    def destroy_node(self: Node) -> None:
        print(f'sending {signal.Signals(signum).name} again during the shutdown',
              file=sys.stderr, flush=True)
        os.kill(os.getpid(), signum)
        original(self)
    Node.destroy_node = destroy_node  # type: ignore[method-assign]


def signal_while_exiting(signum: int) -> None:
    """Have another process send `signum` to this one 50 ms from now."""
    # `sleep` runs on after this process has gone; the kill then fails without a word.
    subprocess.Popen(['sh', '-c', f'sleep 0.05; kill -{signum} {os.getpid()} 2>/dev/null'])


def main() -> None:
    """Run the node EXECUTABLE with the three signals set up as the module says."""
    executable, signal_name, nth = sys.argv[1:4]
    signum = signal.Signals[f'SIG{signal_name}']
    signal_on_take(signum, int(nth))
    signal_on_destroy(signum)
    sys.argv = [executable, *sys.argv[4:]]
    try:
        importlib.import_module(f'triton_perception.nodes.{executable}').main()
    finally:
        signal_while_exiting(signum)


if __name__ == '__main__':
    main()
