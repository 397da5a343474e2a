"""
Judging replays: what the perception published for a bag, scored and compared.

Owns: the replay of a camera bag through the pipeline and what it measured (evaluation,
figures, replay_session), accuracy against labels (accuracy, accuracy_report), drives one after
another or on Ray (drives, drive_tasks), `bag compare` over two folders of drives
(folder_comparison), latency's cost (latency_cost), INT8's guard (quantization_guard) and
report.md's text (markdown_report). Two rooms below: metrics/ (replay outputs, the metric
registry, the report's schema) and comparison/ (two runs paired frame by frame), each read
through its face. Reading and writing the bags themselves is bag/'s.
"""
from triton_perception.faces import lazy_face

__getattr__, __dir__, __all__ = lazy_face(__name__, __file__)
