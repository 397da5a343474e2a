"""
Frames lost before a node's callback are counted (`lost_before_node`).

For every publisher, `sent == received + lost_before_node` (real node process, real Fast DDS).
"""
from __future__ import annotations

import contextlib
import signal
from typing import Any, Iterator

from diagnostic_msgs.msg import DiagnosticArray
import numpy as np
import pytest
from sensor_msgs.msg import Image
from std_msgs.msg import Header

from support.published_messages import image_message
from support.ros_helpers import Probe, wait_until
from triton_perception.frames.diagnostics import find_status, NodeStatus
from triton_perception.qos import stream_qos
from triton_perception.system.processes import NodeProcess, ros_arguments

pytestmark = [pytest.mark.ros, pytest.mark.server]

FRAME = np.zeros((48, 64, 3), dtype=np.uint8)


@pytest.fixture(scope='module')
def diagnostics(probe: Probe) -> list[DiagnosticArray]:
    """Record every /diagnostics array, for the whole module."""
    return probe.record(DiagnosticArray, '/diagnostics')


def start_detection_node(namespace: str, triton_server: Any, tmp_path: Any,
                         **parameters: Any) -> NodeProcess:
    """Start a detection_node in `namespace` on the session's server, reporting every 0.2 s."""
    return NodeProcess('detection_node', ros_arguments(
        {'triton_url': triton_server.grpc_url, 'diagnostics_period_s': 0.2, **parameters},
        namespace=namespace), tmp_path)


def status_where(diagnostics: list[DiagnosticArray], fqn: str, condition: Any,
                 what: str, timeout_s: float = 60.0) -> NodeStatus:
    """Return the node's status once `condition` holds; fail with `what` and the last counts."""
    try:
        return wait_until(lambda: (status := find_status(diagnostics, fqn)) is not None
                          and condition(status) and status, timeout_s, what)
    except AssertionError as error:
        last = find_status(diagnostics, fqn)
        raise AssertionError(f'{error}; last counts: {last.values if last else None}') from None


def publish(publisher: Any, count: int) -> None:
    """Publish `count` black frames."""
    for index in range(count):
        publisher.publish(image_message(FRAME, Header(frame_id='camera'), 'rgb8'))


@pytest.fixture
def stoppable_node(triton_server: Any, tmp_path: Any) -> Iterator[NodeProcess]:
    """Yield a depth-1 detection_node the test may SIGSTOP; afterwards it must stop with 0."""
    node = start_detection_node('/losses', triton_server, tmp_path, qos_depth=1)
    yield node
    node.process.send_signal(signal.SIGCONT)
    assert node.stop() == 0, node.output()


def test_frames_overwritten_before_the_callback_are_counted(
        probe: Probe, diagnostics: list[DiagnosticArray], stoppable_node: NodeProcess) -> None:
    """
    Frames a stopped node never reads are counted as a gap in the publisher's sequence.

    While the node is stopped (SIGSTOP: an executor that is late), a burst of frames overwrites
    its depth-1 reader history, or is dropped by the best-effort transport while the process
    cannot read: the frames never reach the callback. The next frame the node receives from the
    camera shows them as a gap in the publisher's sequence numbers.
    """
    fqn = '/losses/detection_node'
    publisher = probe.node.create_publisher(Image, '/losses/image', stream_qos('reliable', 100))
    try:
        probe.wait_for_subscribers(publisher)
        status_where(diagnostics, fqn, lambda status: status.triton_ready, 'the node ready')
        publish(publisher, 1)
        status_where(diagnostics, fqn, lambda status: status.count('received') == 1,
                     'the first frame received')
        stoppable_node.process.send_signal(signal.SIGSTOP)
        publish(publisher, 60)
        stoppable_node.process.send_signal(signal.SIGCONT)
        sent = 61
        status = None
        # The camera goes on, a frame at a time: each one the node receives settles the count
        # of all sent before it. A frame may itself be lost (best effort), so send another
        # until one has settled everything sent.
        for _attempt in range(12):
            publish(publisher, 1)
            sent += 1
            with contextlib.suppress(AssertionError):
                status = status_where(diagnostics, fqn, lambda status: status.seen == sent
                                      and status.count('pending') == 0,
                                      f'all {sent} frames received or counted as lost', 5.0)
                break
        last = find_status(diagnostics, fqn)
        assert status is not None, (f'no frame sent after the burst settled the count of '
                                    f'{sent}; last counts: {last.values if last else None}')
    finally:
        probe.node.destroy_publisher(publisher)
    assert status.count('lost_before_node') > 0, status.values
    assert status.count('received') + status.count('lost_before_node') == sent, status.values
    assert status.balanced, status.values
    assert status.reasons.get('lost before the node: sequence gap') == status.count(
        'lost_before_node'), status.values
    assert status.values['loss_counting'] == 'sequence numbers'
    assert 'lost before this node (sequence gaps)' in stoppable_node.output()


def test_a_restarted_publisher_counts_no_loss(
        probe: Probe, diagnostics: list[DiagnosticArray], triton_server: Any,
        tmp_path: Any) -> None:
    """A camera driver that restarts (a new publisher, a new sequence) counts no loss."""
    fqn = '/restart/detection_node'
    node = start_detection_node('/restart', triton_server, tmp_path, qos_reliability='reliable',
                                qos_depth=50)
    try:
        for run in range(2):  # a camera driver that restarts: a new publisher, a new GID
            publisher = probe.node.create_publisher(Image, '/restart/image',
                                                    stream_qos('reliable', 50))
            try:
                probe.wait_for_subscribers(publisher)
                status_where(diagnostics, fqn, lambda status: status.image_publishers == 1,
                             'the node to see the publisher')
                publish(publisher, 5)
                status_where(diagnostics, fqn,
                             lambda status, run=run: status.count('received') == 5 * (run + 1)
                             and status.count('pending') == 0, f'{5 * (run + 1)} frames settled')
            finally:
                probe.node.destroy_publisher(publisher)
        status = find_status(diagnostics, fqn)
        assert status is not None
        assert status.count('lost_before_node') == 0, status.values
    finally:
        assert node.stop() == 0, node.output()
