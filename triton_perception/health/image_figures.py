"""
What one frame says about its camera: texture per region, sharpness, dark and saturated pixels.

Everything is measured on a small grey copy of the frame: every Nth pixel of the green channel
(or the only one), at most SMALL_WIDTH wide. Taking it costs a strided copy instead of a
conversion and a resize of the whole frame. Any array a node can hold is accepted (grey or
colour, 8 or 16 bit, float, 1x1, empty): a bad frame gives bad figures, never an exception.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import cast
import zlib

import cv2
import numpy as np
from numpy.typing import NDArray

# Green carries most of the luminance of RGB, BGR and Bayer-demosaiced frames alike.
LUMINANCE_CHANNEL = 1
SMALL_WIDTH = 240
GRID = (6, 8)  # rows x columns of regions judged for texture
CELL = 6       # each region is judged on CELL x CELL area-averaged pixels: noise averages out
# Standard deviation (grey levels) of a region's averaged pixels under which it has no texture:
# a covered lens with sensor noise up to sigma 4 measures < 1.1; the flattest regions of the
# shipped clip and day road frames (sky, tarmac) 1.5-5, a night sky 0.5-1 (docs/parameters.md).
TEXTURE_LEVEL = 1.2
DARK_LEVEL = 20     # grey level (0-255) at or below which a pixel counts as near black
GLARE_LEVEL = 250   # grey level at or above which a pixel counts as saturated


@dataclass(frozen=True)
class FrameFigures:
    """
    The health figures of one frame.

    `blocked_fraction`: regions of the GRID without texture, as a fraction of all regions.
    `sharpness`: variance of the Laplacian of the small grey copy over the variance of the copy
    itself, so that a darker or brighter frame of the same scene is as sharp.
    `dark_fraction`, `glare_fraction`: pixels near black, and saturated, as fractions.
    `digest`: CRC-32 of the small copy: equal digests are (near enough) identical frames.
    """

    blocked_fraction: float
    sharpness: float
    dark_fraction: float
    glare_fraction: float
    digest: int


def as_uint8(image: NDArray[np.generic]) -> NDArray[np.uint8]:
    """Return `image` as uint8 grey levels: 16-bit scaled down, other types clipped to 0-255."""
    if image.dtype == np.uint8:
        return cast(NDArray[np.uint8], image)  # the dtype says so; mypy does not narrow by it
    if image.dtype == np.uint16:
        return (cast(NDArray[np.uint16], image) >> 8).astype(np.uint8)
    values = np.nan_to_num(image.astype(np.float32))
    if values.size and float(values.max()) <= 1.0:  # a float image in [0, 1]
        values = values * 255.0
    return np.clip(values, 0, 255).astype(np.uint8)


def small_grey(image: NDArray[np.generic], width: int = SMALL_WIDTH) -> NDArray[np.uint8]:
    """
    Return a grey uint8 copy of `image`, every Nth pixel, at most `width` pixels wide.

    `image`: [H, W] or [H, W, C]; of C channels the green one (index 1) is taken, or the only
    one.
    """
    pixels = np.asarray(image)
    if pixels.ndim == 3:
        pixels = pixels[:, :, min(LUMINANCE_CHANNEL, pixels.shape[2] - 1)]
    if pixels.ndim != 2 or pixels.size == 0:
        return np.zeros((0, 0), dtype=np.uint8)
    step = max(1, -(-pixels.shape[1] // width))
    return np.ascontiguousarray(as_uint8(pixels[::step, ::step]))


def region_contrast(grey: NDArray[np.uint8], grid: tuple[int, int] = GRID) -> NDArray[np.float32]:
    """
    Return each region's contrast: the standard deviation of its area-averaged pixels.

    `grid`: rows x columns of regions; each region is averaged down to CELL x CELL pixels first.
    """
    rows, columns = grid
    coarse = cv2.resize(grey, (columns * CELL, rows * CELL),
                        interpolation=cv2.INTER_AREA).astype(np.float32)
    size = (columns, rows)
    mean = cv2.resize(coarse, size, interpolation=cv2.INTER_AREA)
    square = cv2.resize(coarse * coarse, size, interpolation=cv2.INTER_AREA)
    contrast: NDArray[np.float32] = np.sqrt(np.maximum(square - mean * mean, 0.0))
    return contrast


def judged_figures(contrast: NDArray[np.float32], edge_spread: float, grey_spread: float,
                   dark_fraction: float, glare_fraction: float, digest: int) -> FrameFigures:
    """
    Return a frame's figures from its statistics, wherever they were measured.

    `contrast`: each region's (region_contrast); `edge_spread`, `grey_spread`: standard
    deviations of the small copy's Laplacian and of the copy. The node computes them itself
    (frame_figures) or reads them from the health graph (frame_statistics).
    """
    return FrameFigures(
        blocked_fraction=float(np.count_nonzero(contrast < TEXTURE_LEVEL)) / contrast.size,
        sharpness=(edge_spread / max(grey_spread, 1.0)) ** 2,
        dark_fraction=dark_fraction, glare_fraction=glare_fraction, digest=digest)


def frame_figures(image: NDArray[np.generic], width: int = SMALL_WIDTH) -> FrameFigures:
    """Return the health figures of `image` (any array a node holds; see `small_grey`)."""
    grey = small_grey(image, width)
    if grey.size == 0:
        return FrameFigures(1.0, 0.0, 1.0, 0.0, 0)
    _mean, edges = cv2.meanStdDev(cv2.Laplacian(grey, cv2.CV_16S, ksize=1))
    _mean, spread = cv2.meanStdDev(grey)
    return judged_figures(
        region_contrast(grey), float(edges[0, 0]), float(spread[0, 0]),
        dark_fraction=float(np.count_nonzero(grey <= DARK_LEVEL)) / grey.size,
        glare_fraction=float(np.count_nonzero(grey >= GLARE_LEVEL)) / grey.size,
        digest=zlib.crc32(grey.tobytes()))
