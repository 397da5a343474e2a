"""
Runs compared: two evaluations of a drive, or many drives' pairs summed, judged without labels.

Owns: the pairing of two runs' outputs frame by frame (run_pairing, run_comparison), the pair
of evaluations with its plot and changed frames (pair_evaluations, changed_frames), drives
compared over the fleet (fleet), latency's cost in accuracy (latency_pairing), a replay against
an expected report's per-frame figures (expected_frames) and what each says in report.md
(comparison_report). It reads metrics/ (the report's schema, replay outputs, charts) through
its face and nothing else of evaluation/; `bag compare` over two folders of drives, which runs
pairs as drive tasks, is evaluation/'s folder_comparison.
"""
from triton_perception.faces import lazy_face

__getattr__, __dir__, __all__ = lazy_face(__name__, __file__)
