"""The public face of serving/: read by type checkers and by faces.lazy_face."""
from triton_perception.serving.batched_ensembles import (
    stale_batched_ensembles as stale_batched_ensembles,
)
from triton_perception.serving.camera_batches import CameraBatches as CameraBatches
from triton_perception.serving.engines import (
    build_engines as build_engines,
    EngineBuildError as EngineBuildError,
)
from triton_perception.serving.grpc_client_check import (
    generated_requirements as generated_requirements,
    grpc_client_problem as grpc_client_problem,
)
from triton_perception.serving.joined_worker import JoinedWorker as JoinedWorker
from triton_perception.serving.member_worker import (
    FrameWorker as FrameWorker,
    MemberWorker as MemberWorker,
)
from triton_perception.serving.model_config import (
    link_step_code as link_step_code,
    load_step_module as load_step_module,
    parameters_of as parameters_of,
    read_config as read_config,
    step_config as step_config,
)
from triton_perception.serving.output_checks import (
    check_detections as check_detections,
    check_lane_maps as check_lane_maps,
    check_lane_outputs as check_lane_outputs,
    MalformedOutput as MalformedOutput,
)
from triton_perception.serving.request_gate import (
    CameraPolicy as CameraPolicy,
    check_policy_cameras as check_policy_cameras,
    parse_camera_priorities as parse_camera_priorities,
    RequestGate as RequestGate,
)
from triton_perception.serving.request_inputs import (
    infer_inputs as infer_inputs,
    Tensors as Tensors,
)
from triton_perception.serving.server_check import check_findings as check_findings
from triton_perception.serving.server_config import (
    ENSEMBLES as ENSEMBLES,
    JOINED_MODEL as JOINED_MODEL,
    MAX_BATCH as MAX_BATCH,
    PRECISIONS as PRECISIONS,
    PROFILES as PROFILES,
    ServerConfig as ServerConfig,
    ServerError as ServerError,
)
from triton_perception.serving.server_installation import (
    find_tritonserver as find_tritonserver,
    server_command as server_command,
    server_environment as server_environment,
)
from triton_perception.serving.shared_frames import SharedFrames as SharedFrames
from triton_perception.serving.triton_client import (
    ClientSettings as ClientSettings,
    InferenceWorker as InferenceWorker,
    is_loopback as is_loopback,
    TlsOptions as TlsOptions,
)
from triton_perception.serving.triton_server import TritonServer as TritonServer
from triton_perception.serving.worker_log import Log as Log
