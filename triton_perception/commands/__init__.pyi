"""The public face of commands/: read by type checkers and by faces.lazy_face."""
from triton_perception.commands.app_commands import (
    add_demo_command as add_demo_command,
    add_docs_command as add_docs_command,
    add_soak_command as add_soak_command,
)
from triton_perception.commands.bag_commands import add_bag_commands as add_bag_commands
from triton_perception.commands.bench_commands import add_bench_command as add_bench_command
from triton_perception.commands.model_commands import add_models_command as add_models_command
from triton_perception.commands.pipeline_commands import (
    add_run_command as add_run_command,
    add_wait_ready_command as add_wait_ready_command,
)
from triton_perception.commands.server_commands import (
    add_engines_command as add_engines_command,
    add_server_command as add_server_command,
)
