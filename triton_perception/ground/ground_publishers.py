"""
The ground outputs of lane_node and detection_node: publishers plus one call per frame.

Each node makes one of these and calls `publish` from its deliver path (worker thread) with the
arrays it already has; nothing is built while the geometry is unknown.
"""
from __future__ import annotations

from typing import Sequence

from nav_msgs.msg import OccupancyGrid
import numpy as np
from numpy.typing import NDArray
from rclpy.node import Node
from rclpy.qos import QoSProfile
from sensor_msgs.msg import PointCloud2
from std_msgs.msg import Header
from vision_msgs.msg import Detection3DArray
from visualization_msgs.msg import MarkerArray

from triton_perception.ground.camera_lookup import CameraGeometrySource
from triton_perception.ground.ground_messages import (ground_cloud_message,
                                                      ground_detections_message, ground_header,
                                                      lane_markers_message, occupancy_grid_message)
from triton_perception.ground.ground_projection import (GridSampler, GridSpec, ground_boxes,
                                                        ground_lane_points)
from triton_perception.parameters import GroundSettings, LaneSettings, LiveSettings


class LaneGroundOutputs:
    """`lanes/ground`, `lanes/markers` and `drivable_area/grid`."""

    def __init__(self, node: Node, settings: LiveSettings[LaneSettings], qos: QoSProfile) -> None:
        """Create the three publishers with `qos` and the camera geometry source of `node`."""
        self._settings = settings
        self.geometry = CameraGeometrySource(node, settings)
        start = settings()  # the grid's parameters are read-only
        self._grid = GridSpec(length=start.grid_length_m, width=start.grid_width_m,
                              resolution=start.grid_resolution_m)
        self._sampler: GridSampler | None = None
        self._cloud = node.create_publisher(PointCloud2, 'lanes/ground', qos)
        self._markers = node.create_publisher(MarkerArray, 'lanes/markers', qos)
        self.grid_publisher = node.create_publisher(OccupancyGrid, 'drivable_area/grid', qos)

    def publish(self, header: Header, lanes: NDArray[np.float32], sides: NDArray[np.int8],
                drivable: NDArray[np.uint8] | None) -> None:
        """
        Publish one frame's lanes and drivable area on the ground, if its camera is known.

        `header`: the input frame's header; its frame_id names the camera.
        `lanes`: [L, P, 2] polylines in frame pixels.
        `sides`: [L] side labels.
        `drivable`: the drivable-area mask at any resolution, or None for a lane model without one
            (then no grid is published).
        """
        camera = self.geometry.camera(header.frame_id)
        if camera is None:
            return
        stamped = ground_header(header, self._settings().target_frame)
        points = ground_lane_points(camera, lanes, sides)
        self._cloud.publish(ground_cloud_message(points, stamped))
        self._markers.publish(lane_markers_message(points, stamped))
        if drivable is None:  # a lane model without a drivable-area output
            return
        sampler = self._sampler
        height, width = drivable.shape[:2]
        if sampler is None or sampler.key != (id(camera), self._grid, (height, width)):
            sampler = self._sampler = GridSampler(camera, self._grid, (height, width))
        self.grid_publisher.publish(
            occupancy_grid_message(sampler.values(drivable), self._grid, stamped))


class DetectionGroundOutputs:
    """`detections/ground`: each box's ground contact point and width."""

    def __init__(self, node: Node, settings: LiveSettings[GroundSettings], qos: QoSProfile) -> None:
        """Create the `detections/ground` publisher with `qos` and the camera geometry source."""
        self._settings = settings
        self.geometry = CameraGeometrySource(node, settings)
        self._publisher = node.create_publisher(Detection3DArray, 'detections/ground', qos)

    def publish(self, header: Header, detections: NDArray[np.float32],
                track_ids: Sequence[str] | None) -> None:
        """
        Publish the ground boxes of DETECTIONS rows, each with its class, score and track id.

        `track_ids`: each row's id as `detections` carries it (None: '' for every row).
        """
        camera = self.geometry.camera(header.frame_id)
        if camera is None:
            return
        contacts, widths, heights = ground_boxes(camera, detections)
        ids = track_ids if track_ids is not None else [''] * len(detections)
        self._publisher.publish(ground_detections_message(
            detections, ids, contacts, widths, heights,
            ground_header(header, self._settings().target_frame)))
