"""
The hot path apart from housekeeping: which executor spins which entities of a node process.

A node process's nodes carry some fifty entities an executor waits on: per node the parameter
and lifecycle services, the /diagnostics and health timers, two QoS-event waitables per
publisher; only the camera subscriptions carry frames. rclpy's classic executors rebuild their
wait set from every entity at each wake-up, so at 30 frames/s most of their cost is the
entities no frame touches (rclpy #1389; an idle `spin_once` costs 0.95 ms with three nodes
against 0.30 ms with the subscription's node alone). So the camera subscriptions live on a
node of their own, the hidden `_frames_<pid>` node (no parameter services, global remappings
not applied again: its topics are the nodes' resolved names), spun by the *hot
path* executor on the main thread; every other node is spun by the *housekeeping* executor
on a thread of its own.

The hot path executor is a SingleThreadedExecutor holding only the hot node. rclpy's
EventsExecutor (Kilted, and Jazzy from rclpy 7.1.4, `rclpy.experimental`; not in Humble, where
ros2/rclpy #1454 is unmerged) is there to choose (`TRITON_PERCEPTION_EXECUTOR=events`), but is
not the default: Kilted's (rclpy 9.1) fails every subscription callback that takes MessageInfo,
so frames lost before the node can only be counted from the middleware's `message_lost` events,
which miss the frames a full reader history overwrites (test/frames/test_frame_losses.py), and
`bench --glue` found it neither reliably cheaper nor dearer in the whole pipeline
(docs/performance.md). Asking for `events` where rclpy has none falls back to the default, and
the log says so.
"""
from __future__ import annotations

from functools import lru_cache
import os

from rclpy.executors import Executor, SingleThreadedExecutor
from rclpy.node import Node
from rclpy.parameter import Parameter

try:  # Kilted, and Jazzy from rclpy 7.1.4
    from rclpy.experimental import EventsExecutor
    EVENTS_EXECUTOR_AVAILABLE = True
except ImportError:  # Humble
    EVENTS_EXECUTOR_AVAILABLE = False

try:
    from rclpy.subscription import Subscription  # MessageInfo callbacks: Iron and newer
    MESSAGE_INFO_AVAILABLE = hasattr(Subscription, 'CallbackType')
except ImportError:
    MESSAGE_INFO_AVAILABLE = False
# How the default executor counts frames lost before the node, by what this rclpy offers.
LOSS_COUNTING = ('sequence numbers' if MESSAGE_INFO_AVAILABLE else
                 "the middleware's message_lost events (this rclpy gives callbacks no "
                 'MessageInfo: Humble)')

EXECUTOR_ENV = 'TRITON_PERCEPTION_EXECUTOR'
EVENTS = 'events'
SINGLE_THREADED = 'single_threaded'
# A leading underscore hides a node from `ros2 node list`; the pid keeps processes apart.
HOT_PATH_NODE = '_frames_{pid}'


@lru_cache(maxsize=1)
def hot_path_choice() -> tuple[str, str]:
    """
    Return the hot path executor's kind (EVENTS or SINGLE_THREADED) and why it was chosen.

    Read once per process: from EXECUTOR_ENV where set, else SINGLE_THREADED (see above).
    """
    asked = os.environ.get(EXECUTOR_ENV, '').strip()
    if asked not in ('', EVENTS, SINGLE_THREADED):
        raise ValueError(f'{EXECUTOR_ENV}={asked!r}: give {EVENTS} or {SINGLE_THREADED}, or '
                         f'leave it unset for {SINGLE_THREADED}')
    if asked != EVENTS:
        return SINGLE_THREADED, (f'{EXECUTOR_ENV}={SINGLE_THREADED}' if asked else
                                 'the default: it counts frames lost before the node by '
                                 f"{LOSS_COUNTING}; {EXECUTOR_ENV}={EVENTS} chooses rclpy's "
                                 'EventsExecutor')
    if EVENTS_EXECUTOR_AVAILABLE:
        return EVENTS, f'{EXECUTOR_ENV}={EVENTS}: rclpy.experimental.EventsExecutor'
    return SINGLE_THREADED, (f'{EXECUTOR_ENV}={EVENTS}, but this rclpy has no EventsExecutor '
                             '(Kilted, or Jazzy from rclpy 7.1.4)')


def hot_path_executor() -> Executor:
    """Return a new executor of the kind hot_path_choice names."""
    if EVENTS_EXECUTOR_AVAILABLE and hot_path_choice()[0] == EVENTS:
        executor: Executor = EventsExecutor()
        return executor
    return SingleThreadedExecutor()


def hot_path_node(namespace: str = '') -> Node:
    """
    Return a new hot path node: only camera subscriptions go on it.

    Without parameter services or (Kilted) the type description service, it carries no entity
    but what is subscribed on it (its log still reaches /rosout, which is no executor entity);
    without the global arguments, the topics it is given (already resolved by the nodes) are
    not remapped a second time.
    """
    return Node(HOT_PATH_NODE.format(pid=os.getpid()), namespace=namespace or None,
                use_global_arguments=False, start_parameter_services=False,
                parameter_overrides=[Parameter('start_type_description_service', value=False)])


class ProcessHotPath:
    """The process's one hot path node, made when the first camera subscription asks for it."""

    def __init__(self) -> None:
        """Hold no node yet."""
        self._node: Node | None = None

    def node(self, namespace: str = '') -> Node:
        """Return the hot path node, made in `namespace` on the first call."""
        if self._node is None:
            self._node = hot_path_node(namespace)
        return self._node

    def release(self) -> Node | None:
        """Return the node made so far (None if none) and forget it, for the next context."""
        node, self._node = self._node, None
        return node


# One per process: the node processes subscribe their cameras here (nodes.node_process).
HOT_PATH = ProcessHotPath()
