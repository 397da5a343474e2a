"""
The machine the package runs on: where its files are, child processes, file checksums.

Owns: paths (share directory, config files, the Fast DDS profile), processes (process trees,
node commands, dying with the parent), parent_death, stops_last (a server stopping after its
clients), checksums, missing shared libraries and json_values (the type of a parsed JSON or
YAML document).
"""
from triton_perception.faces import lazy_face

__getattr__, __dir__, __all__ = lazy_face(__name__, __file__)
