"""
Ground outputs -> ROS messages (sensor_msgs, visualization_msgs, nav_msgs, vision_msgs).

Every message carries the input frame's stamp and is stamped in target_frame.
"""
from __future__ import annotations

import array
from typing import Sequence

from builtin_interfaces.msg import Duration
from geometry_msgs.msg import Point
from nav_msgs.msg import OccupancyGrid
import numpy as np
from numpy.typing import NDArray
from sensor_msgs.msg import PointCloud2
from std_msgs.msg import ColorRGBA, Header
from vision_msgs.msg import Detection3D, Detection3DArray, ObjectHypothesisWithPose
from visualization_msgs.msg import Marker, MarkerArray

from triton_perception.ground.ground_projection import GridSpec, GROUND_POINT_DTYPE
from triton_perception.outputs import point_fields

GROUND_POINT_FIELDS = point_fields(GROUND_POINT_DTYPE)
# By |side|: ego boundaries green, the next lines out yellow, lines further out grey.
SIDE_COLOURS = {1: (0.1, 0.9, 0.2), 2: (1.0, 0.85, 0.1), 0: (0.6, 0.6, 0.6)}
LINE_WIDTH_M = 0.15


def ground_header(header: Header, target_frame: str) -> Header:
    """Return the frame's header with its stamp kept and frame_id set to `target_frame`."""
    return Header(stamp=header.stamp, frame_id=target_frame)


def ground_cloud_message(points: NDArray[np.void], header: Header) -> PointCloud2:
    """Return ground points (GROUND_POINT_DTYPE; x, y, z in m) as a PointCloud2."""
    return PointCloud2(header=header, height=1, width=len(points),
                       fields=list(GROUND_POINT_FIELDS), is_bigendian=False,
                       point_step=GROUND_POINT_DTYPE.itemsize,
                       row_step=GROUND_POINT_DTYPE.itemsize * len(points),
                       data=points.astype(GROUND_POINT_DTYPE, copy=False).tobytes(),
                       is_dense=True)


def read_ground_points(cloud: PointCloud2) -> NDArray[np.void]:
    """Return the inverse of ground_cloud_message (rclpy and rosbags messages alike)."""
    return np.frombuffer(bytes(cloud.data), dtype=GROUND_POINT_DTYPE, count=cloud.width)


def lane_markers_message(points: NDArray[np.void], header: Header) -> MarkerArray:
    """DELETEALL, then one LINE_STRIP per lane (id = lane_id) coloured by side."""
    markers = [Marker(header=header, ns='lanes', action=Marker.DELETEALL)]
    for lane_id in np.unique(points['lane_id']):
        lane = points[points['lane_id'] == lane_id]
        if len(lane) < 2:
            continue
        red, green, blue = SIDE_COLOURS.get(abs(int(lane['side'][0])), SIDE_COLOURS[0])
        marker = Marker(header=header, ns='lanes', id=int(lane_id), type=Marker.LINE_STRIP,
                        action=Marker.ADD, lifetime=Duration(sec=0),
                        color=ColorRGBA(r=red, g=green, b=blue, a=1.0),
                        points=[Point(x=float(x), y=float(y), z=float(z))
                                for x, y, z in zip(lane['x'], lane['y'], lane['z'])])
        marker.pose.orientation.w = 1.0
        marker.scale.x = LINE_WIDTH_M
        markers.append(marker)
    return MarkerArray(markers=markers)


def occupancy_grid_message(cells: NDArray[np.int8], grid: GridSpec,
                           header: Header) -> OccupancyGrid:
    """
    Return `cells` (one int8 per cell, row-major as `grid.shape`) as an OccupancyGrid.

    Resolution is in m per cell and the origin is the grid's corner (GridSpec.origin), unrotated.
    """
    message = OccupancyGrid(header=header)
    rows, cols = grid.shape
    message.info.map_load_time = header.stamp
    message.info.resolution = float(grid.resolution)
    message.info.width, message.info.height = cols, rows
    message.info.origin.position.x, message.info.origin.position.y = grid.origin
    message.info.origin.orientation.w = 1.0
    # An array.array skips the per-value check that Humble's message classes run on any other
    # sequence (always: under __debug__), which also refuses the bytes of negative cells.
    message.data = array.array('b', cells.astype(np.int8).tobytes())
    return message


def ground_detections_message(detections: NDArray[np.float32], track_ids: Sequence[str],
                              contacts: NDArray[np.float64], widths: NDArray[np.float64],
                              heights: NDArray[np.float64], header: Header) -> Detection3DArray:
    """
    One Detection3D per DETECTIONS row whose bottom edge meets the ground.

    The contact point as the position, the ground width as size.y, the height as size.z (size.x, the
    depth, is not observable: 0), the row's hypothesis (decimal class id, score) as `detections`
    carries it, and its track id ('' for none).
    """
    message = Detection3DArray(header=header)
    for row, track_id, contact, width, height in zip(detections.tolist(), track_ids, contacts,
                                                     widths, heights):
        if not np.all(np.isfinite(contact)):
            continue
        ground = Detection3D(header=header, id=track_id)
        ground.bbox.center.position.x, ground.bbox.center.position.y = (float(contact[0]),
                                                                        float(contact[1]))
        ground.bbox.center.orientation.w = 1.0
        ground.bbox.size.y = float(width) if np.isfinite(width) else 0.0
        ground.bbox.size.z = float(height) if np.isfinite(height) and height > 0 else 0.0
        hypothesis = ObjectHypothesisWithPose()
        hypothesis.hypothesis.class_id = str(int(row[5]))
        hypothesis.hypothesis.score = float(row[4])
        hypothesis.pose.pose.position = ground.bbox.center.position
        hypothesis.pose.pose.orientation.w = 1.0
        ground.results.append(hypothesis)
        message.detections.append(ground)
    return message
