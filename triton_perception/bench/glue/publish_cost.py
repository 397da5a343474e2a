"""
`bench --glue --publish-cost`: what building and publishing each output message costs per kind.

rclpy publishes a message object (converted to C field by field, then serialized by the rmw)
or the serialized message as bytes. Each output message has one builder, the cheaper way by
this measurement (docs/performance-log.md); the other way is kept in untaken_ways. For each
kind the bench builds and publishes one frame's message both ways, in this process, to one
matched reader (a subscription of the same node, never spun), and reports the thread CPU per
message, the minimum over the repeats, so that a loaded machine still gives a fair ratio
between the two. The message's contents are the glue bench's: its frame size and the
constant graphs' boxes, four lanes of NUM_POINTS points.
"""
from __future__ import annotations

from dataclasses import dataclass
import time
from typing import Callable

from builtin_interfaces.msg import Time
import numpy as np
from numpy.typing import NDArray
import rclpy
from rclpy.context import Context
from rclpy.publisher import Publisher
from rclpy.signals import SignalHandlerOptions
from sensor_msgs.msg import Image, PointCloud2
from std_msgs.msg import Header
from vision_msgs.msg import Detection2DArray

from triton_perception.bench.glue.constant_graphs import FIXED_DETECTIONS
from triton_perception.bench.glue.untaken_ways import (detection_array_message, image_message,
                                                       lanes_cloud_cdr)
from triton_perception.lanes import NUM_POINTS
from triton_perception.outputs import detection_array_cdr, image_cdr, lanes_cloud_message

LANES = 4
REPEATS = 30   # batches per kind and way; the minimum batch is reported
CALLS = 20     # messages per batch


@dataclass(frozen=True)
class PublishCost:
    """One message kind's CPU ms per message (min over repeats): built and published each way."""

    kind: str
    as_message_ms: float
    as_bytes_ms: float


Builders = dict[str, tuple[type, Callable[[], object], Callable[[], bytes]]]


def _builders(frame_size: tuple[int, int]) -> Builders:
    """Each kind's (message type, build as message, build as bytes), for one frame's results."""
    width, height = frame_size
    rng = np.random.default_rng(0)
    header = Header(stamp=Time(sec=1700000000, nanosec=123456789), frame_id='camera_optical')
    boxes, ids = FIXED_DETECTIONS, [str(index) for index in range(len(FIXED_DETECTIONS))]
    lanes = np.stack([np.stack([np.linspace(100 + 200 * lane, 400 + 50 * lane, NUM_POINTS),
                                np.linspace(height - 1, height / 2, NUM_POINTS)], axis=1)
                      for lane in range(LANES)]).astype(np.float32)
    scores = np.full(LANES, 0.9, np.float32)
    sides: NDArray[np.int8] = np.array([-2, -1, 1, 2][:LANES], np.int8)
    mask = (rng.integers(0, 2, (height, width)) * 255).astype(np.uint8)
    rgb = rng.integers(0, 256, (height, width, 3)).astype(np.uint8)
    return {
        'detections': (Detection2DArray, lambda: detection_array_message(boxes, header, ids),
                       lambda: detection_array_cdr(boxes, header, ids)),
        'lanes': (PointCloud2, lambda: lanes_cloud_message(lanes, scores, sides, header),
                  lambda: lanes_cloud_cdr(lanes, scores, sides, header)),
        'drivable_area': (Image, lambda: image_message(mask, header, 'mono8'),
                          lambda: image_cdr(mask, header, 'mono8')),
        'overlay': (Image, lambda: image_message(rgb, header, 'rgb8'),
                    lambda: image_cdr(rgb, header, 'rgb8')),
    }


def _batch_ms(publish: Callable[[], None], calls: int) -> float:
    """Return the thread CPU ms per call of `calls` calls of `publish`."""
    start = time.thread_time()
    for _ in range(calls):
        publish()
    return (time.thread_time() - start) * 1000.0 / calls


def measure_publish_cost(frame_size: tuple[int, int], repeats: int = REPEATS,
                         calls: int = CALLS) -> list[PublishCost]:
    """
    Build and publish every output message kind both ways; return the cost per message.

    `frame_size`: (width, height) of the images (drivable area, overlay). The two ways run in
    alternating batches, so that a change of load touches both alike.
    """
    builders = _builders(frame_size)
    context = Context()
    rclpy.init(context=context, signal_handler_options=SignalHandlerOptions.NO)
    try:
        node = rclpy.create_node('publish_cost', context=context)
        costs = []
        for kind, (message_type, as_message, as_bytes) in builders.items():
            topic = f'publish_cost/{kind}'
            publisher: Publisher[object] = node.create_publisher(message_type, topic, 10)
            node.create_subscription(message_type, topic, lambda _: None, 10)
            message_ms, bytes_ms = [], []
            for _ in range(repeats):
                message_ms.append(_batch_ms(lambda: publisher.publish(as_message()), calls))
                bytes_ms.append(_batch_ms(lambda: publisher.publish(as_bytes()), calls))
            costs.append(PublishCost(kind, min(message_ms), min(bytes_ms)))
        return costs
    finally:
        rclpy.shutdown(context=context)


def publish_cost_table(costs: list[PublishCost]) -> str:
    """Return the costs as a markdown table: kind, as message, as bytes, their ratio."""
    lines = ['| message kind | built + published as message, ms | as bytes, ms | message / '
             'bytes |', '| --- | --- | --- | --- |']
    lines += [f'| {cost.kind} | {cost.as_message_ms:.4f} | {cost.as_bytes_ms:.4f} | '
              f'{cost.as_message_ms / cost.as_bytes_ms:.2f} |' for cost in costs]
    return '\n'.join(lines)
