"""The detector head layouts the detection graph decodes, without importing onnx."""

# yolov5: [1, N, 5 + classes] with objectness; yolov8 (and yolo11): [1, 4 + classes, N].
HEAD_LAYOUTS = ('yolov5', 'yolov8')
