"""The public face of outputs/: read by type checkers and by faces.lazy_face."""
from triton_perception.outputs.cdr import (
    CdrWriter as CdrWriter,
    detection_array_cdr as detection_array_cdr,
    image_cdr as image_cdr,
)
from triton_perception.outputs.image_annotations import (
    detection_annotations as detection_annotations,
    lane_annotations as lane_annotations,
)
from triton_perception.outputs.overlay_drawing import (
    draw_detections as draw_detections,
    draw_drivable_area as draw_drivable_area,
    draw_lanes as draw_lanes,
    draw_results as draw_results,
)
from triton_perception.outputs.result_messages import (
    class_index as class_index,
    class_name as class_name,
    detections_from_message as detections_from_message,
    label_info_message as label_info_message,
    lane_ids as lane_ids,
    LANE_POINT_DTYPE as LANE_POINT_DTYPE,
    lane_points as lane_points,
    lanes_cloud_message as lanes_cloud_message,
    lanes_from_cloud as lanes_from_cloud,
    load_labels as load_labels,
    mask_from_image as mask_from_image,
    point_fields as point_fields,
    track_ids_from_message as track_ids_from_message,
    UnreadableResult as UnreadableResult,
)
