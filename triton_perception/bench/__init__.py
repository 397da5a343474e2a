"""
`triton-perception bench`: what Triton and ROS cost on top of the bare processing, measured here.

Per case (detection, lanes, both nodes at once) on the frames of a road clip:
- reference_ms: the model repository's own pre/postprocess modules and ONNX runner, loaded by
  file path and run in this process (no ROS, no Triton) with the CPU profile's thread settings;
- triton_ms: the node's ensemble request over gRPC, one frame at a time;
- ros_e2e_ms: an rgb8 Image published here -> the node's result received here, the node running
  as its own process, one frame at a time;
  each frame goes through the three in turn, so load from other work weighs on all three alike;
- a throughput phase at camera rate (the clip looped) giving delivered results per second,
  latency early and late in the run, and CPU time and peak memory of the node and the server;
- for one-node cases, the overhead budget: per frame of the latency phase, where the end-to-end
  time goes, stage by stage (node, gRPC, Triton's own timers, DDS), and CPU ms per frame outside
  the model graph.
Writes JSON and prints a Markdown table; every process it starts is stopped on exit or Ctrl-C.
`bench --memory` (process_memory) sums the perception processes' memory; `bench --glue` (glue)
measures the nodes' own CPU, memory and latency against a bare floor node on constant graphs.

Nothing is imported here: the floor node runs as `python -m triton_perception.bench.floor_node`,
which imports this package first, and must not pay for the bench's imports (onnxruntime, the
references, tracking) in its memory. Import from the modules.
Imports: `frames/`, `graphs/`, `health/`, `lanes/`, `models/`, `nodes/`, `outputs/`, `parameters/`,
`pipeline/`, `qos.py`, `serving/`, `system/`, `tracking/`.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from triton_perception.system.faces import lazy_face

if TYPE_CHECKING:
    from triton_perception.bench.bench_schema import BenchRun, GlueReport
    from triton_perception.bench.glue import GlueSettings, run_glue
    from triton_perception.bench.glue_report import glue_table
    from triton_perception.bench.process_memory import measure_all, memory_table
    from triton_perception.bench.report import budget_table, markdown_table, steps_table
    from triton_perception.bench.run import run_bench
    from triton_perception.bench.settings import BenchError, BenchSettings, parse_cases

__all__ = ['BenchError', 'BenchRun', 'BenchSettings', 'budget_table', 'glue_table', 'GlueReport',
           'GlueSettings', 'markdown_table', 'measure_all', 'memory_table', 'parse_cases',
           'run_bench', 'run_glue', 'steps_table']
__getattr__ = lazy_face(__name__, {
    'bench_schema': ('BenchRun', 'GlueReport'),
    'glue': ('GlueSettings', 'run_glue'),
    'glue_report': ('glue_table',),
    'process_memory': ('measure_all', 'memory_table'),
    'report': ('budget_table', 'markdown_table', 'steps_table'),
    'run': ('run_bench',),
    'settings': ('BenchError', 'BenchSettings', 'parse_cases'),
})
