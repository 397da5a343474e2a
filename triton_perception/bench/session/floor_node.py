"""
The glue bench's floor: a bare rclpy node doing only what detections through Triton need.

The package's nodes are measured against this node: take the Image, write it into Triton
system shared memory, one synchronous infer of the detection ensemble, publish a
Detection2DArray (its CDR bytes, written as detection_node writes them). The frame is
converted from bgr8 to RGB while it is written into the region (one pass, the minimum a node
serving an RGB model must do). There is no worker thread, frame
slot, accounting, /diagnostics, lifecycle, parameter handling or error recovery: whatever the
package's nodes cost beyond this node is the price of those. It runs in its own process, one
per camera, started by the bench like every node (`NodeProcess`), and imports nothing of the
package's node machinery but the frame reader (nodes.frame_reading, a few dataclasses), so its
memory is that of rclpy, numpy, OpenCV and the gRPC client.

With `serialized_take` (a second reference) it takes the Image serialized and reads
it with that reader, as the package's nodes do.
"""
from __future__ import annotations

from multiprocessing.shared_memory import SharedMemory
import os
import sys
import time
from typing import Callable, TYPE_CHECKING

import cv2
import numpy as np
from numpy.typing import NDArray
import rclpy
from rclpy.executors import ExternalShutdownException
from rclpy.node import Node
from sensor_msgs.msg import Image
import tritonclient.grpc as grpcclient
from tritonclient.utils import np_to_triton_dtype
from vision_msgs.msg import Detection2DArray

from triton_perception.bench.session.settings import detection_request_inputs
from triton_perception.frames import read_frame
from triton_perception.outputs import detection_array_cdr
from triton_perception.parameters import DETECTION, RAW, specs_by_name
from triton_perception.qos import RESULT_QOS, stream_qos
from triton_perception.serving import region_name
from triton_perception.system import dds_profile_environment, die_with_parent

if TYPE_CHECKING:
    from triton_perception.frames import ReadImage

NODE_NAME = 'floor_node'
MODULE = 'triton_perception.bench.session.floor_node'
READY_TIMEOUT_S = 60.0
REQUEST_TIMEOUT_S = 5.0


class FloorNode(Node):
    """Image in, shared memory, one synchronous infer, Detection2DArray out; nothing else."""

    def __init__(self) -> None:
        """
        Connect to Triton, wait until the model is ready, then subscribe.

        Subscribing last means that once the bench sees the subscription, frames are served:
        readiness needs no status topic. QoS as the package's nodes subscribe by default.
        """
        super().__init__(NODE_NAME)
        specs = specs_by_name(DETECTION)
        self._model = str(self.declare_parameter('model_name',
                                                 str(specs['model_name'].default)).value)
        url = str(self.declare_parameter('triton_url', str(specs['triton_url'].default)).value)
        serialized = bool(self.declare_parameter('serialized_take', False).value)
        self._client = grpcclient.InferenceServerClient(url)
        deadline = time.monotonic() + READY_TIMEOUT_S
        while not self._model_ready():
            if time.monotonic() > deadline:
                raise RuntimeError(f'{self._model} not ready at {url} within {READY_TIMEOUT_S} s')
            time.sleep(0.2)
        self._thresholds = []
        for name, value in detection_request_inputs().items():
            tensor = grpcclient.InferInput(name, list(value.shape),
                                           np_to_triton_dtype(value.dtype))
            tensor.set_data_from_numpy(value)
            self._thresholds.append(tensor)
        self._outputs = [grpcclient.InferRequestedOutput(name)
                         for name in ('DETECTIONS', 'NUM_DETECTIONS')]
        self._region = region_name('floor')
        self._memory: SharedMemory | None = None
        self._publisher = self.create_publisher(Detection2DArray, 'detections', RESULT_QOS)
        depth = specs['qos_depth'].default
        assert isinstance(depth, int)
        self.create_subscription(Image, 'image',
                                 self._on_serialized if serialized else self._on_image,
                                 stream_qos(str(specs['qos_reliability'].default), depth),
                                 raw=serialized)

    def _model_ready(self) -> bool:
        try:
            return bool(self._client.is_model_ready(self._model))
        except Exception:  # noqa: BLE001 (the server is still starting)
            return False

    def _region_for(self, nbytes: int) -> SharedMemory:
        """Return the shared-memory region, (re)created and registered for frames of `nbytes`."""
        if self._memory is None or self._memory.size < nbytes:
            self._close_region()
            self._memory = SharedMemory(name=self._region, create=True, size=nbytes)
            self._client.register_system_shared_memory(self._region, f'/{self._region}', nbytes)
        return self._memory

    def _on_serialized(self, serialized: bytes) -> None:
        """Read the serialized Image (the bench sends only readable ones) and serve it."""
        self._on_image(read_frame(serialized, RAW))

    def _on_image(self, message: Image | ReadImage) -> None:
        """Write the frame into shared memory as RGB, infer, publish the detections."""
        height, width = message.height, message.width
        pixels = np.frombuffer(message.data, np.uint8).reshape(height, message.step)
        pixels = pixels[:, :width * 3].reshape(height, width, 3)
        nbytes = height * width * 3
        frame: NDArray[np.uint8] = np.ndarray((height, width, 3), np.uint8,
                                              buffer=self._region_for(nbytes).buf)
        if message.encoding == 'bgr8':
            cv2.cvtColor(pixels, cv2.COLOR_BGR2RGB, dst=frame)
        else:  # rgb8
            frame[...] = pixels
        image = grpcclient.InferInput('IMAGE', [height, width, 3], 'UINT8')
        image.set_shared_memory(self._region, nbytes)
        result = self._client.infer(self._model, [image, *self._thresholds],
                                    outputs=self._outputs, client_timeout=REQUEST_TIMEOUT_S)
        count = int(result.as_numpy('NUM_DETECTIONS')[0])
        self._publisher.publish(detection_array_cdr(
            result.as_numpy('DETECTIONS')[:count], message.header))

    def _close_region(self) -> None:
        if self._memory is None:
            return
        try:
            self._client.unregister_system_shared_memory(self._region)
        except Exception:  # noqa: BLE001 (the server is gone)
            pass
        self._memory.close()
        self._memory.unlink()
        self._memory = None

    def destroy_node(self) -> None:
        """Unregister and remove the shared-memory region, close the client, then the node."""
        self._close_region()
        self._client.close()
        return super().destroy_node()


def spin_node(make: Callable[[], Node], args: list[str] | None = None) -> None:
    """Spin the node `make` returns until SIGINT or SIGTERM (as the bench stops its nodes)."""
    die_with_parent()
    os.environ.update(dds_profile_environment())
    rclpy.init(args=sys.argv if args is None else args)
    node = None
    try:
        node = make()
        rclpy.spin(node)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        if node is not None:
            node.destroy_node()
        rclpy.try_shutdown()


def main(args: list[str] | None = None) -> None:
    """Spin the floor node until SIGINT or SIGTERM (as the bench stops it)."""
    spin_node(FloorNode, args)


if __name__ == '__main__':
    main()
