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

The rooms: the latency bench itself lives here (run, benchmark, budget, frame_budgets,
references, report, bench_schema), as does `bench --memory` (process_memory, the perception
processes' memory summed). `bench --glue` (glue/) measures the nodes' own CPU, memory and
latency against a bare floor node on constant graphs; `bench --rate-search` (rate_search/)
finds the highest rate the pipeline sustains; `bench --camera-health` and
`bench --video-decoding` (offline/) need neither ROS nor Triton. Every bench stands on
session/: one BenchSession sets up and tears down the scratch directory, the private ROS domain
and os.environ, the server and the ROS participant.

Nothing is imported here: the floor node runs as
`python -m triton_perception.bench.session.floor_node`, which imports this package and
session/ first, and must not pay for the bench's imports (onnxruntime, the references,
tracking) in its memory: both faces are lazy.
"""
from triton_perception.faces import lazy_face

__getattr__, __dir__, __all__ = lazy_face(__name__, __file__)
