"""
Commands built from the other folders: the demo, the soak run and the docs tables.

Owns: `triton-perception demo` (demo), `soak` (soak_run) and the generated docs tables
(docs_tables). May import everything below it; only commands/ imports it.
Imports: `bag/`, `outputs/`, `parameters/`, `pipeline/`, `system/`.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from triton_perception.system.faces import lazy_face

if TYPE_CHECKING:
    from triton_perception.apps.demo import run_demo
    from triton_perception.apps.docs_tables import main
    from triton_perception.apps.soak_run import soak

__all__ = ['main', 'run_demo', 'soak']
__getattr__ = lazy_face(__name__, {
    'demo': ('run_demo',),
    'docs_tables': ('main',),
    'soak_run': ('soak',),
})
