"""
A replay's running pipeline: its nodes, our node that feeds and watches them, their ROS domain.

The nodes of the plan and an rclpy node of ours (the player, the recorder, the /diagnostics
watch) run in a ROS domain reserved for the session (system.private_domain), so they hear
nothing of what else runs on the host, a live camera on the replayed topic among it, and
nothing else hears them. `bag evaluate`, the demo and the soak replay through it.
"""
from __future__ import annotations

import contextlib
from dataclasses import dataclass
import threading
from typing import Callable, Iterator

from diagnostic_msgs.msg import DiagnosticArray
import rclpy
from rclpy.context import Context
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node

from triton_perception.evaluation.figures import NODES
from triton_perception.evaluation.metrics import CameraHealthLog
from triton_perception.frames import CAMERA_STATUS_PREFIX, NodeStatus, status_name
from triton_perception.pipeline import PipelinePlan, PipelineRunner
from triton_perception.system import private_domain

NAMESPACE = '/evaluation'
# PipelineRunner.stop takes STOP_TIMEOUT_S (3 s) before it kills what is left, plus reaping
# the server and its log reader; past this the runner thread is left to die with the process.
RUNNER_STOP_TIMEOUT_S = 15.0


class DiagnosticsWatch:
    """The latest /diagnostics values of each evaluated node."""

    def __init__(self) -> None:
        """Start with no status; only the evaluated nodes' and the camera's are kept."""
        self.latest: dict[str, NodeStatus] = {}
        self.camera_health = CameraHealthLog()
        self._lock = threading.Lock()
        self._names = {status_name(f'{NAMESPACE}/{node}'): node for node in NODES}

    def update(self, message: DiagnosticArray) -> None:
        """Keep the statuses of the evaluated nodes and the camera from one /diagnostics message."""
        for status in message.status:
            node = self._names.get(status.name)
            if node is not None:
                with self._lock:
                    self.latest[node] = NodeStatus.from_status(status)
            elif status.name.startswith(CAMERA_STATUS_PREFIX):  # a replay has one camera
                camera = NodeStatus.from_status(status)
                self.camera_health.add(camera.level, camera.message, camera.values)

    def settled(self, frames: int) -> bool:
        """Every node has received or lost all `frames`, and has nothing pending."""
        with self._lock:
            return all(node in self.latest and self.latest[node].seen >= frames
                       and self.latest[node].count('pending') == 0 for node in NODES)

    def publishers_seen(self) -> bool:
        """Every node has reported seeing a publisher on its image topic (the player's)."""
        with self._lock:
            return all(node in self.latest and self.latest[node].image_publishers >= 1
                       for node in NODES)

    def snapshot(self) -> dict[str, NodeStatus]:
        """Return a copy of the latest status of each node heard from."""
        with self._lock:
            return dict(self.latest)


@dataclass
class PipelineSession:
    """
    A running pipeline (runner thread) and a spinning node of ours that feeds and watches it.

    All of them in `domain_id`, a ROS domain of their own (system.private_domain).
    """

    runner: PipelineRunner
    node: Node
    watch: DiagnosticsWatch
    stop: threading.Event
    domain_id: int


@contextlib.contextmanager
def pipeline_session(plan: PipelinePlan, log: Callable[[str], None],
                     node_name: str) -> Iterator[PipelineSession]:
    """
    Start the plan's server and nodes and an rclpy node in a context of its own; stop all.

    The nodes and ours run in a ROS domain reserved for the session, so they hear nothing of
    what else runs on the host (a live camera on the replayed topic) and nothing hears them.
    """
    stop = threading.Event()
    with private_domain() as domain:
        log(f'ROS domain {domain.domain_id} (of its own)')
        runner = PipelineRunner(plan, log=log, show_server_log=False, domain_id=domain.domain_id)
        runner_thread = threading.Thread(target=lambda: runner.run(stop), daemon=True)
        context = Context()
        rclpy.init(context=context, domain_id=domain.domain_id)
        node = rclpy.create_node(node_name, context=context)
        executor = SingleThreadedExecutor(context=context)
        executor.add_node(node)
        watch = DiagnosticsWatch()
        node.create_subscription(DiagnosticArray, '/diagnostics', watch.update, 50)
        try:
            runner_thread.start()
            threading.Thread(target=executor.spin, daemon=True).start()
            yield PipelineSession(runner, node, watch, stop, domain.domain_id)
        finally:
            stop.set()
            runner_thread.join(timeout=RUNNER_STOP_TIMEOUT_S)
            executor.shutdown(timeout_sec=1.0)
            node.destroy_node()
            rclpy.try_shutdown(context=context)
