"""The public face of tracking/: read by type checkers and by faces.lazy_face."""
from triton_perception.tracking.association import (
    iou_matrix as iou_matrix,
    match as match,
)
from triton_perception.tracking.track_publishers import DetectionTracking as DetectionTracking
from triton_perception.tracking.tracking_benchmark import (
    tracking_line as tracking_line,
    tracking_update_ms as tracking_update_ms,
    TrackingTiming as TrackingTiming,
)
