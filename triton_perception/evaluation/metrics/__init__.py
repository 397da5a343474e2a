"""
What a replay left and how it is scored: the room below evaluation/'s replays and comparison/.

Owns: a replay's outputs read back from its bag (replay_outputs), the `Metric` a label kind is
scored with, the three metrics and their one registry (metric, *_metric, metric_registry), the
report's schema, which writes report.json and report.md (report_schema), the camera health
figures it carries (camera_health_summary) and the charts drawn from scored frames
(accuracy_figures). Nothing here replays a bag or compares two runs: both read this room.
"""
from triton_perception.faces import lazy_face

__getattr__, __dir__, __all__ = lazy_face(__name__, __file__)
