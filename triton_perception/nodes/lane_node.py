"""
lane_node.

Camera frames -> Triton `lane_detection` ensemble (the lane model's compact maps) -> the lane
geometry (on the worker thread) -> lanes and drivable area.
"""
from __future__ import annotations

import sys
from typing import Any

from sensor_msgs.msg import Image, PointCloud2

from triton_perception.ground.node_outputs import LaneGroundOutputs
from triton_perception.lane_geometry import NUM_POINTS, postprocess
from triton_perception.messages import image_message, lanes_cloud_message
from triton_perception.nodes.base import PerceptionNode, run_nodes
from triton_perception.overlay import draw_drivable_area, draw_lanes
from triton_perception.parameters import LANES
from triton_perception.qos import OVERLAY_QOS, RESULT_QOS
from triton_perception.triton.client import Frame, Tensors
from triton_perception.validation import check_lane_maps

LANE_OUTPUTS = ('LANE_PROBABILITY', 'DRIVABLE_MARGIN')


class LaneNode(PerceptionNode):
    """
    Lane detection through Triton: lanes, drivable area, overlay and ground outputs.

    It publishes `lanes` (PointCloud2), `drivable_area` (mono8), `lanes/overlay` while watched, and
    on the ground (once the camera geometry is known) `lanes/ground`, `lanes/markers` and
    `drivable_area/grid`.
    """

    def __init__(self, **node_options: Any) -> None:
        super().__init__('lane_node', LANES, LANE_OUTPUTS, **node_options)
        self._lanes = self.create_publisher(PointCloud2, 'lanes', RESULT_QOS)
        self._drivable_area = self.create_publisher(Image, 'drivable_area', RESULT_QOS)
        self._overlay = self.create_publisher(Image, 'lanes/overlay', OVERLAY_QOS)
        self._ground = LaneGroundOutputs(self, self.settings, RESULT_QOS)

    def extra_diagnostics(self) -> dict[str, str]:
        return {'ground': self._ground.geometry.reason}

    def _prepare(self, frame: Frame) -> Tensors:
        return {'IMAGE': self.frame_rgb(frame)}

    def _deliver(self, frame: Frame, inputs: Tensors, outputs: Tensors) -> None:
        probability, margin = check_lane_maps(outputs)
        height, width = inputs['IMAGE'].shape[:2]
        result = postprocess(probability, margin, (height, width), NUM_POINTS,
                             self.settings['min_lane_length'])
        header = frame.message.header
        self._lanes.publish(lanes_cloud_message(result.lanes, result.scores, result.sides,
                                                header))
        if self.settings['publish_drivable_area']:
            self._drivable_area.publish(image_message(result.drivable_area, header, 'mono8'))
        self._ground.publish(header, result.lanes, result.sides, result.drivable_area)
        self.publish_overlay(self._overlay, lambda: draw_lanes(
            draw_drivable_area(inputs['IMAGE'].copy(), result.drivable_area), result.lanes,
            result.sides), header)


def main(args: list[str] | None = None) -> None:
    sys.exit(run_nodes([LaneNode], args))


if __name__ == '__main__':
    main()
