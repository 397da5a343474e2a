"""
How a node process runs and stops: the one definition every executable uses.

`run_nodes` starts nodes in one process and spins them until SIGINT or SIGTERM, recorded as a
request to stop by system.signals' `StopRequest`; a stop requested by a signal ends with exit
code 0 wherever the signal lands.

Why a signal must never raise here: CPython runs a signal's Python handler in the main thread,
between two bytecodes of whatever Python code runs there. In a node process that is the
executor's thread, and rclpy's take runs Python code in the middle of C++: it converts a
received message by calling the message class (`Image.__init__` and its field setters). A handler
that raises (KeyboardInterrupt, Python's default for SIGINT) raises inside that conversion; the
C++ side gets no message and pybind11 replaces the KeyboardInterrupt with RuntimeError("Unable
to convert call argument '0' to Python object"), an error like any other while the context is
still valid. For SIGTERM the context always stays valid: a handler installed after rclpy.init
replaces rclpy's own. For SIGINT rclpy's handler stays, chains to Python's and then shuts the
contexts down from a thread of its own, racing the main thread's unwinding: whether the context
is already gone when spin's caller looks decides a clean stop, so a busier process loses more
often. So the handlers only record the request, and once one is recorded whatever spin raises is
part of the stop (`ends_cleanly`).
"""
from __future__ import annotations

from contextlib import contextmanager
import os
import sys
import threading
import traceback
from typing import Callable, Iterator

import cv2
import rclpy
from rclpy.executors import Executor, SingleThreadedExecutor
from rclpy.impl.rcutils_logger import RcutilsLogger
from rclpy.logging import get_logger
from rclpy.node import Node

from triton_perception.nodes.base import PerceptionNode
from triton_perception.nodes.executors import HOT_PATH, hot_path_choice, hot_path_executor
from triton_perception.parameters import ParameterError
from triton_perception.serving import grpc_client_problem
from triton_perception.system import (dds_profile_environment, die_with_parent, ignore_stop_signals,
                                      StopRequest)

SPIN_CHECK_S = 0.25  # how often each executor's loop looks for a stop between wake-ups


@contextmanager
def ends_cleanly(stop: StopRequest, log: Callable[[str], object]) -> Iterator[None]:
    """
    Whatever the body raises once a stop was requested is that stop: `log` (debug) gets it.

    A context shut down under the body counts as requested too: only rclpy's handler of a stop
    signal shuts it down, and the Python half of that signal may still be pending. Without a
    request, an exception stays an error.
    """
    try:
        yield
    except Exception as error:  # noqa: BLE001 (re-raised unless a stop was requested)
        if not stop.requested and rclpy.ok():
            raise
        log(f'stopping on {stop.signal_name or "a context shutdown"}; raised after it: '
            + ''.join(traceback.format_exception(type(error), error, error.__traceback__)))


def run_nodes(factories: list[Callable[[], Node]], args: list[str] | None = None) -> int:
    """Start the nodes in one process and spin them; 2 with the reason on bad parameters."""
    # First, so that a signal from here on is a stop request; before rclpy.init (see StopRequest).
    stop = StopRequest.on_signals()
    # A node ends (cleanly, through SIGTERM) when the process that started it dies by any
    # signal: ros2 launch ended by SIGTERM or SIGKILL signals nobody.
    die_with_parent()
    os.environ.update(dds_profile_environment())
    single_threaded_opencv()
    client_problem = grpc_client_problem()
    if client_problem:
        print(f'cannot talk to Triton: {client_problem}', file=sys.stderr)
        return 2
    rclpy.init(args=args)
    log = get_logger('node_process').debug
    nodes: list[Node] = []
    try:
        with ends_cleanly(stop, log):
            try:
                for factory in factories:
                    nodes.append(factory())
            except ParameterError as error:
                print(f'invalid parameters: {error}', file=sys.stderr)
                return 2
            failed = [node.get_fully_qualified_name() for node in nodes
                      if isinstance(node, PerceptionNode) and not node.autostart()]
            if failed and not stop.requested:
                print(f'could not configure and activate {", ".join(failed)} (see the log '
                      'above)', file=sys.stderr)
                return 1
            spin_apart(nodes, stop, get_logger('node_process'))
    finally:
        for node in nodes:
            node.destroy_node()
        hot_node = HOT_PATH.release()
        if hot_node is not None:
            hot_node.destroy_node()
        rclpy.try_shutdown()
        ignore_stop_signals()
    return 0


def spin_apart(nodes: list[Node], stop: StopRequest, logger: RcutilsLogger) -> None:
    """
    Spin the hot path node on this thread and `nodes` on a housekeeping thread until a stop.

    Callbacks only hand frames to worker threads, so one thread per executor suffices (rclpy's
    multi-threaded executor rebuilt its wait set at a cost of 5 ms of CPU per frame). What the
    housekeeping thread raises is raised here, as a single executor's spin would raise it.
    """
    kind, why = hot_path_choice()
    hot_node = HOT_PATH.node()
    logger.info(f'hot path (camera subscriptions): {kind} executor ({why}); services, '
                'parameters, lifecycle, timers and QoS events: a SingleThreadedExecutor of '
                'their own')
    housekeeping = SingleThreadedExecutor()
    for node in nodes:
        housekeeping.add_node(node)
    hot = hot_path_executor()
    hot.add_node(hot_node)
    raised: list[BaseException] = []
    # Ends the housekeeping loop however the hot one ended; not the stop request, which would
    # make an error raised here look like part of a requested stop (ends_cleanly).
    ended = threading.Event()
    thread = threading.Thread(target=_spin_until_stop,
                              args=(housekeeping, stop, ended, raised), name='housekeeping',
                              daemon=True)
    thread.start()
    try:
        _spin_until_stop(hot, stop, ended, raised)
    finally:
        ended.set()
        thread.join(timeout=2.0)
        hot.shutdown(timeout_sec=1.0)
        housekeeping.shutdown(timeout_sec=1.0)
    if raised:
        raise raised[0]


def _spin_until_stop(executor: Executor, stop: StopRequest, ended: threading.Event,
                     raised: list[BaseException]) -> None:
    """Spin until a stop, the context's end, `ended`, or a raise (kept in `raised`)."""
    try:
        while rclpy.ok() and not stop.requested and not ended.is_set() and not raised:
            executor.spin_once(timeout_sec=SPIN_CHECK_S)
    except BaseException as error:  # noqa: B902 (handed to the main thread, which raises it)
        raised.append(error)


def single_threaded_opencv() -> None:
    """
    Run OpenCV's calls on the calling thread, unless OPENCV_FOR_THREADS_NUM says otherwise.

    A node's OpenCV work per frame is a fraction of a millisecond (a colour conversion, the
    lane mask's components, the drivable area's resize). Split over OpenCV's thread pool it ends
    sooner only while a core is idle; beside tritonserver and the other nodes the pool's
    hand-offs cost more CPU than they save.
    """
    if not os.environ.get('OPENCV_FOR_THREADS_NUM'):
        cv2.setNumThreads(1)
