"""
Judging replays: what the perception published for a bag, scored and compared.

Owns: the replay of a camera bag through the pipeline and what it measured (evaluation,
figures), accuracy against labels through the metric registry (metric, *_metric, accuracy,
accuracy_report), runs compared with each other (comparison/), drives one after another or on
Ray (drives, drive_tasks), report.md's text (markdown_report) and the report's schema, which
writes report.json and report.md (report_schema). Reading and writing the bags themselves is
bag/'s.
"""
from triton_perception.faces import lazy_face

__getattr__, __dir__, __all__ = lazy_face(__name__, __file__)
