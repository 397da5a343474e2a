"""
What every served graph agrees on with its callers: the frame input, detector heads, lane runs.

Plain values, apart from the builders, so that the server's command line (trtexec shapes) and
the `models install` options read them without loading numpy or onnx.
"""
FRAME_INPUT = 'image'
# The frame as the camera gives it: height x width x 3 uint8, any size within the engine's range.
FRAME_DIMS: list[int | str] = ['height', 'width', 3]
# yolov5: [1, N, 5 + classes] with objectness; yolov8 (and yolo11): [1, 4 + classes, N].
HEAD_LAYOUTS = ('yolov5', 'yolov8')
# lane_detection's outputs that lane_node decodes (graphs/lane_runs.py), in the decoder's order.
LANE_RUNS_OUTPUTS = ('LANE_RUNS', 'LANE_RUN_COUNTS', 'DRIVABLE_AREA')
MAX_RUNS = 16  # runs listed per lane-mask row; a lane mask row holds a handful
# The health graph's output: the camera health statistics (graphs/health_graph.py).
HEALTH_STATISTICS = 'health_statistics'
