"""Turn an RGB frame into a model input tensor: letterbox for YOLOv5, plain resize for TwinLiteNet.

Plain numpy/OpenCV, free of Triton, so that the unit tests and the package's benchmark run
exactly the code the server runs. yolov5_preprocess and lane_preprocess share this file
(lane_preprocess/1 links to it); each step's config names its function.

The letterbox parameters travel to the NMS step as one float32 vector laid out as
``[scale_x, scale_y, pad_left, pad_top, image_width, image_height]``: model-input
coordinates map back to the original image as ``x = (x_in - pad_left) / scale_x`` (same in y).
Two scales rather than one because the resized size is rounded to whole pixels, which for very
thin images makes the x and y ratios differ noticeably.
"""
import cv2
import numpy as np

PAD_VALUE = 114  # the grey YOLOv5 was trained with in padded borders


def check_image(image: np.ndarray) -> None:
    """Reject anything but a non-empty HxWx3 uint8 frame, with a message a client can act on."""
    if image.dtype != np.uint8:
        raise ValueError(f'IMAGE must be uint8, got {image.dtype}')
    if image.ndim != 3 or image.shape[2] != 3:
        raise ValueError(f'IMAGE must be [H, W, 3] RGB, got shape {list(image.shape)}')
    if image.shape[0] == 0 or image.shape[1] == 0:
        raise ValueError(f'IMAGE is empty: shape {list(image.shape)}')


def letterbox(image: np.ndarray, width: int, height: int) -> tuple[np.ndarray, np.ndarray]:
    """Resize keeping aspect ratio, centre on a PAD_VALUE canvas, scale to [0, 1], NCHW.

    Follows YOLOv5's own letterbox (rounded resized size, pad split with the -0.1/+0.1 rule)
    so scores and boxes match the published reference.
    Returns the [1, 3, height, width] float32 tensor and the float32 letterbox vector.
    """
    check_image(image)
    image_height, image_width = image.shape[:2]
    ratio = min(width / image_width, height / image_height)
    resized_width = min(width, max(1, round(image_width * ratio)))
    resized_height = min(height, max(1, round(image_height * ratio)))
    pad_left = int(round((width - resized_width) / 2 - 0.1))
    pad_top = int(round((height - resized_height) / 2 - 0.1))

    if (resized_width, resized_height) != (image_width, image_height):
        image = cv2.resize(image, (resized_width, resized_height), interpolation=cv2.INTER_LINEAR)
    canvas = np.full((height, width, 3), PAD_VALUE, dtype=np.uint8)
    canvas[pad_top:pad_top + resized_height, pad_left:pad_left + resized_width] = image

    tensor = np.empty((1, 3, height, width), dtype=np.float32)
    np.multiply(canvas.transpose(2, 0, 1), np.float32(1.0 / 255.0), out=tensor[0])
    params = np.array(
        [resized_width / image_width, resized_height / image_height, pad_left, pad_top,
         image_width, image_height],
        dtype=np.float32,
    )
    return tensor, params


def resize_normalize(image: np.ndarray, width: int, height: int) -> tuple[np.ndarray, np.ndarray]:
    """Return the [1, 3, height, width] float32 tensor and the int32 [image_height, image_width].

    TwinLiteNet was trained on plainly resized frames (no letterbox, no mean/std), so the image
    is stretched to the input size and only scaled to [0, 1]. The original size travels to the postprocess step, which maps lanes and the drivable area
    back to it.
    """
    check_image(image)
    image_size = np.array(image.shape[:2], dtype=np.int32)
    if image.shape[:2] != (height, width):
        image = cv2.resize(image, (width, height), interpolation=cv2.INTER_LINEAR)
    tensor = np.empty((1, 3, height, width), dtype=np.float32)
    np.multiply(image.transpose(2, 0, 1), np.float32(1.0 / 255.0), out=tensor[0])
    return tensor, image_size
