"""
Runs compared: two evaluations of a drive, or of many drives, judged without labels.

Owns: the pairing of two runs' outputs frame by frame (run_pairing, run_comparison), the pair
of evaluations with its plot and changed frames (pair_evaluations, changed_frames), drives
compared over the fleet (fleet_comparison), `bag compare` over two folders (folder_comparison),
a replay against an expected report's per-frame figures (frame_comparison) and what each says
in report.md (comparison_report). It reads evaluation's report schema, replay outputs and
figures, and runs drives through evaluation's drive_tasks; nothing here replays a bag.
"""
from triton_perception.faces import lazy_face

__getattr__, __dir__, __all__ = lazy_face(__name__, __file__)
