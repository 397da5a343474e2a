"""
The detection chain without a server.

The served detection graph (built from the shipped weights, run with onnxruntime; it takes the
frame itself), checked against an independent reference: the Python letterbox
(triton_perception.frames.frame_preprocessing), the upstream network and a numpy decode and NMS
(test/support/reference_detection.py).

The server tests (test_ensembles.py) then only need to check the wiring.
"""
from __future__ import annotations

from pathlib import Path
from typing import Callable

import cv2
import numpy as np
import onnx
import pytest

from support import reference_detection as detection
from support.checkout import shared_path
from support.detection_references import (assert_matches_reference, BUS_REFERENCE, differences,
                                          make_reference, ZIDANE_REFERENCE)
from support.sample_images import read_rgb
from support.served_graphs import make_detector, served_detection_graph
from triton_perception.frames import frame_preprocessing as preprocessing
from triton_perception.graphs.detection_graph import (build_detection_graph, HeadLayoutError,
                                                      inspect_head, MAX_OUTPUT)


@pytest.fixture(scope='module')
def served_graph(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Return the served detection graph, built once per module."""
    return served_detection_graph(tmp_path_factory.mktemp('graph'))


@pytest.fixture(scope='module')
def detector(served_graph: Path) -> Callable[..., np.ndarray]:
    """Return the served detection graph run in-process, once per module."""
    return make_detector(served_graph.parent)


@pytest.fixture(scope='module')
def reference() -> Callable[..., np.ndarray]:
    """Return the independent reference detector, once per module."""
    return make_reference()


# --- letterbox and its inverse -----------------------------------------------------------

@pytest.mark.parametrize('height, width', [
    (640, 640), (480, 480), (1080, 810), (720, 1280), (100, 2000), (2000, 60), (3, 5000), (1, 1),
])
def test_letterbox_round_trip(height: int, width: int) -> None:
    """
    The image area found in the letterboxed canvas maps back onto the whole original image.

    A bright rectangle inside it maps back onto itself.
    """
    image = np.full((height, width, 3), 40, dtype=np.uint8)
    rect = np.array([width * 0.25, height * 0.4, width * 0.75, height * 0.9])
    x1, y1, x2, y2 = np.round(rect).astype(int)
    image[y1:y2, x1:x2] = 250

    tensor, params = preprocessing.letterbox(image, 640, 640)
    assert tensor.shape == (1, 3, 640, 640) and tensor.dtype == np.uint8
    assert params.dtype == np.float32 and params.shape == (6,)
    assert tuple(params[4:]) == (width, height)

    canvas = tensor[0, 0]
    content = np.argwhere(canvas != preprocessing.PAD_VALUE)
    content_box = np.array([[content[:, 1].min(), content[:, 0].min(),
                             content[:, 1].max() + 1, content[:, 0].max() + 1]], dtype=np.float64)
    np.testing.assert_allclose(detection.undo_letterbox(content_box, params)[0],
                               [0, 0, width, height], atol=1e-3)
    # The padding is split evenly, within the one pixel YOLOv5's rounding rule allows.
    assert abs(content_box[0, 0] - (640 - content_box[0, 2])) <= 1
    assert abs(content_box[0, 1] - (640 - content_box[0, 3])) <= 1

    # The rectangle check needs the rectangle to survive resizing (only 3x5000 squashes it).
    if min(params[0] * (x2 - x1), params[1] * (y2 - y1)) >= 4:
        bright = np.argwhere(canvas > 200)
        bright_box = np.array([[bright[:, 1].min(), bright[:, 0].min(),
                                bright[:, 1].max() + 1, bright[:, 0].max() + 1]], dtype=np.float64)
        # Linear resampling blurs each edge by about one canvas pixel.
        tolerance = 1.5 / min(params[0], params[1])
        np.testing.assert_allclose(detection.undo_letterbox(bright_box, params)[0],
                                   [x1, y1, x2, y2], atol=tolerance)


def test_letterbox_keeps_pixels_and_pads_grey() -> None:
    """uint8 to the graph, which scales to [0, 1] itself."""
    tensor, _ = preprocessing.letterbox(np.full((10, 20, 3), 255, dtype=np.uint8), 64, 64)
    assert tensor.max() == 255 and tensor.min() == 114


@pytest.mark.parametrize('image, message', [
    (np.zeros((0, 5, 3), dtype=np.uint8), 'empty'),
    (np.zeros((5, 0, 3), dtype=np.uint8), 'empty'),
    (np.zeros((5, 5, 4), dtype=np.uint8), r'\[H, W, 3\]'),
    (np.zeros((5, 5), dtype=np.uint8), r'\[H, W, 3\]'),
    (np.zeros((5, 5, 3), dtype=np.float32), 'uint8'),
])
def test_letterbox_rejects_bad_images(image: np.ndarray, message: str) -> None:
    """An empty, non-RGB or non-uint8 image is a ValueError saying what is wrong with it."""
    with pytest.raises(ValueError, match=message):
        preprocessing.letterbox(image, 640, 640)


def test_undo_letterbox_clips_to_image() -> None:
    """A box mapped back from the canvas is clipped to the image: no detection leaves the frame."""
    params = np.array([0.5, 0.5, 0, 140, 1280, 720], dtype=np.float32)
    boxes = np.array([[-10, 100, 700, 700]], dtype=np.float32)
    np.testing.assert_allclose(detection.undo_letterbox(boxes, params), [[0, 0, 1280, 720]])


# --- score decoding and NMS ----------------------------------------------------------------

def test_candidates_multiply_objectness_and_class_score() -> None:
    """
    A candidate's score is objectness times its best class score, kept from the threshold up.

    Its centre-size box becomes corners.
    """
    rows = np.zeros((1, 3, 8), dtype=np.float32)
    rows[0, 0] = [100, 100, 20, 40, 0.9, 0.1, 0.5, 0.2]   # 0.45 for class 1: kept
    rows[0, 1] = [200, 200, 10, 10, 0.3, 0.9, 0.1, 0.1]   # 0.27 for class 0: kept
    rows[0, 2] = [300, 300, 10, 10, 0.5, 0.4, 0.4, 0.4]   # 0.20: below threshold
    boxes, scores, class_ids = detection.candidates(rows, 0.25)
    np.testing.assert_allclose(boxes, [[90, 80, 110, 120], [195, 195, 205, 205]])
    np.testing.assert_allclose(scores, [0.45, 0.27], rtol=1e-6)
    assert class_ids.tolist() == [1, 0]


def brute_force_nms(boxes: np.ndarray, scores: np.ndarray, class_ids: np.ndarray,
                    iou_threshold: float) -> list[int]:
    """Textbook O(n^2) greedy NMS: keep a box unless a kept, better box of its class overlaps it."""
    def iou(a: np.ndarray, b: np.ndarray) -> float:
        inter = (max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
                 * max(0.0, min(a[3], b[3]) - max(a[1], b[1])))
        union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
        return inter / union

    kept: list[int] = []
    for i in sorted(range(len(scores)), key=lambda k: -scores[k]):
        if all(class_ids[j] != class_ids[i] or iou(boxes[i], boxes[j]) <= iou_threshold
               for j in kept):
            kept.append(i)
    return kept


@pytest.mark.parametrize('seed', range(5))
@pytest.mark.parametrize('iou_threshold', [0.3, 0.45, 0.7])
def test_nms_matches_brute_force(seed: int, iou_threshold: float) -> None:
    """The reference NMS keeps what textbook greedy NMS keeps, in its order, up to the maximum."""
    rng = np.random.default_rng(seed)
    count = 300
    # Boxes clustered around a few centres so that many overlap.
    centres = rng.uniform(50, 590, size=(8, 2))[rng.integers(0, 8, count)]
    xy = centres + rng.normal(0, 12, size=(count, 2))
    wh = rng.uniform(20, 120, size=(count, 2))
    boxes = np.concatenate([xy - wh / 2, xy + wh / 2], axis=1)
    scores = rng.uniform(0.25, 1.0, size=count)
    class_ids = rng.integers(0, 3, size=count)

    expected = brute_force_nms(boxes, scores, class_ids, iou_threshold)
    assert 5 < len(expected) < count  # the case really exercises suppression
    kept = detection.nms(boxes, scores, class_ids, iou_threshold, max_detections=count)
    assert kept.tolist() == expected
    kept = detection.nms(boxes, scores, class_ids, iou_threshold, max_detections=5)
    assert kept.tolist() == expected[:5]


def test_nms_keeps_overlapping_boxes_of_different_classes() -> None:
    """NMS suppresses an overlapping box of its own class only: a car may overlap a person."""
    boxes = np.array([[0, 0, 100, 100], [1, 1, 101, 101]], dtype=np.float32)
    scores = np.array([0.9, 0.8])
    assert detection.nms(boxes, scores, np.array([0, 1]), 0.45, 10).tolist() == [0, 1]
    assert detection.nms(boxes, scores, np.array([2, 2]), 0.45, 10).tolist() == [0]


def test_postprocess_of_nothing_is_an_empty_table() -> None:
    """A prediction with nothing in it is an empty [0, 6] float32 table, not an error."""
    prediction = np.zeros((1, 25200, 85), dtype=np.float32)
    params = np.array([1, 1, 0, 0, 640, 640], dtype=np.float32)
    detections = detection.postprocess(prediction, params, 0.25, 0.45, 100)
    assert detections.shape == (0, 6) and detections.dtype == np.float32


def test_postprocess_drops_boxes_lying_in_the_padding() -> None:
    """A box lying wholly in the letterbox padding is dropped: it holds nothing of the image."""
    prediction = np.zeros((1, 2, 85), dtype=np.float32)
    prediction[0, 0, :6] = [320, 320, 100, 100, 0.9, 1.0]  # on the image
    prediction[0, 1, :6] = [320, 40, 100, 40, 0.9, 1.0]    # entirely in the top padding
    params = np.array([0.5, 0.5, 0, 140, 1280, 720], dtype=np.float32)
    detections = detection.postprocess(prediction, params, 0.25, 0.45, 100)
    np.testing.assert_allclose(detections[:, :4], [[540, 260, 740, 460]])


@pytest.mark.parametrize('given, same_as', [
    ({'score': -0.1}, {'score': 0.0}), ({'score': 1.5}, {'score': 1.0}),
    ({'iou': 2.0}, {'iou': 1.0}), ({'iou': -1.0}, {'iou': 0.0}),
    ({'max_det': -1}, {'max_det': 0}), ({'max_det': MAX_OUTPUT + 50}, {'max_det': MAX_OUTPUT}),
])
def test_the_graph_clamps_out_of_range_thresholds(detector, given: dict, same_as: dict) -> None:
    """
    The request contract: thresholds outside their range act as the nearest bound.

    The same in both profiles, since the served graph does it (a TensorRT engine cannot refuse a
    request); detection_node refuses such parameters before they reach a request.
    """
    bus = read_rgb('bus.jpg')
    np.testing.assert_array_equal(detector(bus, **given), detector(bus, **same_as))


# --- the served graph ------------------------------------------------------------------------

def real_frames() -> list[tuple[str, np.ndarray]]:
    """Return the repository's images: bus, zidane, the six road frames and every 4th clip frame."""
    frames = [(name, read_rgb(name)) for name in ('bus.jpg', 'zidane.jpg')]
    road = sorted(shared_path('data', 'road', 'bdd').glob('*.jpg'))
    assert len(road) == 6, road
    frames += [(path.name, cv2.cvtColor(cv2.imread(str(path)), cv2.COLOR_BGR2RGB))
               for path in road]
    capture = cv2.VideoCapture(str(shared_path('data', 'videos', 'solidWhiteRight.mp4')))
    index = 0
    while True:
        ok, bgr = capture.read()
        if not ok:
            break
        if index % 4 == 0:
            frames.append((f'clip frame {index}', cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB)))
        index += 1
    capture.release()
    assert index == 221
    return frames


@pytest.mark.slow
def test_the_graph_letterbox_changes_no_detection(detector, reference) -> None:
    """
    Must not change: the graph's letterbox against the Python letterbox of the former step.

    On the repository's images (bus, zidane, the road frames, every 4th clip frame): the same
    classes, boxes within 1 px, scores within 0.01. The graph's resize differs from cv2's
    fixed-point one by at most one level on some pixels (none for 2:1 and 3:1 reductions), so a
    few detections move further: those are counted and listed, and must stay at most 1 % of all
    (2 of 316 measured: both on 960 x 540 clip frames, a 1.5:1 reduction; docs/models.md).
    """
    boxes, crossings, beyond = 0, [], []
    for name, rgb in real_frames():
        theirs = reference(rgb)
        crossed, moved = differences(detector(rgb), theirs, name)
        crossings += crossed
        beyond += moved
        boxes += len(theirs)
    print(f'\n{boxes} detections compared; {len(crossings)} cross the score threshold because '
          f'of the resize:\n' + '\n'.join(crossings) + f'\n{len(beyond)} differ beyond 1 px / '
          '0.01:\n' + '\n'.join(beyond))
    assert boxes > 200  # the comparison covered real detections (316 here)
    assert len(crossings) + len(beyond) <= boxes // 100, (crossings, beyond)


def test_graph_build_is_deterministic(served_graph: Path, tmp_path: Path) -> None:
    """Building the graph twice gives the same bytes: a rebuilt repository serves the same model."""
    again = tmp_path / 'again.onnx'
    build_detection_graph(shared_path('models', 'yolov5n', 'yolov5n.onnx'), again)
    assert again.read_bytes() == served_graph.read_bytes()


def test_served_graph_interface(served_graph: Path) -> None:
    """
    The served graph has the inputs and outputs detection_node sends and reads.

    A uint8 HxWx3 frame and the three thresholds in, the padded detections and their count out.
    """
    model = onnx.load(str(served_graph))
    inputs = {tensor.name: tensor.type.tensor_type.elem_type for tensor in model.graph.input}
    image = model.graph.input[0]
    frame = [dim.dim_param or dim.dim_value for dim in image.type.tensor_type.shape.dim]
    assert (image.name, frame) == ('image', ['height', 'width', 3])
    assert inputs == {'image': onnx.TensorProto.UINT8,
                      'score_threshold': onnx.TensorProto.FLOAT,
                      'iou_threshold': onnx.TensorProto.FLOAT,
                      'max_detections': onnx.TensorProto.INT32}
    outputs = {tensor.name: [dim.dim_value for dim in tensor.type.tensor_type.shape.dim]
               for tensor in model.graph.output}
    assert outputs == {'detections': [MAX_OUTPUT, 6], 'num_detections': [1]}


def test_head_layout_is_read_from_the_file() -> None:
    """The head's layout, classes, boxes and input size are read from the ONNX file, not assumed."""
    head = inspect_head(onnx.load(str(shared_path('models', 'yolov5n', 'yolov5n.onnx'))))
    assert (head.layout, head.classes, head.boxes, head.input_width, head.input_height) == (
        'yolov5', 80, 25200, 640, 640)


def test_an_unsupported_head_is_a_clear_error() -> None:
    """A head of neither layout is refused naming its output's shape and the supported layouts."""
    model = onnx.load(str(shared_path('models', 'yolov5n', 'yolov5n.onnx')))
    output = model.graph.output[0].type.tensor_type.shape
    output.dim[2].dim_value = 3  # [1, 25200, 3]: neither layout
    with pytest.raises(HeadLayoutError, match=r'output0 \[1, 25200, 3\].*supported: yolov5'):
        inspect_head(model)


# --- the whole chain on real images --------------------------------------------------------

def test_bus_matches_reference(detector) -> None:
    """The served graph finds on bus.jpg what the README's reference lists."""
    assert_matches_reference(detector(read_rgb('bus.jpg')), BUS_REFERENCE)


def test_zidane_matches_reference(detector) -> None:
    """The served graph finds on zidane.jpg what the README's reference lists."""
    assert_matches_reference(detector(read_rgb('zidane.jpg')), ZIDANE_REFERENCE)


def test_thresholds_change_results(detector) -> None:
    """The request's score threshold and maximum count change what the graph returns."""
    bus = read_rgb('bus.jpg')
    assert len(detector(bus, score=0.6)) == 3
    assert len(detector(bus, max_det=2)) == 2
    assert len(detector(bus, score=0.1)) > len(BUS_REFERENCE)


@pytest.mark.parametrize('shape', [(480, 640, 3), (1, 1, 3), (7, 3000, 3)])
def test_uniform_grey_has_no_detections(detector, shape: tuple) -> None:
    """A uniform grey frame of any size, a single pixel or a strip included, has no detections."""
    detections = detector(np.full(shape, 128, dtype=np.uint8))
    assert detections.shape == (0, 6)
