"""The public face of system/: read by type checkers and by faces.lazy_face."""
from triton_perception.system.checksums import sha256_of as sha256_of
from triton_perception.system.json_values import (
    JsonObject as JsonObject,
    JsonValue as JsonValue,
)
from triton_perception.system.paths import (
    CLIP_HINT as CLIP_HINT,
    config_file as config_file,
    dds_profile_environment as dds_profile_environment,
    DEFAULT_CLIP as DEFAULT_CLIP,
    default_model_repository as default_model_repository,
    MODEL_REPOSITORY_ENV as MODEL_REPOSITORY_ENV,
    SHARED_ENV as SHARED_ENV,
    shared_directory as shared_directory,
    SOURCE_ROOT as SOURCE_ROOT,
)
from triton_perception.system.processes import (
    die_with_parent as die_with_parent,
    ending_with_parent as ending_with_parent,
    free_ports as free_ports,
    node_command as node_command,
    NodeProcess as NodeProcess,
    process_cpu_s as process_cpu_s,
    process_tree as process_tree,
    ros_arguments as ros_arguments,
    status_kib as status_kib,
    stopping_last as stopping_last,
    tree_cpu_s as tree_cpu_s,
    tree_rss_mb as tree_rss_mb,
    with_parent_pid as with_parent_pid,
)
from triton_perception.system.ros_domain import (
    NoFreeDomain as NoFreeDomain,
    private_domain as private_domain,
    PrivateDomain as PrivateDomain,
)
from triton_perception.system.signals import (
    ignore_stop_signals as ignore_stop_signals,
    Interrupted as Interrupted,
    raise_on_signals as raise_on_signals,
    STOP_SIGNALS as STOP_SIGNALS,
    StopRequest as StopRequest,
)
from triton_perception.system.shared_libraries import (
    missing_library_cause as missing_library_cause,
)
