"""The public face of bag/: read by type checkers and by faces.lazy_face."""
from triton_perception.bag.accuracy_report import report_markdown as report_markdown
from triton_perception.bag.bag_cli import add_bag_commands as add_bag_commands
from triton_perception.bag.bag_format import (
    BagError as BagError,
    ENCODINGS as ENCODINGS,
    typestore as typestore,
)
from triton_perception.bag.drives import (
    evaluate_drives as evaluate_drives,
    replay_test as replay_test,
)
from triton_perception.bag.evaluation import (
    camera_topic as camera_topic,
    evaluate as evaluate,
    EvaluationSettings as EvaluationSettings,
    image_subscriptions as image_subscriptions,
    pipeline_session as pipeline_session,
    replay_plan as replay_plan,
    SUBSCRIBERS_TIMEOUT_S as SUBSCRIBERS_TIMEOUT_S,
)
from triton_perception.bag.figures import (
    node_figures as node_figures,
    NODES as NODES,
    replay_speed as replay_speed,
)
from triton_perception.bag.make import make_bag as make_bag
from triton_perception.bag.play import play_bag as play_bag
from triton_perception.bag.reading import read_images as read_images
from triton_perception.bag.report_schema import (
    DrivesReport as DrivesReport,
    read_report as read_report,
    ReplayReport as ReplayReport,
    SCHEMA_VERSION as SCHEMA_VERSION,
)
