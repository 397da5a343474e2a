"""
What every served graph agrees on with its callers: the frame input and the detector heads.

Plain values, apart from the builders, so that the server's command line (trtexec shapes) and
the `models install` options read them without loading numpy or onnx.
"""
FRAME_INPUT = 'image'
# The frame as the camera gives it: height x width x 3 uint8, any size within the engine's range.
FRAME_DIMS: list[int | str] = ['height', 'width', 3]
# yolov5: [1, N, 5 + classes] with objectness; yolov8 (and yolo11): [1, 4 + classes, N].
HEAD_LAYOUTS = ('yolov5', 'yolov8')
