"""
Commands built from the other folders: the demo, the soak run and the docs tables.

Owns: `triton-perception demo` (demo), `soak` (soak_run) and the generated docs tables
(docs_tables). May import everything below it; only commands/ imports it.
"""
from triton_perception.faces import lazy_face

__getattr__, __dir__, __all__ = lazy_face(__name__, __file__)
