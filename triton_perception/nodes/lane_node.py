"""lane_node: camera frames -> Triton `lane_detection` ensemble -> lanes and drivable area."""
from __future__ import annotations

import sys
from typing import Any

import numpy as np
from sensor_msgs.msg import Image, PointCloud2

from triton_perception.ground.node_outputs import LaneGroundOutputs
from triton_perception.messages import image_message, lanes_cloud_message
from triton_perception.nodes.base import OVERLAY_QOS, RESULT_QOS, PerceptionNode, run_nodes
from triton_perception.overlay import draw_drivable_area, draw_lanes
from triton_perception.parameters import LANES
from triton_perception.triton.client import Frame, Tensors
from triton_perception.validation import check_lane_outputs

LANE_OUTPUTS = ('LANES', 'LANE_SCORES', 'LANE_SIDES', 'DRIVABLE_AREA')


class LaneNode(PerceptionNode):
    """Publishes `lanes` (PointCloud2), `drivable_area` (mono8), `lanes/overlay` while watched,
    and on the ground (once the camera geometry is known) `lanes/ground`, `lanes/markers` and
    `drivable_area/grid`."""

    def __init__(self, **node_options: Any) -> None:
        super().__init__('lane_node', LANES, LANE_OUTPUTS, **node_options)
        self._lanes = self.create_publisher(PointCloud2, 'lanes', RESULT_QOS)
        self._drivable_area = self.create_publisher(Image, 'drivable_area', RESULT_QOS)
        self._overlay = self.create_publisher(Image, 'lanes/overlay', OVERLAY_QOS)
        self._ground = LaneGroundOutputs(self, self.settings, RESULT_QOS)

    def extra_diagnostics(self) -> dict[str, str]:
        return {'ground': self._ground.geometry.reason}

    def _prepare(self, frame: Frame) -> Tensors:
        return {
            'IMAGE': self.frame_rgb(frame),
            'MIN_LANE_LENGTH': np.array([self.settings['min_lane_length']], dtype=np.float32),
        }

    def _deliver(self, frame: Frame, inputs: Tensors, outputs: Tensors) -> None:
        check_lane_outputs(outputs, inputs['IMAGE'].shape)
        header = frame.message.header
        lanes, sides = outputs['LANES'], outputs['LANE_SIDES']
        self._lanes.publish(lanes_cloud_message(lanes, outputs['LANE_SCORES'], sides, header))
        if self.settings['publish_drivable_area']:
            self._drivable_area.publish(image_message(outputs['DRIVABLE_AREA'], header, 'mono8'))
        self._ground.publish(header, lanes, sides, outputs['DRIVABLE_AREA'])
        if self.overlay_wanted(self._overlay):
            canvas = draw_drivable_area(inputs['IMAGE'].copy(), outputs['DRIVABLE_AREA'])
            self._overlay.publish(image_message(draw_lanes(canvas, lanes, sides), header, 'rgb8'))


def main(args: list[str] | None = None) -> None:
    sys.exit(run_nodes([LaneNode], args))


if __name__ == '__main__':
    main()
