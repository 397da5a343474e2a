"""
lane_node: camera frames -> a Triton lane model -> lane polylines and the drivable area.

Camera frames -> a Triton lane ensemble (the shipped `lane_detection` or an installed lane
model) -> its decoding (on the worker thread) -> lanes and drivable area.
"""
from __future__ import annotations

import sys
import threading
from typing import TYPE_CHECKING

from foxglove_msgs.msg import ImageAnnotations
import numpy as np
from numpy.typing import NDArray
from sensor_msgs.msg import Image, PointCloud2

from triton_perception.frames import Frame
from triton_perception.graphs import LANE_RUNS_OUTPUTS, MAX_RUNS
from triton_perception.ground import LaneGroundOutputs
from triton_perception.lanes import (decode_lanes, DecodeSettings, dropped_runs, lane_model_for,
                                     NUM_POINTS)
from triton_perception.nodes.base import PerceptionNode
from triton_perception.nodes.camera_frames import CameraFrames
from triton_perception.nodes.node_process import run_nodes
from triton_perception.outputs import (draw_drivable_area, draw_lanes, image_cdr,
                                       lane_annotations, lanes_cloud_message)
from triton_perception.parameters import LANES, LaneSettings
from triton_perception.qos import OVERLAY_QOS, RESULT_QOS
from triton_perception.serving import check_lane_outputs, Tensors
from triton_perception.system import default_model_repository

if TYPE_CHECKING:  # rclpy's node options (typed from Jazzy on)
    from rclpy.lifecycle.node import LifecycleNodeArgs
    from typing_extensions import Unpack


class LaneNode(PerceptionNode[LaneSettings]):
    """
    Lane detection through Triton: lanes, drivable area, overlay and ground outputs.

    It publishes `lanes` (PointCloud2), `drivable_area` (mono8, for models that have one),
    `lanes/overlay` and `lanes/annotations` (Foxglove) while watched, and on the ground (once
    the camera geometry is known) `lanes/ground`, `lanes/markers` and `drivable_area/grid`.
    """

    def __init__(self, *, frame_source: CameraFrames | None = None,
                 **node_options: Unpack[LifecycleNodeArgs]) -> None:
        """
        Find the lane model's record in the model repository and create the publishers.

        Without a record the model must follow the shipped lane_detection contract; the log says so.
        """
        super().__init__('lane_node', LANES, LaneSettings, frame_source=frame_source,
                         **node_options)
        repository = default_model_repository()
        self._lane_model = lane_model_for(repository, self.settings.model_name)
        self._set_model_outputs(self._lane_model.outputs)
        if not self._lane_model.source:
            self.get_logger().info(
                f'no lane model record {self._lane_model.name}/lane_model.json in {repository}: '
                f'expecting the lane_detection contract ({", ".join(LANE_RUNS_OUTPUTS)}); '
                'install your own with `triton-perception models install --lanes`')
        self._lanes = self.create_publisher(PointCloud2, 'lanes', RESULT_QOS)
        self._drivable_area = self.create_publisher(Image, 'drivable_area', RESULT_QOS)
        self._overlay = self.create_publisher(Image, 'lanes/overlay', OVERLAY_QOS)
        self._annotations = self.create_publisher(ImageAnnotations, 'lanes/annotations',
                                                  RESULT_QOS)
        self._ground = LaneGroundOutputs(self, self._settings, RESULT_QOS)
        self._dropped_runs = 0  # lane-mask runs past the graph's MAX_RUNS per row, never decoded
        self._counts_lock = threading.Lock()

    def extra_diagnostics(self) -> dict[str, str]:
        """Return the ground state, the lane model and the lane-mask runs dropped so far."""
        return {'ground': self._ground.geometry.reason,
                'lane_model': f'{self._lane_model.name} ({self._lane_model.layout})',
                'lane_runs_dropped': str(self._dropped_runs)}

    def wanted_outputs(self) -> tuple[str, ...]:
        """
        Leave the drivable area out of the request while nothing here would use it.

        Its users: the `drivable_area` topic (with publish_drivable_area), the overlay and the
        annotations (they draw it) and the ground grid, each only while subscribed. It is the
        largest output (a mask at the frame's size), so a camera nobody watches the road area
        of does not move it.
        """
        outputs = self._outputs
        if outputs != LANE_RUNS_OUTPUTS:
            return outputs
        users = [self._overlay, self._annotations, self._ground.grid_publisher]
        if self.settings.publish_drivable_area:
            users.append(self._drivable_area)
        if any(publisher.get_subscription_count() for publisher in users):
            return outputs
        return outputs[:2]

    def _prepare(self, frame: Frame) -> Tensors:
        return {'IMAGE': self.frame_rgb(frame)}

    def _deliver(self, frame: Frame, inputs: Tensors, outputs: Tensors) -> None:
        model = self._lane_model
        checked = check_lane_outputs(
            outputs, tuple(name for name in model.outputs if name in outputs),
            model.uint8_outputs)
        if model.outputs == LANE_RUNS_OUTPUTS:
            dropped = dropped_runs(checked[LANE_RUNS_OUTPUTS[1]], MAX_RUNS)
            with self._counts_lock:  # request threads deliver at the same time
                self._dropped_runs += dropped
        settings = self.settings
        height, width = inputs['IMAGE'].shape[:2]
        result = decode_lanes(model, checked, (height, width), DecodeSettings(
            num_points=NUM_POINTS, min_lane_length=settings.min_lane_length,
            score_threshold=settings.lane_score_threshold,
            nms_distance_px=settings.lane_nms_distance_px, max_lanes=settings.max_lanes))
        header = frame.message.header
        self._lanes.publish(lanes_cloud_message(result.lanes, result.scores, result.sides, header))
        drivable = result.drivable_area
        if drivable is not None and settings.publish_drivable_area:
            self._drivable_area.publish(image_cdr(drivable, header, 'mono8'))
        self._ground.publish(header, result.lanes, result.sides, drivable)
        self.publish_annotations(self._annotations, lambda: lane_annotations(
            result.lanes, result.sides, drivable, header.stamp))

        def overlay() -> NDArray[np.uint8]:
            image = inputs['IMAGE'].copy()
            if drivable is not None:
                image = draw_drivable_area(image, drivable)
            return draw_lanes(image, result.lanes, result.sides)
        self.publish_overlay(self._overlay, overlay, header)


def main(args: list[str] | None = None) -> None:
    """Run lane_node in this process; exits with run_nodes' code (2 on bad parameters)."""
    sys.exit(run_nodes([LaneNode], args))


if __name__ == '__main__':
    main()
