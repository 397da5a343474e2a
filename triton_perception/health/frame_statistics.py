"""
A frame's health figures from the health graph's statistics, without touching its pixels.

The per-pixel work of the check (image_figures) runs in a served graph
(graphs/health_graph.py); the node reads its few FP32 numbers and judges them here, with the
thresholds of image_figures. STATISTICS is the one list of the graph's output: the graph is
built from GRAPH_OPTIONS, whose values are image_figures' constants. The digest of frozen
frames is the CRC-32 of the regions' means instead of the small copy's bytes (CRC-32 has no
operators): equal for equal frames; each pixel of the copy weighs about 1 / (the region's
pixels) in its region's mean, far above float32's rounding of it, so one pixel one level
apart changes the digest.
"""
from __future__ import annotations

from typing import TypedDict
import zlib

import numpy as np
from numpy.typing import NDArray

from triton_perception.health.image_figures import (CELL, DARK_LEVEL, FrameFigures, GLARE_LEVEL,
                                                    GRID, judged_figures, LUMINANCE_CHANNEL,
                                                    SMALL_WIDTH)

REGIONS = GRID[0] * GRID[1]
# The graph's output, in order: (name, values); graphs/health_graph.py defines each piece.
STATISTICS: tuple[tuple[str, int], ...] = (
    ('contrast', REGIONS), ('region_mean', REGIONS), ('edge_spread', 1), ('grey_spread', 1),
    ('dark_fraction', 1), ('glare_fraction', 1))
STATISTICS_SIZE = sum(size for _, size in STATISTICS)


class GraphOptions(TypedDict):
    """The health graph builder's keywords (graphs/health_graph.py build_health_graph)."""

    width: int
    channel: int
    grid: tuple[int, int]
    cell: int
    dark_level: int
    glare_level: int
    order: tuple[tuple[str, int], ...]


GRAPH_OPTIONS = GraphOptions(width=SMALL_WIDTH, channel=LUMINANCE_CHANNEL, grid=GRID, cell=CELL,
                             dark_level=DARK_LEVEL, glare_level=GLARE_LEVEL, order=STATISTICS)


def statistics_pieces(values: NDArray[np.generic]) -> dict[str, NDArray[np.float32]]:
    """
    Return the health graph's output split into its named pieces (STATISTICS).

    Raises ValueError when `values` do not hold STATISTICS_SIZE numbers (another graph's).
    """
    flat = np.asarray(values, np.float32).reshape(-1)
    if flat.size != STATISTICS_SIZE:
        raise ValueError(f'health statistics hold {flat.size} values, expected '
                         f'{STATISTICS_SIZE} (a graph built for another layout?)')
    ends = np.cumsum([size for _, size in STATISTICS])
    return {name: flat[end - size:end] for (name, size), end in zip(STATISTICS, ends)}


def figures_from_statistics(values: NDArray[np.generic]) -> FrameFigures:
    """Return the health figures of a frame from the health graph's output for it."""
    pieces = statistics_pieces(values)
    return judged_figures(
        pieces['contrast'], float(pieces['edge_spread'][0]), float(pieces['grey_spread'][0]),
        dark_fraction=float(pieces['dark_fraction'][0]),
        glare_fraction=float(pieces['glare_fraction'][0]),
        digest=zlib.crc32(np.ascontiguousarray(pieces['region_mean']).tobytes()))
