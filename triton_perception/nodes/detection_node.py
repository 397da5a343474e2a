"""detection_node: camera frames -> Triton `yolov5` ensemble -> vision_msgs/Detection2DArray."""
from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from foxglove_msgs.msg import ImageAnnotations
import numpy as np
from sensor_msgs.msg import Image
from vision_msgs.msg import Detection2DArray, LabelInfo

from triton_perception.frames import Frame
from triton_perception.ground import DetectionGroundOutputs
from triton_perception.models import labels_for
from triton_perception.nodes.base import PerceptionNode
from triton_perception.nodes.camera_frames import CameraFrames
from triton_perception.nodes.node_process import run_nodes
from triton_perception.outputs import (detection_annotations, detection_array_cdr,
                                       draw_detections, label_info_message)
from triton_perception.parameters import (DETECTION, DetectionSettings, ParameterValues,
                                          parse_class_filter)
from triton_perception.qos import LATCHED_QOS, OVERLAY_QOS, RESULT_QOS
from triton_perception.serving import check_detections, Tensors
from triton_perception.tracking import DetectionTracking

if TYPE_CHECKING:  # rclpy's node options (typed from Jazzy on)
    from rclpy.lifecycle.node import LifecycleNodeArgs
    from typing_extensions import Unpack


class DetectionNode(PerceptionNode[DetectionSettings]):
    """
    Object detection through Triton: `detections`, `label_info`, overlay and ground boxes.

    It publishes `detections`, latched `label_info`, `detections/overlay` and
    `detections/annotations` (Foxglove) while watched,
    `detections/ground` once the camera geometry is known and, with tracking, the track ids in
    both and `detections/tracks` (+ markers).
    """

    def __init__(self, *, frame_source: CameraFrames | None = None,
                 **node_options: Unpack[LifecycleNodeArgs]) -> None:
        """
        Load the labels, check class_filter against them and create the publishers.

        label_info is published once, latched, with the score threshold in use.

        Raises ParameterError if a start-up value is not accepted or class_filter names a class
        the labels do not have.
        """
        super().__init__('detection_node', DETECTION, DetectionSettings,
                         ('DETECTIONS', 'NUM_DETECTIONS'), frame_source=frame_source,
                         **node_options)
        self.labels = labels_for(self.settings.model_name, self.settings.labels_file)
        self._class_filter = parse_class_filter(self.settings.class_filter, self.labels)
        self._detections = self.create_publisher(Detection2DArray, 'detections', RESULT_QOS)
        self._overlay = self.create_publisher(Image, 'detections/overlay', OVERLAY_QOS)
        self._annotations = self.create_publisher(ImageAnnotations, 'detections/annotations',
                                                  RESULT_QOS)
        self._label_info = self.create_publisher(LabelInfo, 'label_info', LATCHED_QOS)
        self._label_info.publish(label_info_message(
            self.labels, self._stamped_header(), self.settings.score_threshold))
        self._ground = DetectionGroundOutputs(self, self._settings, RESULT_QOS)
        self._tracking = DetectionTracking(self, self._settings, self._ground.geometry,
                                           self.labels, RESULT_QOS)

    def extra_diagnostics(self) -> dict[str, str]:
        """Return the ground and tracking states, the late frames and the nearest collision."""
        return {'ground': self._ground.geometry.reason, 'tracking': self._tracking.reason,
                'tracking_late_frames': str(self._tracking.late_frames),
                'time_to_collision': self._tracking.nearest_collision}

    def check_parameters(self, updates: ParameterValues) -> None:
        """Refuse a new class_filter that names a class the labels do not have (ParameterError)."""
        if 'class_filter' in updates:
            parse_class_filter(self.settings.changed(updates).class_filter, self.labels)

    def apply_parameters(self, updates: ParameterValues) -> None:
        """Filter the detections by a new class_filter from the next result on."""
        if 'class_filter' in updates:  # already in `settings`, typed
            self._class_filter = parse_class_filter(self.settings.class_filter, self.labels)

    def _prepare(self, frame: Frame) -> Tensors:
        settings = self.settings  # one call's values for all three thresholds
        return {
            'IMAGE': self.frame_rgb(frame),
            'SCORE_THRESHOLD': np.array([settings.score_threshold], dtype=np.float32),
            'IOU_THRESHOLD': np.array([settings.iou_threshold], dtype=np.float32),
            'MAX_DETECTIONS': np.array([settings.max_detections], dtype=np.int32),
        }

    def _deliver(self, frame: Frame, inputs: Tensors, outputs: Tensors) -> None:
        detections = check_detections(outputs)
        class_filter = self._class_filter  # read once: a parameter change may replace it
        if class_filter is not None:
            keep = np.isin(detections[:, 5].astype(np.int64), list(class_filter))
            detections = detections[keep]
        header = frame.message.header
        track_ids = self._tracking.process(header, detections, frame.received_at)
        self._detections.publish(detection_array_cdr(detections, header, track_ids))
        self._ground.publish(header, detections, track_ids)
        self.publish_annotations(self._annotations, lambda: detection_annotations(
            detections, self.labels, track_ids, header.stamp))
        self.publish_overlay(
            self._overlay, lambda: draw_detections(inputs['IMAGE'].copy(), detections,
                                                   self.labels, track_ids), header)


def main(args: list[str] | None = None) -> None:
    """Run detection_node in this process; exits with run_nodes' code (2 on bad parameters)."""
    sys.exit(run_nodes([DetectionNode], args))


if __name__ == '__main__':
    main()
