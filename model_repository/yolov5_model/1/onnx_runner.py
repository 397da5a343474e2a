"""
Run an ONNX model with onnxruntime on the CPU: the CPU stand-in for a TensorRT plan.

Plain onnxruntime, free of Triton, so the package's benchmark can build the very same session.
Shared by yolov5_model and lane_model (lane_model/1 links to these files).
"""
import numpy as np
import onnxruntime as ort

FRAME_INPUT = 'image'  # the served graphs' frame (triton_perception.graphs.frame_input)
ONNX_TO_NUMPY = {'tensor(float)': np.float32, 'tensor(float16)': np.float16,
                 'tensor(uint8)': np.uint8, 'tensor(int32)': np.int32, 'tensor(int64)': np.int64}


def frame_range(min_frame: str, max_frame: str) -> tuple[tuple[int, int], tuple[int, int]]:
    """
    Return ((min_w, min_h), (max_w, max_h)) of a config's min_frame/max_frame ('WxH').

    The range the Orin's TensorRT engine is built for (`engines build`); triton_perception.
    frame_range writes these parameters, and test_engines holds both readings equal.
    """
    smallest, largest = ((int(width), int(height)) for width, height in (
        text.lower().split('x') for text in (min_frame, max_frame)))
    return smallest, largest


def frame_size_error(model_name: str, frame, sizes: tuple[tuple[int, int], tuple[int, int]]
                     ) -> str:
    """Say why a frame is outside `sizes` (from frame_range), or return ''."""
    if frame is None:
        return ''
    height, width = frame.shape[:2]
    (min_w, min_h), (max_w, max_h) = sizes
    if min_w <= width <= max_w and min_h <= height <= max_h:
        return ''
    return (f'{model_name}: frame {width}x{height} is outside the frame sizes this model is built '
            f'for, {min_w}x{min_h} to {max_w}x{max_h} (width x height); rebuild its engine for '
            "them with 'triton-perception engines build --max-frame WxH' (or --frame-size WxH)")


class OnnxRunner:
    """
    One CPU onnxruntime session with explicit thread counts.

    Thread counts matter because Triton serves several models at once on few cores: sessions
    that each claim every core, and spin while waiting, slow each other down.
    """

    def __init__(self, path: str, intra_op_threads: int, inter_op_threads: int,
                 allow_spinning: bool) -> None:
        """Open `path` on the CPU provider (sequential) with these thread counts and spinning."""
        options = ort.SessionOptions()
        options.intra_op_num_threads = intra_op_threads
        options.inter_op_num_threads = inter_op_threads
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        options.add_session_config_entry('session.intra_op.allow_spinning',
                                         '1' if allow_spinning else '0')
        self.session = ort.InferenceSession(path, options, providers=['CPUExecutionProvider'])

    @property
    def input_names(self) -> list[str]:
        """Return the ONNX file's input names, in graph order."""
        return [tensor.name for tensor in self.session.get_inputs()]

    @property
    def output_names(self) -> list[str]:
        """Return the ONNX file's output names, in graph order."""
        return [tensor.name for tensor in self.session.get_outputs()]

    def run(self, inputs: dict[str, np.ndarray], output_names: list[str]) -> list[np.ndarray]:
        """Return the outputs `output_names`, in that order, for `inputs` by input name."""
        return self.session.run(output_names, inputs)

    def warm_up(self) -> None:
        """
        Run once on zeros so allocations and kernel choices happen before the first frame.

        Dynamic dimensions (strings or None in the ONNX shape) are taken as 1.
        """
        zeros = {
            tensor.name: np.zeros([dim if isinstance(dim, int) else 1 for dim in tensor.shape],
                                  dtype=ONNX_TO_NUMPY[tensor.type])
            for tensor in self.session.get_inputs()
        }
        self.session.run(None, zeros)
