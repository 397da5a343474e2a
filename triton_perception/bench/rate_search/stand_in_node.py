"""
A stand-in pipeline of known capacity for `bench --rate-search --stand-in HZ`.

One rclpy node per camera takes the frames as the package's nodes do (a latest-frame slot in
front of one worker), holds each frame for 1 / capacity seconds (a sleep: no CPU, so its
capacity holds on a busy machine) and publishes a Detection2DArray with the frame's header.
Above its capacity it drops the frames that a newer one replaces in the slot, so at a
publisher rate R above capacity C it drops about 1 - C / R of them: the rate search should
find C / (1 - drop limit). With capacity 0 it takes frames and answers none.
"""
from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING

from rclpy.node import Node
from sensor_msgs.msg import Image
from vision_msgs.msg import Detection2DArray

from triton_perception.bench.session import spin_node
from triton_perception.qos import RESULT_QOS, stream_qos

if TYPE_CHECKING:
    from std_msgs.msg import Header

NODE_NAME = 'stand_in_node'
MODULE = 'triton_perception.bench.rate_search.stand_in_node'


class StandInNode(Node):
    """Frames into a latest-frame slot; a worker serves one per 1 / capacity s."""

    def __init__(self) -> None:
        """Read `capacity_hz`, start the worker, then subscribe (the bench waits for it)."""
        super().__init__(NODE_NAME)
        self._capacity_hz = float(self.declare_parameter('capacity_hz', 10.0).value)
        self._slot: Header | None = None  # the header of the frame waiting in the slot
        self._condition = threading.Condition()
        self._stopping = False
        self._publisher = self.create_publisher(Detection2DArray, 'detections', RESULT_QOS)
        self._worker = threading.Thread(target=self._serve, name='stand-in-worker', daemon=True)
        self._worker.start()
        self.create_subscription(Image, 'image', self._on_image, stream_qos('reliable', 1))

    def _on_image(self, message: Image) -> None:
        """Put the frame in the slot; one still waiting there is dropped."""
        with self._condition:
            self._slot = message.header
            self._condition.notify()

    def _serve(self) -> None:
        while True:
            with self._condition:
                while self._slot is None and not self._stopping:
                    self._condition.wait()
                if self._stopping:
                    return
                header, self._slot = self._slot, None
            if self._capacity_hz <= 0:
                continue  # answers nothing
            time.sleep(1.0 / self._capacity_hz)
            self._publisher.publish(Detection2DArray(header=header))

    def destroy_node(self) -> None:
        """Stop the worker, then the node."""
        with self._condition:
            self._stopping = True
            self._condition.notify()
        self._worker.join(timeout=2.0)
        return super().destroy_node()


def main(args: list[str] | None = None) -> None:
    """Spin the stand-in until SIGINT or SIGTERM (as the bench stops it)."""
    spin_node(StandInNode, args)


if __name__ == '__main__':
    main()
