"""
The machine the package runs on: where its files are, child processes, file checksums.

Owns: paths (share directory, config files, the Fast DDS profile), processes (process trees,
node commands, dying with the parent), parent_death, checksums and the folders' lazy public
faces (faces).
Imports: nothing of the package.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from triton_perception.system.faces import lazy_face

if TYPE_CHECKING:
    from triton_perception.system.checksums import sha256_of
    from triton_perception.system.paths import (CLIP_HINT, config_file, dds_profile_environment,
                                                DEFAULT_CLIP, default_model_repository,
                                                MODEL_REPOSITORY_ENV, SOURCE_ROOT)
    from triton_perception.system.processes import (die_with_parent, free_ports, node_command,
                                                    NodeProcess, process_cpu_s, process_tree,
                                                    ros_arguments, status_kib, tree_cpu_s,
                                                    tree_rss_mb)
    from triton_perception.system.shared_libraries import missing_library_cause

__all__ = ['CLIP_HINT', 'config_file', 'dds_profile_environment', 'DEFAULT_CLIP',
           'default_model_repository', 'die_with_parent', 'free_ports', 'missing_library_cause',
           'MODEL_REPOSITORY_ENV',
           'node_command', 'NodeProcess', 'process_cpu_s', 'process_tree', 'ros_arguments',
           'sha256_of', 'SOURCE_ROOT', 'status_kib', 'tree_cpu_s', 'tree_rss_mb']
__getattr__ = lazy_face(__name__, {
    'checksums': ('sha256_of',),
    'paths': ('CLIP_HINT', 'config_file', 'dds_profile_environment', 'DEFAULT_CLIP',
              'default_model_repository', 'MODEL_REPOSITORY_ENV', 'SOURCE_ROOT'),
    'processes': ('die_with_parent', 'free_ports', 'node_command', 'NodeProcess', 'process_cpu_s',
                  'process_tree', 'ros_arguments', 'status_kib', 'tree_cpu_s', 'tree_rss_mb'),
    'shared_libraries': ('missing_library_cause',),
})
