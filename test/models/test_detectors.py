"""
Bring your own detector.

Models derived at test time from the shipped yolov5n.onnx with the `onnx` package (nothing
downloaded, nothing committed), installed with `models install --detector`, served in-process and by
a real tritonserver to a real detection_node.
"""
from __future__ import annotations

from pathlib import Path
import subprocess
import sys
from typing import Any, Iterator

import cv2
import numpy as np
import onnx
from onnx import helper, numpy_helper
import pytest
from sensor_msgs.msg import Image
from std_msgs.msg import Header
from vision_msgs.msg import Detection2DArray, LabelInfo

from support import reference_detection
from support.checkout import copy_of_model_repository, node_with_repository, REPO, shared_path
from support.detection_references import differences
from support.published_messages import image_message
from support.ros_helpers import LATCHED, Probe, wait_until
from support.sample_images import read_rgb
from support.served_graphs import graph_detector, session
from triton_perception.frames import frame_preprocessing as preprocessing
from triton_perception.frames.frame_range import frame_range_of, FrameRange
from triton_perception.models.detectors import (DetectorInstallError, install_detector,
                                                installed_detectors)
from triton_perception.serving.server.engines import engine_steps
from triton_perception.serving.server.server_config import ServerConfig
from triton_perception.serving.server.triton_server import TritonServer
from triton_perception.system.processes import free_ports, ros_arguments

THREE = ['person', 'car', 'bus']
COCO_IDS = [0, 2, 5]  # their columns in yolov5n's 80-class head


def derived(tmp_path: Path, kind: str) -> Path:
    """yolov5n with another head: 'three' classes, the 'yolov8' layout, or a 'bad' shape."""
    model = onnx.load(str(shared_path('models', 'yolov5n', 'yolov5n.onnx')))
    graph = model.graph
    for node in graph.node:
        node.output[:] = ['raw_head' if name == 'output0' else name for name in node.output]
    del graph.output[:]

    def constant(name: str, value: np.ndarray) -> str:
        graph.initializer.append(numpy_helper.from_array(value, name))
        return name
    if kind == 'three':
        columns = np.array([0, 1, 2, 3, 4, *(5 + i for i in COCO_IDS)], np.int64)
        graph.node.append(helper.make_node('Gather', ['raw_head', constant('cols', columns)],
                                           ['output0'], axis=2))
        shape = [1, 25200, 5 + len(COCO_IDS)]
    elif kind == 'bad':
        graph.node.append(helper.make_node('Gather', ['raw_head', constant(
            'cols', np.array([0, 1, 2], np.int64))], ['output0'], axis=2))
        shape = [1, 25200, 3]
    else:  # yolov8: [1, 4 + nc, N], objectness folded into the class scores
        def part(start: int, end: int, name: str) -> str:
            graph.node.append(helper.make_node('Slice', [
                'raw_head', constant(f'{name}_s', np.array([start], np.int64)),
                constant(f'{name}_e', np.array([end], np.int64)),
                constant(f'{name}_a', np.array([2], np.int64))], [name]))
            return name
        graph.node.append(helper.make_node('Mul', [part(5, 85, 'classes'),
                                                   part(4, 5, 'objectness')], ['scores']))
        graph.node.append(helper.make_node('Concat', [part(0, 4, 'boxes'), 'scores'],
                                           ['rows'], axis=2))
        graph.node.append(helper.make_node('Transpose', ['rows'], ['output0'], perm=[0, 2, 1]))
        shape = [1, 84, 25200]
    graph.output.append(helper.make_tensor_value_info('output0', onnx.TensorProto.FLOAT, shape))
    path = tmp_path / f'{kind}.onnx'
    onnx.save(model, str(path))
    return path


def labels_file(tmp_path: Path, names: list[str]) -> Path:
    """Return a labels file naming `names`, one a line."""
    path = tmp_path / f'labels_{len(names)}.txt'
    path.write_text('\n'.join(names) + '\n')
    return path


@pytest.fixture(scope='module')
def repository(tmp_path_factory: pytest.TempPathFactory, triton_server: Any) -> Path:
    """Copy the package's installed model repository, which the session server installed."""
    return copy_of_model_repository(tmp_path_factory.mktemp('detectors'))


def served(repository: Path, name: str):
    """Return the installed detector `name`'s served graph, run in-process."""
    return graph_detector(repository / f'{name}_model' / '1' / 'model.onnx')


def frames() -> list[np.ndarray]:
    """Return bus.jpg, zidane.jpg and four frames of the highway clip, as RGB."""
    capture = cv2.VideoCapture(str(shared_path('data', 'videos', 'solidWhiteRight.mp4')))
    clip = []
    for index in range(120):
        ok, bgr = capture.read()
        assert ok
        if index % 30 == 0:
            clip.append(cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB))
    capture.release()
    return [read_rgb('bus.jpg'), read_rgb('zidane.jpg'), *clip]


@pytest.mark.server
def test_a_three_class_detector_equals_an_independent_decode(repository: Path,
                                                             tmp_path: Path) -> None:
    """
    Its best class is chosen among its own three.

    A box whose best COCO class was truck may become a car, so this is not yolov5n filtered to three
    classes.
    """
    onnx_path = derived(tmp_path, 'three')
    detector = install_detector(repository, onnx_path, labels_file(tmp_path, THREE), 'three',
                                log=lambda _line: None)
    assert (detector.layout, detector.classes, detector.input_width) == ('yolov5', 3, 640)
    # `engines build` on the Orin builds it with the package's own models.
    assert engine_steps(repository)[:2] == ['yolov5_model', 'lane_model']
    assert 'three_model' in engine_steps(repository)
    for config in ('config.pbtxt', 'configs/cpu.pbtxt'):  # the engine's frame range, too
        assert frame_range_of((repository / 'three_model' / config).read_text()) == FrameRange()
    detect, head = served(repository, 'three'), session(onnx_path)
    boxes = 0
    for rgb in frames():
        pixels, letterbox = preprocessing.letterbox(rgb, 640, 640)
        (rows,) = head.run({'images': pixels.astype(np.float32) / 255.0}, ['output0'])
        expected = reference_detection.postprocess(rows, letterbox, 0.25, 0.45, 100)
        crossings, beyond = differences(detect(rgb), expected, 'three')
        assert len(crossings) + len(beyond) <= 1, (crossings, beyond)
        boxes += len(expected)
    assert boxes > 10


@pytest.mark.server
def test_a_yolov8_layout_detector_equals_yolov5n(repository: Path, tmp_path: Path) -> None:
    """A detector with the yolov8 head layout is installed as one and detects what yolov5n does."""
    coco = (REPO / 'config' / 'coco_labels.txt').read_text().split('\n')
    install_detector(repository, derived(tmp_path, 'yolov8'),
                     labels_file(tmp_path, [name for name in coco if name.strip()]), 'v8',
                     log=lambda _line: None)
    assert {detector.name: detector.layout for detector in installed_detectors(repository)
            }['v8'] == 'yolov8'
    v8, v5 = served(repository, 'v8'), served(repository, 'yolov5')
    for rgb in frames():
        ours, theirs = v8(rgb), v5(rgb)
        assert ours.shape == theirs.shape
        np.testing.assert_array_equal(ours[:, 5], theirs[:, 5])
        np.testing.assert_allclose(ours[:, :5], theirs[:, :5], atol=1e-3)


@pytest.mark.server
def test_an_unsupported_head_is_refused_naming_its_shape(repository: Path,
                                                         tmp_path: Path) -> None:
    """A detector of no supported layout is refused naming its shape, leaving nothing behind."""
    with pytest.raises(DetectorInstallError,
                       match=r'output0 \[1, 25200, 3\] has no supported layout; supported: '
                             r'yolov5 \[1, N, 5 \+ classes\]'):
        install_detector(repository, derived(tmp_path, 'bad'), labels_file(tmp_path, THREE),
                         'bad', log=lambda _line: None)
    assert not (repository / 'bad').exists()


@pytest.mark.server
def test_a_wrong_label_count_is_refused_naming_both_numbers(repository: Path,
                                                            tmp_path: Path) -> None:
    """A labels file that does not match the head's classes is refused naming both counts."""
    with pytest.raises(DetectorInstallError, match=r'has 2 labels but .* has 3 classes'):
        install_detector(repository, derived(tmp_path, 'three'),
                         labels_file(tmp_path, ['person', 'car']), 'two', log=lambda _line: None)


@pytest.mark.server
def test_models_list_shows_every_detector(repository: Path, tmp_path: Path) -> None:
    """
    `models list` shows an installed detector's layout, input size and classes.

    `models install --detector` without labels and a name is a usage error saying so.
    """
    install_detector(repository, derived(tmp_path, 'three'), labels_file(tmp_path, THREE),
                     'listed', log=lambda _line: None)
    result = subprocess.run([sys.executable, '-m', 'triton_perception.cli', 'models', 'list',
                             '--model-repository', str(repository)], capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert '| listed | yolov5 | 640 x 640 | 3 |' in result.stdout, result.stdout
    bad = subprocess.run([sys.executable, '-m', 'triton_perception.cli', 'models', 'install',
                          '--detector', str(tmp_path / 'missing.onnx'), '--model-repository',
                          str(repository)], capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and 'needs --labels, --name too' in bad.stderr, bad.stderr


@pytest.fixture(scope='module')
def detector_server(repository: Path, tmp_path_factory: pytest.TempPathFactory
                    ) -> Iterator[TritonServer]:
    """Serve the repository with a three-class detector installed, for one module."""
    directory = tmp_path_factory.mktemp('served_three')
    install_detector(repository, derived(directory, 'three'), labels_file(directory, THREE),
                     'three_e2e', log=lambda _line: None)
    http, grpc, metrics = free_ports(3)
    server = TritonServer(ServerConfig(model_repository=repository, profile='cpu',
                                       http_port=http, grpc_port=grpc, metrics_port=metrics,
                                       models=('three_e2e',), ready_timeout_s=300),
                          log=lambda _line: None, show_server_log=False)
    with server:
        yield server


@pytest.mark.ros
@pytest.mark.server
def test_detection_node_serves_an_installed_detector_with_its_labels(
        probe: Probe, detector_server: TritonServer, repository: Path,
        tmp_path: Path) -> None:
    """detection_node serving an installed detector publishes its labels and detections by them."""
    node = node_with_repository('detection_node', ros_arguments(
        {'triton_url': detector_server.grpc_url, 'model_name': 'three_e2e'},
        namespace='/three'), repository, tmp_path)
    try:
        infos = probe.record(LabelInfo, '/three/label_info', LATCHED)
        results = probe.record(Detection2DArray, '/three/detections')
        info = wait_until(lambda: infos[-1] if infos else None, 60.0, 'LabelInfo')
        assert [(item.class_id, item.class_name) for item in info.class_map] == [
            (0, 'person'), (1, 'car'), (2, 'bus')]
        camera = probe.publisher(Image, '/three/image')
        probe.wait_for_subscribers(camera)
        frame = image_message(np.ascontiguousarray(read_rgb('bus.jpg')), Header(frame_id='c'),
                              'rgb8')

        def answered() -> Any:
            camera.publish(frame)
            return next((message for message in results if message.detections), None)
        message = wait_until(answered, 60.0, 'detections from the 3-class detector')
        class_ids = {detection.results[0].hypothesis.class_id for detection in message.detections}
        assert class_ids <= {'0', '1', '2'} and {'0', '2'} <= class_ids, class_ids
    finally:
        assert node.stop() == 0, node.output()
