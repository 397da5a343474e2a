"""
Evaluation runs written without Triton: a small camera bag, a scene on it and its outputs bag.

The outputs bag is written as the recorder writes it (the nodes' own messages, serialized by rclpy,
in the distribution's bag format) beside a report.json. The camera bag they are written against
is the fixture `camera` of test/evaluation/conftest.py.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import numpy as np

from triton_perception.bag.bag_format import new_writer, typestore_for
from triton_perception.evaluation.metrics.report_schema import write_report_json

FRAMES = 40
SIZE = (320, 180)  # width, height
DETECTIONS, LANES, MASKS = ('/evaluation/detections', '/evaluation/lanes',
                            '/evaluation/drivable_area')
TYPES = {DETECTIONS: 'vision_msgs/msg/Detection2DArray', LANES: 'sensor_msgs/msg/PointCloud2',
         MASKS: 'sensor_msgs/msg/Image'}
Frame = dict[str, Any]


def scene(index: int) -> Frame:
    """Return what the nodes publish on frame `index`: three tracked cars, two ego lines."""
    boxes = np.array([[20 + index, 60, 80 + index, 100, 0.9, 2, 1],
                      [140, 70, 190, 110, 0.8, 2, 2],
                      [230 - index, 80, 300 - index, 130, 0.7, 7, 3]], np.float64)
    rows = np.arange(100, 180, 10, dtype=np.float64)
    lanes = [np.stack([150 - (rows - 100), rows], axis=1),
             np.stack([170 + (rows - 100), rows], axis=1)]
    mask = np.zeros((SIZE[1], SIZE[0]), np.uint8)
    mask[120:, 60:260] = 255
    return {'boxes': boxes, 'lanes': lanes, 'sides': [-1, 1], 'mask': mask}


def write_run(directory: Path, camera: tuple[Path, list[int]], frame_of: Callable[[int], Frame],
              *, topic: str = '/camera/image_raw', skip: frozenset[int] = frozenset(),
              masks: bool = True) -> Path:
    """Write an evaluation folder: outputs bag (as recorded) and report.json; return it."""
    from rclpy.serialization import serialize_message
    from std_msgs.msg import Header

    from triton_perception.outputs import detection_array_cdr, image_cdr, lanes_cloud_message
    bag, stamps = camera
    directory.mkdir(parents=True)
    writer = new_writer(directory / 'outputs')
    writer.open()
    store = typestore_for(set(TYPES.values()))
    connections = {name: writer.add_connection(name, type_name, typestore=store)
                   for name, type_name in TYPES.items() if masks or name != MASKS}
    for index, stamp in enumerate(stamps):
        if index in skip:
            continue
        frame = frame_of(index)
        header = Header(frame_id='camera')
        header.stamp.sec, header.stamp.nanosec = divmod(stamp, 1_000_000_000)
        boxes = frame['boxes']
        lanes = np.array([np.asarray(lane, np.float32) for lane in frame['lanes']], np.float32)
        messages = {
            DETECTIONS: detection_array_cdr(boxes[:, :6].astype(np.float32), header,
                                            [str(int(track)) for track in boxes[:, 6]]),
            LANES: serialize_message(lanes_cloud_message(
                lanes.reshape(len(frame['lanes']), -1, 2), np.ones(len(frame['lanes']), np.float32),
                np.array(frame['sides'], np.int8), header)),
            MASKS: image_cdr(frame['mask'], header, 'mono8')}
        for name, connection in connections.items():
            writer.write(connection, stamp + 5_000_000, messages[name])
    writer.close()
    write_report_json({'input': {'bag': str(bag), 'topic': topic, 'frames': len(stamps),
                                 'rate': 1.0, 'timing': 'lockstep', 'replay_s': 1.0,
                                 'bag_s': 4.0},
                       'nodes': {}, 'outputs_bag': str(directory / 'outputs')},
                      directory / 'report.json')
    return directory
