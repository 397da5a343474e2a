"""
The yolov5 and lane_detection ensembles through a real tritonserver (CPU profile), over gRPC.

The processing itself is unit-tested in test_detection_processing.py / test_lane_processing.py;
here the contract clients rely on is checked end to end: tensor names, shapes and types, the
reference accuracy, the per-request thresholds (required inputs, clamped), the frame range, and
error messages. The
server comes from the session fixture `triton_server` (test/conftest.py).
"""

import numpy as np
import pytest
import tritonclient.grpc as grpcclient
from tritonclient.utils import InferenceServerException

from support.checkout import REPO
from support.detection_references import (assert_matches_reference, BUS_REFERENCE, differences,
                                          make_reference, ZIDANE_REFERENCE)
from support.highway_clip import has_ego_lanes, read_clip
from support.sample_images import read_rgb
from support.served_graphs import make_lane_detector
from support.triton_requests import infer
from triton_perception.frames.frame_range import frame_range_of, FrameRange
from triton_perception.lanes.lane_geometry import LaneResult, NUM_POINTS, postprocess
from triton_perception.serving.requests.output_checks import check_detections, check_lane_maps
from triton_perception.serving.server.model_config import read_config

REPOSITORY = REPO / 'model_repository'
DETECTION_OUTPUTS = ('DETECTIONS', 'NUM_DETECTIONS')
LANE_OUTPUTS = ('LANE_PROBABILITY', 'DRIVABLE_MARGIN')


@pytest.fixture(scope='module')
def client(triton_server):
    """Yield a gRPC client of the session's tritonserver, for one module."""
    with grpcclient.InferenceServerClient(triton_server.grpc_url) as connection:
        yield connection


def detect(client, image: np.ndarray, score: float = 0.25, iou: float = 0.45,
           max_det: int = 100) -> np.ndarray:
    """One yolov5 request with its three required thresholds (the node's defaults)."""
    return check_detections(infer(
        client, 'yolov5', image, DETECTION_OUTPUTS,
        SCORE_THRESHOLD=np.array([score], np.float32), IOU_THRESHOLD=np.array([iou], np.float32),
        MAX_DETECTIONS=np.array([max_det], np.int32)))


def lane_maps(client, image: np.ndarray) -> dict:
    """Return the lane_detection ensemble's two maps for `image`."""
    return infer(client, 'lane_detection', image, LANE_OUTPUTS)


def find_lanes(client, image: np.ndarray, min_lane_length: float = 0.1) -> LaneResult:
    """Return what a client outside ROS does: the ensemble's maps, then the package's geometry."""
    probability, margin = check_lane_maps(lane_maps(client, image))
    return postprocess(probability, margin, image.shape[:2], NUM_POINTS, min_lane_length)


# --- both profiles are well-formed (the Orin one cannot be served here) ---------------------

def tensor_signature(tensors) -> list[tuple]:
    """Return each tensor's name, data type and dims."""
    return [(t.name, t.data_type, tuple(t.dims)) for t in tensors]


@pytest.mark.parametrize('model', ['yolov5_model', 'lane_model'])
def test_orin_and_cpu_profiles_serve_the_same_tensors(model: str) -> None:
    """
    The Orin's TensorRT config and the CPU config of a step declare the same tensors and range.

    Clients then cannot tell the two profiles apart.
    """
    orin = read_config(REPOSITORY / model / 'config.pbtxt')
    cpu = read_config(REPOSITORY / model / 'configs' / 'cpu.pbtxt')
    assert (orin.platform, orin.default_model_filename) == ('tensorrt_plan', 'model.plan')
    assert cpu.backend == 'python'
    assert tensor_signature(orin.input) == tensor_signature(cpu.input)
    assert tensor_signature(orin.output) == tensor_signature(cpu.output)
    assert frame_range_of((REPOSITORY / model / 'config.pbtxt').read_text()) == frame_range_of(
        (REPOSITORY / model / 'configs' / 'cpu.pbtxt').read_text()) == FrameRange()


@pytest.mark.parametrize('ensemble', ['yolov5', 'lane_detection'])
def test_ensemble_steps_exist_and_connect(ensemble: str) -> None:
    """Every ensemble step exists and reads only tensors an earlier step or the input produced."""
    config = read_config(REPOSITORY / ensemble / 'config.pbtxt')
    available = {tensor.name for tensor in config.input}
    for step in config.ensemble_scheduling.step:
        step_config = read_config(REPOSITORY / step.model_name / 'config.pbtxt')
        assert set(step.input_map) <= {tensor.name for tensor in step_config.input}
        assert set(step.output_map) <= {tensor.name for tensor in step_config.output}
        assert set(step.input_map.values()) <= available, \
            f'{step.model_name} reads a tensor not yet produced'
        available |= set(step.output_map.values())
    assert {tensor.name for tensor in config.output} <= available


# --- yolov5 ---------------------------------------------------------------------------------

@pytest.mark.server
def test_ensembles_are_ready(client) -> None:
    """Both ensembles load and are ready on the session's server."""
    assert client.is_model_ready('yolov5')
    assert client.is_model_ready('lane_detection')


@pytest.mark.server
def test_bus_matches_reference(client) -> None:
    """The served yolov5 ensemble finds on bus.jpg what the reference lists."""
    assert_matches_reference(detect(client, read_rgb('bus.jpg')), BUS_REFERENCE)


@pytest.mark.server
def test_zidane_matches_reference(client) -> None:
    """The served yolov5 ensemble finds on zidane.jpg what the reference lists."""
    assert_matches_reference(detect(client, read_rgb('zidane.jpg')), ZIDANE_REFERENCE)


@pytest.mark.server
@pytest.mark.parametrize('shape', [(480, 640, 3), (1, 1, 3)])
def test_uniform_grey_gives_no_detections(client, shape: tuple) -> None:
    """A uniform grey frame, a single pixel included, gives an empty float32 table."""
    detections = detect(client, np.full(shape, 128, dtype=np.uint8))
    assert detections.shape == (0, 6) and detections.dtype == np.float32


@pytest.mark.server
def test_odd_shapes_match_in_process_reference(client) -> None:
    """
    Portrait, very wide and odd-sized frames give what the independent reference gives.

    Within the must-not-change tolerances of the graph's letterbox (test_detection_processing).
    """
    reference = make_reference()
    bus, zidane = read_rgb('bus.jpg'), read_rgb('zidane.jpg')
    frames = {
        'portrait': np.ascontiguousarray(bus[:, :405]),               # 405x1080
        'very wide': np.ascontiguousarray(np.hstack([zidane] * 3)),   # 3840x720
        'odd size': np.ascontiguousarray(bus[3:1000, 7:800]),          # 793x997
    }
    for name, frame in frames.items():
        served, expected = detect(client, frame), reference(frame)
        assert len(expected) > 0, name
        assert differences(served, expected, name) == ([], []), name
        height, width = frame.shape[:2]
        assert np.all(served[:, [0, 2]] <= width) and np.all(served[:, [1, 3]] <= height), name
        assert np.all(np.diff(served[:, 4]) <= 0), name  # best first


@pytest.mark.server
def test_thresholds_are_required_inputs(client) -> None:
    """
    The same contract as the Orin's TensorRT step, which can have no optional input.

    Triton refuses the request naming the missing input, before any model runs.
    """
    with pytest.raises(InferenceServerException, match='SCORE_THRESHOLD'):
        infer(client, 'yolov5', read_rgb('bus.jpg'), DETECTION_OUTPUTS,
              IOU_THRESHOLD=np.array([0.45], np.float32),
              MAX_DETECTIONS=np.array([100], np.int32))


@pytest.mark.server
def test_per_request_thresholds(client) -> None:
    """Each request's thresholds change its own results, and last that request only."""
    bus = read_rgb('bus.jpg')
    assert len(detect(client, bus, score=0.6)) == 3
    assert len(detect(client, bus, max_det=2)) == 2
    assert len(detect(client, bus, score=0.1, iou=0.9)) > len(BUS_REFERENCE)
    # A request's thresholds last that request only.
    assert_matches_reference(detect(client, bus), BUS_REFERENCE)


@pytest.mark.server
@pytest.mark.parametrize('model', ['yolov5', 'lane_detection'])
@pytest.mark.parametrize('height, width', [(0, 8), (2161, 3840), (2160, 3841)])
def test_a_frame_outside_the_range_is_refused_naming_it(client, model: str, height: int,
                                                        width: int) -> None:
    """As the Orin's engine, built for 1x1 to 3840x2160, refuses it; the message says what to do."""
    outputs = DETECTION_OUTPUTS if model == 'yolov5' else LANE_OUTPUTS
    extra = {} if model == 'lane_detection' else {
        'SCORE_THRESHOLD': np.array([0.25], np.float32),
        'IOU_THRESHOLD': np.array([0.45], np.float32), 'MAX_DETECTIONS': np.array([100], np.int32)}
    with pytest.raises(InferenceServerException,
                       match=rf'frame {width}x{height} is outside the frame sizes this model is '
                             r'built for, 1x1 to 3840x2160 .* engines build --max-frame'):
        infer(client, model, np.zeros((height, width, 3), dtype=np.uint8), outputs, **extra)


@pytest.mark.server
def test_the_largest_frame_is_served(client) -> None:
    """A frame of the largest size, 3840x2160, is served by both ensembles."""
    frame = np.full((2160, 3840, 3), 90, dtype=np.uint8)
    assert detect(client, frame).shape == (0, 6)
    assert lane_maps(client, frame)['LANE_PROBABILITY'].shape == (360, 640)


@pytest.mark.server
def test_out_of_range_thresholds_are_clamped(client) -> None:
    """The documented contract for clients outside ROS (docs/models.md)."""
    bus = read_rgb('bus.jpg')
    assert detect(client, bus, score=1.5).shape == (0, 6)
    np.testing.assert_array_equal(detect(client, bus, score=-1.0), detect(client, bus, score=0.0))
    np.testing.assert_array_equal(detect(client, bus, max_det=1000),
                                  detect(client, bus, max_det=300))


# --- lane_detection -------------------------------------------------------------------------

@pytest.mark.server
@pytest.mark.parametrize('shape', [(720, 1280, 3), (500, 300, 3), (1, 1, 3)])
def test_lane_outputs_have_contract_shapes(client, shape: tuple) -> None:
    """
    The lane maps are 360x640 uint8 for any frame size, and the geometry's result is well-formed.

    Lanes of 20 points with a score and side each, a drivable area at the frame's size holding 0
    or 255 only.
    """
    maps = lane_maps(client, np.full(shape, 90, dtype=np.uint8))
    for name in LANE_OUTPUTS:
        assert maps[name].dtype == np.uint8 and maps[name].shape == (360, 640), name
    result = find_lanes(client, np.full(shape, 90, dtype=np.uint8))
    lane_count = len(result.lanes)
    assert result.lanes.dtype == np.float32 and result.lanes.shape[1:] == (20, 2)
    assert result.scores.shape == (lane_count,) and result.sides.shape == (lane_count,)
    assert result.drivable_area.dtype == np.uint8 and result.drivable_area.shape == shape[:2]
    assert set(np.unique(result.drivable_area)) <= {0, 255}


@pytest.mark.server
@pytest.mark.slow
def test_clip_has_ego_lanes_on_nearly_every_frame(client) -> None:
    """Every 5th frame of solidWhiteRight.mp4: ego-left and ego-right lanes on >= 95 % of them."""
    frames = read_clip(range(0, 221, 5))
    found = 0
    for frame in frames:
        result = find_lanes(client, frame)
        assert result.drivable_area.shape == (540, 960)
        found += has_ego_lanes(result.lanes, result.sides, 540)
    assert found >= 0.95 * len(frames), f'ego lanes on {found} of {len(frames)} frames'


@pytest.mark.server
def test_lanes_match_in_process_reference(client, tmp_path) -> None:
    """The served lane ensemble gives what the in-process lane detector gives on a clip frame."""
    (frame,) = read_clip(range(100, 101))
    served, expected = find_lanes(client, frame), make_lane_detector(tmp_path)(frame)
    np.testing.assert_allclose(served.lanes, expected.lanes, atol=1e-3)
    np.testing.assert_allclose(served.scores, expected.scores, atol=1e-5)
    np.testing.assert_array_equal(served.sides, expected.sides)
    np.testing.assert_array_equal(served.drivable_area, expected.drivable_area)


@pytest.mark.server
def test_min_lane_length_is_applied_by_the_geometry(client) -> None:
    """A longer minimum lane length keeps only the two long ego lines."""
    (frame,) = read_clip(range(0, 1))
    default = find_lanes(client, frame)
    # Only the two long ego boundaries span 30 % of the frame height.
    strict = find_lanes(client, frame, min_lane_length=0.3)
    assert len(default.lanes) > len(strict.lanes)
    assert strict.sides.tolist() == [-1, 1]
