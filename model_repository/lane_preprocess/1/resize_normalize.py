"""Resize an RGB frame into the TwinLiteNet input tensor.

Plain numpy/OpenCV, free of Triton, so that the unit tests and the package's benchmark run
exactly the code the server runs. TwinLiteNet was trained on plainly resized frames (no
letterbox, no mean/std), so the image is stretched to the input size and only scaled to [0, 1].
"""
import cv2
import numpy as np


def check_image(image: np.ndarray) -> None:
    """Reject anything but a non-empty HxWx3 uint8 frame, with a message a client can act on."""
    if image.dtype != np.uint8:
        raise ValueError(f'IMAGE must be uint8, got {image.dtype}')
    if image.ndim != 3 or image.shape[2] != 3:
        raise ValueError(f'IMAGE must be [H, W, 3] RGB, got shape {list(image.shape)}')
    if image.shape[0] == 0 or image.shape[1] == 0:
        raise ValueError(f'IMAGE is empty: shape {list(image.shape)}')


def resize_normalize(image: np.ndarray, width: int, height: int) -> tuple[np.ndarray, np.ndarray]:
    """Return the [1, 3, height, width] float32 tensor and the int32 [image_height, image_width].

    The original size travels to the postprocess step, which maps lanes and the drivable area
    back to it.
    """
    check_image(image)
    image_size = np.array(image.shape[:2], dtype=np.int32)
    if image.shape[:2] != (height, width):
        image = cv2.resize(image, (width, height), interpolation=cv2.INTER_LINEAR)
    tensor = np.empty((1, 3, height, width), dtype=np.float32)
    np.multiply(image.transpose(2, 0, 1), np.float32(1.0 / 255.0), out=tensor[0])
    return tensor, image_size
