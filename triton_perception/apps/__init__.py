"""
Commands built from the other folders: the demo, the soak run and the docs tables.

Owns: `triton-perception demo` (demo), `soak` (soak) and the generated docs tables
(docs_tables). May import everything below it; only commands/ imports it.
"""
