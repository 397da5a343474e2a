"""The public face of serving/server/: read by type checkers and by faces.lazy_face."""
from triton_perception.serving.server.batched_ensembles import (
    stale_batched_ensembles as stale_batched_ensembles,
)
from triton_perception.serving.server.engines import (
    build_engines as build_engines,
    EngineBuildError as EngineBuildError,
)
from triton_perception.serving.server.model_config import (
    link_step_code as link_step_code,
    load_step_module as load_step_module,
    parameters_of as parameters_of,
    read_config as read_config,
    step_config as step_config,
)
from triton_perception.serving.server.server_config import (
    ENSEMBLES as ENSEMBLES,
    JOINED_MODEL as JOINED_MODEL,
    MAX_BATCH as MAX_BATCH,
    PRECISIONS as PRECISIONS,
    PROFILES as PROFILES,
    ServerConfig as ServerConfig,
    ServerError as ServerError,
)
from triton_perception.serving.server.server_installation import (
    find_tritonserver as find_tritonserver,
    server_command as server_command,
    server_environment as server_environment,
)
from triton_perception.serving.server.triton_server import TritonServer as TritonServer
from triton_perception.serving.server.server_config import batched_name as batched_name
from triton_perception.serving.server.batched_ensembles import batched_config as batched_config
from triton_perception.serving.server.grpc_client_check import (
    generated_requirements as generated_requirements,
    grpc_client_problem as grpc_client_problem,
)
from triton_perception.serving.server.server_check import check_findings as check_findings
