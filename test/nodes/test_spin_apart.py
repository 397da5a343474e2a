"""An error in a housekeeping callback fails the node process: it is not taken for a stop."""
from __future__ import annotations

import pytest
import rclpy
from rclpy.logging import get_logger

from triton_perception.nodes.executors import HOT_PATH
from triton_perception.nodes.node_process import ends_cleanly, spin_apart
from triton_perception.system import StopRequest

pytestmark = [pytest.mark.ros]


class Broken(RuntimeError):
    """What the housekeeping callback raises."""


def test_a_housekeeping_error_is_raised_and_not_taken_for_a_stop() -> None:
    """A timer that raises on the housekeeping thread ends spin_apart with that error."""
    rclpy.init()
    node = rclpy.create_node('spin_apart_probe')

    def fail() -> None:
        raise Broken('housekeeping callback')
    node.create_timer(0.05, fail)
    stop = StopRequest()  # no handlers: nothing but the error may end the spin
    logged: list[str] = []
    try:
        with pytest.raises(Broken):
            with ends_cleanly(stop, logged.append):
                spin_apart([node], stop, get_logger('spin_apart_test'))
        assert not stop.requested and logged == []
    finally:
        node.destroy_node()
        hot = HOT_PATH.release()
        if hot is not None:
            hot.destroy_node()
        rclpy.try_shutdown()
