"""
The frame preprocessing of the served graphs, in numpy and OpenCV: the reference they must match.

The served graphs letterbox or resize the frame themselves (graphs/frame_input.py), so nothing
here runs in the request path. This is what those graphs are tested against (YOLOv5's own
letterbox rules, cv2.INTER_LINEAR), and the geometry the clients use to map model-input pixels
back to the frame (lanes/decode.py).

The letterbox vector is ``[scale_x, scale_y, pad_left, pad_top, image_width, image_height]``:
model-input coordinates map back to the original image as ``x = (x_in - pad_left) / scale_x``
(same in y). Two scales rather than one because the resized size is rounded to whole pixels,
which for very thin images makes the x and y ratios differ noticeably.
"""
from __future__ import annotations

from typing import cast

import cv2
import numpy as np
from numpy.typing import NDArray

PAD_VALUE = 114  # the grey YOLOv5 was trained with in padded borders


def check_image(image: NDArray[np.uint8]) -> None:
    """Reject anything but a non-empty HxWx3 uint8 frame, with a message a client can act on."""
    if image.dtype != np.uint8:
        raise ValueError(f'IMAGE must be uint8, got {image.dtype}')
    if image.ndim != 3 or image.shape[2] != 3:
        raise ValueError(f'IMAGE must be [H, W, 3] RGB, got shape {list(image.shape)}')
    if image.shape[0] == 0 or image.shape[1] == 0:
        raise ValueError(f'IMAGE is empty: shape {list(image.shape)}')


def letterbox_geometry(image_width: int, image_height: int, width: int,
                       height: int) -> tuple[int, int, int, int]:
    """
    Return YOLOv5's letterbox of an image into width x height.

    (resized_width, resized_height, pad_left, pad_top): the resized size rounded (half to even)
    and the pad split with the -0.1/+0.1 rule, so scores and boxes match the published reference.
    """
    ratio = min(width / image_width, height / image_height)
    resized_width = min(width, max(1, round(image_width * ratio)))
    resized_height = min(height, max(1, round(image_height * ratio)))
    pad_left = int(round((width - resized_width) / 2 - 0.1))
    pad_top = int(round((height - resized_height) / 2 - 0.1))
    return resized_width, resized_height, pad_left, pad_top


def letterbox(image: NDArray[np.uint8], width: int,
              height: int) -> tuple[NDArray[np.uint8], NDArray[np.float32]]:
    """
    Resize keeping aspect ratio, centre on a PAD_VALUE canvas, NCHW uint8.

    Returns the [1, 3, height, width] uint8 tensor and the float32 letterbox vector.
    """
    check_image(image)
    image_height, image_width = image.shape[:2]
    resized_width, resized_height, pad_left, pad_top = letterbox_geometry(
        image_width, image_height, width, height)
    if (resized_width, resized_height) != (image_width, image_height):
        # OpenCV's stubs return any integer or float array; a uint8 image stays uint8.
        image = cast(NDArray[np.uint8], cv2.resize(
            image, (resized_width, resized_height), interpolation=cv2.INTER_LINEAR))
    canvas = np.full((height, width, 3), PAD_VALUE, dtype=np.uint8)
    canvas[pad_top:pad_top + resized_height, pad_left:pad_left + resized_width] = image
    tensor = np.ascontiguousarray(canvas.transpose(2, 0, 1))[None]
    params = np.array([resized_width / image_width, resized_height / image_height, pad_left,
                       pad_top, image_width, image_height], dtype=np.float32)
    return tensor, params


def resize_frame(image: NDArray[np.uint8], width: int, height: int) -> NDArray[np.uint8]:
    """Return the [1, 3, height, width] uint8 tensor of the frame, plainly resized."""
    check_image(image)
    if image.shape[:2] != (height, width):
        # OpenCV's stubs return any integer or float array; a uint8 image stays uint8.
        image = cast(NDArray[np.uint8], cv2.resize(
            image, (width, height), interpolation=cv2.INTER_LINEAR))
    tensor: NDArray[np.uint8] = np.ascontiguousarray(image.transpose(2, 0, 1))[None]
    return tensor


def cropped_top_rows(frame_height: int, top_crop: float) -> int:
    """Rows a lane model's top crop removes: round(top_crop x height), at most height - 1."""
    return min(frame_height - 1, int(round(top_crop * frame_height)))


def lane_frame(image: NDArray[np.uint8], width: int, height: int, top_crop: float = 0.0,
               resize: str = 'stretch') -> NDArray[np.uint8]:
    """
    Return a lane model's input.

    The frame's top `top_crop` cut off, the rest stretched (or letterboxed) to the model's size, as
    uint8 [1, 3, height, width].
    """
    check_image(image)
    image = image[cropped_top_rows(image.shape[0], top_crop):]
    if resize == 'letterbox':
        return letterbox(image, width, height)[0]
    return resize_frame(image, width, height)
