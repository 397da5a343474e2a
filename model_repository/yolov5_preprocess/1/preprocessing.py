"""
Turn an RGB frame into a model input tensor: letterbox for YOLOv5, plain resize for TwinLiteNet.

Plain numpy/OpenCV, free of Triton, so that the unit tests and the package's benchmark run
exactly the code the server runs. yolov5_preprocess and lane_preprocess share this file
(lane_preprocess/1 links to it); each step's config names its function.

The detector's model step takes the letterboxed frame as uint8 (its graph casts and scales it:
a quarter of the bytes of a float tensor between the steps) and the letterbox parameters as
one float32 vector laid out as
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


def check_thresholds(score_threshold: float, iou_threshold: float, max_detections: int,
                     most_detections: int) -> None:
    """Reject values that would silently produce nonsense instead of an error."""
    if not 0.0 <= score_threshold <= 1.0:
        raise ValueError(f'score threshold must be in [0, 1], got {score_threshold}')
    if not 0.0 <= iou_threshold <= 1.0:
        raise ValueError(f'IoU threshold must be in [0, 1], got {iou_threshold}')
    if not 0 <= max_detections <= most_detections:
        raise ValueError(f'max detections must be in [0, {most_detections}] (the served graph '
                         f'returns at most {most_detections} rows), got {max_detections}')


def scalar(value, kind):
    """Return a [1] request tensor (or a config default given as text) as a Python number."""
    return kind(np.asarray(value).reshape(-1)[0]) if not isinstance(value, str) else kind(value)


def detection_inputs(image: np.ndarray, width: int, height: int, score_threshold,
                     iou_threshold, max_detections, most_detections) -> tuple[np.ndarray, ...]:
    """
    Everything the detection graph takes.

    The letterboxed uint8 frame, the letterbox vector and the checked thresholds (a request's own
    values, else the config's defaults).
    """
    score, iou = scalar(score_threshold, float), scalar(iou_threshold, float)
    count = scalar(max_detections, int)
    check_thresholds(score, iou, count, scalar(most_detections, int))
    pixels, params = letterbox(image, width, height)
    return (pixels, params, np.array([score], np.float32), np.array([iou], np.float32),
            np.array([count], np.int32))


def letterbox(image: np.ndarray, width: int, height: int) -> tuple[np.ndarray, np.ndarray]:
    """
    Resize keeping aspect ratio, centre on a PAD_VALUE canvas, NCHW uint8.

    Follows YOLOv5's own letterbox (rounded resized size, pad split with the -0.1/+0.1 rule)
    so scores and boxes match the published reference.
    Returns the [1, 3, height, width] uint8 tensor and the float32 letterbox vector.
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

    tensor = np.ascontiguousarray(canvas.transpose(2, 0, 1))[None]
    params = np.array(
        [resized_width / image_width, resized_height / image_height, pad_left, pad_top,
         image_width, image_height],
        dtype=np.float32,
    )
    return tensor, params


def resize_frame(image: np.ndarray, width: int, height: int) -> tuple[np.ndarray]:
    """
    Return the [1, 3, height, width] uint8 tensor of the frame, plainly resized.

    TwinLiteNet was trained on plainly resized frames (no letterbox, no mean/std), so the image
    is stretched to the input size; the model's graph scales it to [0, 1]. The lane geometry
    maps lanes and the drivable area back to the frame, whose size the client knows.
    """
    check_image(image)
    if image.shape[:2] != (height, width):
        image = cv2.resize(image, (width, height), interpolation=cv2.INTER_LINEAR)
    return (np.ascontiguousarray(image.transpose(2, 0, 1))[None],)


def cropped_top_rows(frame_height: int, top_crop: float) -> int:
    """Rows a lane model's top crop removes (lane_models.decode maps points back with it)."""
    return min(frame_height - 1, int(round(top_crop * frame_height)))


def lane_frame(image: np.ndarray, width: int, height: int, top_crop='0',
               resize='stretch') -> tuple[np.ndarray]:
    """
    Return an installed lane model's input.

    The frame's top `top_crop` cut off, the rest stretched (or letterboxed) to the model's size, as
    uint8 [1, 3, height, width]; its graph does the channel order and normalisation.
    """
    check_image(image)
    image = image[cropped_top_rows(image.shape[0], scalar(top_crop, float)):]
    if str(resize) == 'letterbox':
        return (letterbox(image, width, height)[0],)
    return resize_frame(image, width, height)
