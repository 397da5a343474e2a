"""The public face of evaluation/comparison/: read by type checkers and by faces.lazy_face."""
from triton_perception.evaluation.comparison.comparison_report import (runs_markdown as runs_markdown)
from triton_perception.evaluation.comparison.expected_frames import (comparison_markdown as comparison_markdown,
                                                                     frame_comparison as frame_comparison)
from triton_perception.evaluation.comparison.fleet import (fleet_comparison as fleet_comparison,
                                                           fleet_markdown as fleet_markdown)
from triton_perception.evaluation.comparison.latency_pairing import (cost_of as cost_of,
                                                                     first_flagged as first_flagged,
                                                                     Loss as Loss,
                                                                     loss_of as loss_of,
                                                                     over_drives as over_drives)
from triton_perception.evaluation.comparison.pair_evaluations import (compare_evaluation as compare_evaluation,
                                                                      compare_pair as compare_pair,
                                                                      CompareOptions as CompareOptions)
from triton_perception.evaluation.comparison.run_comparison import (load_run as load_run,
                                                                    REPORT_FILE as REPORT_FILE,
                                                                    report_file as report_file,
                                                                    thresholds_of as thresholds_of)
from triton_perception.evaluation.comparison.run_pairing import FIGURES as FIGURES
