"""
A request thread that outlives its faults.

Every fault in a frame's way is settled where it happens (frame_fates); what escapes that
anyway (a bug in the loop itself) must not leave a node whose frames are never served while
it reports OK. The thread's loop is started again, with a fresh client, and the log says so.
"""
from __future__ import annotations

import time
from typing import Callable

from triton_perception.serving.requests.worker_log import WorkerLog

# The wait before a restart grows with the restarts, up to this (a loop that fails at once
# must not spin a core).
MAX_RESTART_WAIT_S = 1.0


def supervised(loop: Callable[[], None], log: WorkerLog, name: str) -> Callable[[], None]:
    """Return a thread target that runs `loop` until it returns, restarting it after a fault."""
    def run() -> None:
        restarts = 0
        while True:
            try:
                loop()
                return
            except Exception as error:  # noqa: BLE001 (the thread must go on serving frames)
                restarts += 1
                log.warning(f'{name} ended by {error!r}; started again ({restarts} so far)')
                time.sleep(min(MAX_RESTART_WAIT_S, 0.05 * restarts))
    return run
