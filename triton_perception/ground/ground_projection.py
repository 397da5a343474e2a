"""
Lane polylines, drivable-area masks and boxes in image pixels -> points on the ground.

Pure numpy on top of GroundCamera; the messages are built in ground/ground_messages.py.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from triton_perception.ground.camera import GroundCamera
from triton_perception.outputs import lane_ids

# Ground lane points; the published PointCloud2 layout (docs/topics.md) is this dtype's.
GROUND_POINT_DTYPE = np.dtype({
    'names': ['x', 'y', 'z', 'lane_id', 'side'],
    'formats': ['<f4', '<f4', '<f4', '<u2', 'i1'],
    'offsets': [0, 4, 8, 12, 14],
    'itemsize': 16,
})
FREE, OCCUPIED, UNKNOWN = 0, 100, -1


def ground_lane_points(camera: GroundCamera, lanes: NDArray[np.float32],
                       sides: NDArray[np.int8]) -> NDArray[np.void]:
    """
    Project LANES [L, P, 2] + LANE_SIDES [L] onto the ground as GROUND_POINT_DTYPE points.

    Lane by lane in polyline order; points that do not meet the ground are left out.
    """
    count = len(lanes)
    if count == 0 or lanes.ndim != 3:
        return np.zeros(0, dtype=GROUND_POINT_DTYPE)
    per_lane = lanes.shape[1]
    ground, valid = camera.to_ground(lanes.reshape(-1, 2))
    points = np.zeros(count * per_lane, dtype=GROUND_POINT_DTYPE)
    points['x'], points['y'], points['z'] = ground[:, 0], ground[:, 1], ground[:, 2]
    points['lane_id'] = np.repeat(lane_ids(lanes), per_lane)
    points['side'] = np.repeat(np.asarray(sides).astype(np.int8), per_lane)
    kept: NDArray[np.void] = points[valid]
    return kept


@dataclass(frozen=True, kw_only=True)
class GridSpec:
    """A ground grid ahead of target_frame's origin: x in [x_min, x_min + length), y centred."""

    length: float = 40.0
    width: float = 20.0
    resolution: float = 0.2
    x_min: float = 0.0

    @property
    def shape(self) -> tuple[int, int]:
        """(cells along y = OccupancyGrid height, cells along x = width)."""
        return (int(round(self.width / self.resolution)),
                int(round(self.length / self.resolution)))

    @property
    def origin(self) -> tuple[float, float]:
        """Return the (x, y) of the grid's corner cell (0, 0), as OccupancyGrid.info.origin."""
        return self.x_min, -self.shape[0] * self.resolution / 2.0

    def cell_centres(self) -> NDArray[np.float64]:
        """[rows * cols, 3] centres on z = 0, row-major (x fastest) like OccupancyGrid.data."""
        rows, cols = self.shape
        x0, y0 = self.origin
        xs = x0 + (np.arange(cols) + 0.5) * self.resolution
        ys = y0 + (np.arange(rows) + 0.5) * self.resolution
        grid_x, grid_y = np.meshgrid(xs, ys)
        return np.stack([grid_x.ravel(), grid_y.ravel(), np.zeros(grid_x.size)], axis=1)


class GridSampler:
    """
    Where each grid cell's centre falls in the mask.

    Computed once per camera, grid and mask size, so that each frame costs one gather.
    """

    def __init__(self, camera: GroundCamera, grid: GridSpec, mask_shape: tuple[int, int]) -> None:
        """
        Project every cell centre into the image and keep the ones that land inside the mask.

        `mask_shape` is the (height, width) in px of the masks to sample, which may differ from the
        camera's calibrated size: pixels are scaled to it. Cells behind the camera or outside the
        mask are not visible.
        """
        self.key = (id(camera), grid, mask_shape)
        height, width = mask_shape
        pixels, in_front = camera.to_image(grid.cell_centres())
        sx = width / camera.intrinsics.width if camera.intrinsics.width else 1.0
        sy = height / camera.intrinsics.height if camera.intrinsics.height else 1.0
        with np.errstate(invalid='ignore'):
            u = np.floor(pixels[:, 0] * sx)
            v = np.floor(pixels[:, 1] * sy)
            visible = in_front & (u >= 0) & (u < width) & (v >= 0) & (v < height)
        self.visible = visible
        self.flat_index = (v[visible] * width + u[visible]).astype(np.int64)
        self.size = len(visible)
        self.shape = grid.shape

    def values(self, mask: NDArray[np.uint8]) -> NDArray[np.int8]:
        """Mask (nonzero = drivable) -> int8 cells: 0 drivable, 100 not, -1 out of view."""
        cells = np.full(self.size, UNKNOWN, dtype=np.int8)
        cells[self.visible] = np.where(mask.reshape(-1)[self.flat_index] > 0, FREE, OCCUPIED)
        return cells


def ground_boxes(camera: GroundCamera, detections: NDArray[np.float32 | np.float64]
                 ) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """
    Place DETECTIONS [N, 6] (x1, y1, x2, y2, score, class) on the ground.

    Returns (contact [N, 3], ground width [N], height [N]); NaN rows where the bottom edge does not
    meet the ground.

    The contact point is where the box's bottom centre meets the ground; the width is the
    ground distance between the bottom corners' rays; the height is where the top centre's ray
    passes above the contact point. All assume an unoccluded object standing on the road whose
    box is not cut by the image border.
    """
    if len(detections) == 0:
        return np.zeros((0, 3)), np.zeros(0), np.zeros(0)
    x1, top, x2, bottom = (detections[:, column] for column in range(4))
    centre_u = (x1 + x2) / 2
    pixels = np.concatenate([np.stack([centre_u, bottom], axis=1),
                             np.stack([x1, bottom], axis=1), np.stack([x2, bottom], axis=1)])
    points, _valid = camera.to_ground(pixels)
    count = len(detections)
    centre, left, right = points[:count], points[count:2 * count], points[2 * count:]
    origin = camera.mounting.origin
    top_rays = camera.rays(np.stack([centre_u, top], axis=1))
    with np.errstate(divide='ignore', invalid='ignore'):
        reach = np.linalg.norm(centre[:, :2] - origin[:2], axis=1) / np.linalg.norm(
            top_rays[:, :2], axis=1)
        height = origin[2] + reach * top_rays[:, 2]
    return centre, np.linalg.norm(left[:, :2] - right[:, :2], axis=1), height


def ego_lane(points: NDArray[np.void], reach: float = 20.0) -> tuple[float, float] | None:
    """
    Measure the ego lane's width and its centre's lateral offset, both at x = 0.

    Returns (width, lateral offset of target_frame's origin from the lane centre, + = left), or None
    without both lines. Each ego line (side -1, +1) is fitted as y = a x + b over its points closer
    than `reach`, which is where flat ground holds best.
    """
    intercepts = []
    for side in (-1, 1):
        line = points[(points['side'] == side) & (points['x'] < reach)]
        if len(line) < 2 or np.ptp(line['x']) < 1.0:
            return None
        intercepts.append(np.polyfit(line['x'].astype(np.float64),
                                     line['y'].astype(np.float64), 1)[1])
    left, right = intercepts
    return float(left - right), float(-(left + right) / 2.0)
