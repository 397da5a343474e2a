"""The public face of evaluation/: read by type checkers and by faces.lazy_face."""
from triton_perception.evaluation.accuracy_report import score as score, Scoring as Scoring
from triton_perception.evaluation.comparison.pair_evaluations import (
    CompareOptions as CompareOptions)
from triton_perception.evaluation.drives import (drive_bags as drive_bags,
                                                 drives_markdown as drives_markdown,
                                                 evaluate_drives as evaluate_drives,
                                                 replay_test as replay_test)
from triton_perception.evaluation.evaluation import (camera_topic as camera_topic,
                                                     default_camera_topic as default_camera_topic,
                                                     evaluate as evaluate,
                                                     EvaluationSettings as EvaluationSettings,
                                                     image_subscriptions as image_subscriptions,
                                                     replay_plan as replay_plan,
                                                     SUBSCRIBERS_TIMEOUT_S as SUBSCRIBERS_TIMEOUT_S)
from triton_perception.evaluation.folder_comparison import compare as compare
from triton_perception.evaluation.figures import (detection_labels as detection_labels,
                                                  node_figures as node_figures, NODES as NODES,
                                                  replay_speed as replay_speed)
from triton_perception.evaluation.latency_cost import (cost_markdown as cost_markdown,
                                                       evaluate_latency_cost as evaluate_latency_cost)
from triton_perception.evaluation.markdown_report import (report_markdown as report_markdown,
                                                          write_report as write_report)
from triton_perception.evaluation.quantization_guard import (check_guard_drives as check_guard_drives,
                                                             guard_quantization as guard_quantization,
                                                             GuardVerdict as GuardVerdict)
from triton_perception.evaluation.replay_session import pipeline_session as pipeline_session
from triton_perception.evaluation.metrics.report_schema import (DrivesReport as DrivesReport,
                                                        read_report as read_report,
                                                        ReplayReport as ReplayReport,
                                                        SCHEMA_VERSION as SCHEMA_VERSION)
