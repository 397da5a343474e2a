"""
Perception nodes as processes, and what the tests send them and read from them.

A node started on the session's tritonserver with its own log directory; the Image and the highway
clip's CameraInfo a probe publishes to it; one frame sent until its result arrives; the node's
newest /diagnostics values.
"""
from __future__ import annotations

import time
from typing import Any

from diagnostic_msgs.msg import DiagnosticArray
import numpy as np
from sensor_msgs.msg import CameraInfo, Image
import yaml

from support.highway_clip import CALIBRATION
from support.ros_helpers import Probe, wait_until
from triton_perception.frames.diagnostics import find_status
from triton_perception.frames.image_conversion import encode_rgb
from triton_perception.system.processes import NodeProcess, ros_arguments


def start_node(executable: str, namespace: str, triton_server: Any, tmp_path_factory: Any,
               **parameters: Any) -> NodeProcess:
    """
    Start `executable` in `namespace` on the session's server with `parameters`.

    Its log goes to a directory of its own.
    """
    return NodeProcess(executable, ros_arguments({'triton_url': triton_server.grpc_url,
                                                  **parameters}, namespace=namespace),
                       tmp_path_factory.mktemp(executable))


def image_message(rgb: np.ndarray, encoding: str, frame_id: str, stamp_s: int,
                  padding: int = 0) -> Image:
    """
    Return `rgb` as an Image in `encoding`, stamped `stamp_s` s in `frame_id`.

    `padding` bytes end each row, so that step and width differ.
    """
    data, step = encode_rgb(rgb, encoding)
    height = rgb.shape[0]
    if padding:
        rows = np.frombuffer(data, dtype=np.uint8).reshape(height, step)
        data = np.pad(rows, ((0, 0), (0, padding)), constant_values=7).tobytes()
        step += padding
    message = Image(height=height, width=rgb.shape[1], encoding=encoding, is_bigendian=0,
                    step=step, data=data)
    message.header.frame_id = frame_id
    message.header.stamp.sec = stamp_s
    message.header.stamp.nanosec = 123456789
    return message


def camera_info(frame_id: str = 'front_optical') -> CameraInfo:
    """Return the highway clip's CameraInfo, in the optical frame `frame_id`."""
    calibration = yaml.safe_load((CALIBRATION / 'camera_info.yaml').read_text())
    info = CameraInfo(width=calibration['image_width'], height=calibration['image_height'],
                      distortion_model=calibration['distortion_model'],
                      d=calibration['distortion_coefficients']['data'],
                      k=calibration['camera_matrix']['data'])
    info.header.frame_id = frame_id
    return info


def send_and_receive(probe: Probe, topic_in: str, message: Any, topic_out: str,
                     output_type: type, received: list[Any], timeout_s: float = 30.0) -> Any:
    """
    Publish one frame and return the result whose header matches it.

    The frame is sent again every few seconds until its result arrives: discovery is
    asymmetric, and a subscriber that has not yet matched our publisher never sees a sample.
    """
    publisher = probe.publisher(type(message), topic_in)
    probe.wait_for_subscribers(publisher)
    probe.wait_for_publishers(topic_out)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        publisher.publish(message)
        try:
            return wait_until(
                lambda: next((result for result in list(received)
                              if result.header == message.header), None),
                min(5.0, deadline - time.monotonic()), 'result')
        except AssertionError:
            continue
    raise AssertionError(f'no result on {topic_out} for stamp {message.header.stamp} '
                         f'within {timeout_s:g} s')


def latest_diagnostics(records: list[DiagnosticArray], fqn: str) -> dict[str, str] | None:
    """Return the newest report of the node `fqn` (other nodes of this module report too)."""
    status = find_status(records, fqn)
    return None if status is None else status.values
