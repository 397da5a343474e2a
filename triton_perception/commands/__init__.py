"""
The subcommands of `triton-perception`: each one's options, help text and handler.

Owns: one module per group of commands (server and engines, models, run and wait-ready,
soak, demo and docs, bench), each adding its commands to the parser that cli.py builds (their
stop signals are system.signals'). `bag` keeps its commands in bag/. May
import everything below it; only cli.py imports it.
"""
from triton_perception.faces import lazy_face

__getattr__, __dir__, __all__ = lazy_face(__name__, __file__)
