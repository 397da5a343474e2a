"""The public face of pipeline/: read by type checkers and by faces.lazy_face."""
from triton_perception.pipeline.arguments import (
    ARGUMENT_NAMES as ARGUMENT_NAMES,
    ARGUMENTS as ARGUMENTS,
    BOOLEAN as BOOLEAN,
    DECLARED as DECLARED,
    parse_launch_arguments as parse_launch_arguments,
    PlanError as PlanError,
    READY_TIMEOUT_S as READY_TIMEOUT_S,
    refuse_undeclared as refuse_undeclared,
)
from triton_perception.pipeline.launch_support import (
    argument_values as argument_values,
    declare_arguments as declare_arguments,
    included_arguments as included_arguments,
    server_process as server_process,
    start_after_gate as start_after_gate,
    stop_launch_on_exit as stop_launch_on_exit,
)
from triton_perception.pipeline.plan import (
    pipeline_plan as pipeline_plan,
    PipelinePlan as PipelinePlan,
)
from triton_perception.pipeline.runner import (
    PipelineRunner as PipelineRunner,
    wait_for_remote_models as wait_for_remote_models,
)
