"""The public face of serving/requests/: read by type checkers and by faces.lazy_face."""
from triton_perception.serving.requests.camera_batches import CameraBatches as CameraBatches
from triton_perception.serving.requests.joined_worker import JoinedWorker as JoinedWorker
from triton_perception.serving.requests.member_worker import (
    FrameWorker as FrameWorker,
    MemberWorker as MemberWorker,
)
from triton_perception.serving.requests.output_checks import (
    check_detections as check_detections,
    check_lane_maps as check_lane_maps,
    check_lane_outputs as check_lane_outputs,
    MalformedOutput as MalformedOutput,
)
from triton_perception.serving.requests.request_gate import (
    CameraPolicy as CameraPolicy,
    check_policy_cameras as check_policy_cameras,
    parse_camera_priorities as parse_camera_priorities,
    RequestGate as RequestGate,
)
from triton_perception.serving.requests.request_inputs import (
    infer_inputs as infer_inputs,
    Tensors as Tensors,
)
from triton_perception.serving.requests.shared_frames import SharedFrames as SharedFrames
from triton_perception.serving.requests.shared_memory_region import region_name as region_name
from triton_perception.serving.requests.triton_client import (
    ClientSettings as ClientSettings,
    InferenceWorker as InferenceWorker,
    is_loopback as is_loopback,
    TlsOptions as TlsOptions,
)
from triton_perception.serving.requests.worker_log import Log as Log
