"""The public face of ground/: read by type checkers and by faces.lazy_face."""
from triton_perception.ground.camera import (
    GroundCamera as GroundCamera,
    Intrinsics as Intrinsics,
    Mounting as Mounting,
)
from triton_perception.ground.camera_lookup import CameraGeometrySource as CameraGeometrySource
from triton_perception.ground.ground_projection import (
    ego_lane as ego_lane,
    ground_boxes as ground_boxes,
    GROUND_POINT_DTYPE as GROUND_POINT_DTYPE,
)
from triton_perception.ground.ground_publishers import (
    DetectionGroundOutputs as DetectionGroundOutputs,
    LaneGroundOutputs as LaneGroundOutputs,
)
