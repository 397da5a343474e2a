"""
Results as the package publishes them: ROS messages and drawings on frames.

Owns: detections, labels, lanes and masks <-> vision_msgs/sensor_msgs (result_messages), the
overlay drawing (overlay_drawing) and the same results as foxglove_msgs/ImageAnnotations
(image_annotations).  No rclpy: message classes only.
Imports: `system/`.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from triton_perception.system.faces import lazy_face

if TYPE_CHECKING:
    from triton_perception.outputs.image_annotations import (detection_annotations,
                                                             lane_annotations)
    from triton_perception.outputs.overlay_drawing import (draw_detections, draw_drivable_area,
                                                           draw_lanes)
    from triton_perception.outputs.result_messages import (class_index, class_name,
                                                           detection_array_message,
                                                           detections_from_message, image_message,
                                                           label_info_message, lane_ids,
                                                           LANE_POINT_DTYPE, lanes_cloud_message,
                                                           lanes_from_cloud, load_labels,
                                                           mask_from_image, track_ids_from_message)

__all__ = ['class_index', 'class_name', 'detection_annotations', 'detection_array_message',
           'detections_from_message', 'draw_detections', 'draw_drivable_area', 'draw_lanes',
           'image_message', 'label_info_message', 'lane_annotations', 'lane_ids',
           'LANE_POINT_DTYPE', 'lanes_cloud_message', 'lanes_from_cloud', 'load_labels',
           'mask_from_image', 'track_ids_from_message']
__getattr__ = lazy_face(__name__, {
    'image_annotations': ('detection_annotations', 'lane_annotations'),
    'overlay_drawing': ('draw_detections', 'draw_drivable_area', 'draw_lanes'),
    'result_messages': ('class_index', 'class_name', 'detection_array_message',
                        'detections_from_message', 'image_message', 'label_info_message',
                        'lane_ids', 'LANE_POINT_DTYPE', 'lanes_cloud_message', 'lanes_from_cloud',
                        'load_labels', 'mask_from_image', 'track_ids_from_message'),
})
