"""
rosbag2 tools without a ROS install: make camera bags from media, play them, record topics.

``make`` and ``reading`` use only rosbags, OpenCV and numpy, so bags can be built and
inspected anywhere; ``play`` and ``record`` need rclpy. Nothing is imported here, so
importing one module never pulls in ROS or OpenCV for another.
Imports: `frames/`, `ground/`, `models/`, `nodes/`, `outputs/`, `pipeline/`, `qos.py`, `scoring/`,
`serving/`, `system/`, `tracking/`.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from triton_perception.system.faces import lazy_face

if TYPE_CHECKING:
    from triton_perception.bag.accuracy_report import report_markdown
    from triton_perception.bag.bag_cli import add_bag_commands
    from triton_perception.bag.bag_format import BagError, ENCODINGS, typestore
    from triton_perception.bag.drives import evaluate_drives, replay_test
    from triton_perception.bag.evaluation import (camera_topic, evaluate, EvaluationSettings,
                                                  image_subscriptions, pipeline_session,
                                                  replay_plan, SUBSCRIBERS_TIMEOUT_S)
    from triton_perception.bag.figures import node_figures, NODES, replay_speed
    from triton_perception.bag.make import make_bag
    from triton_perception.bag.play import play_bag
    from triton_perception.bag.reading import read_images
    from triton_perception.bag.report_schema import (DrivesReport, read_report, ReplayReport,
                                                     SCHEMA_VERSION)

__all__ = ['add_bag_commands', 'BagError', 'camera_topic', 'DrivesReport', 'ENCODINGS',
           'evaluate', 'evaluate_drives', 'EvaluationSettings', 'image_subscriptions', 'make_bag',
           'node_figures', 'NODES', 'pipeline_session', 'play_bag', 'read_images', 'read_report',
           'replay_plan', 'replay_speed', 'replay_test', 'ReplayReport', 'report_markdown',
           'SCHEMA_VERSION', 'SUBSCRIBERS_TIMEOUT_S', 'typestore']
__getattr__ = lazy_face(__name__, {
    'accuracy_report': ('report_markdown',),
    'bag_cli': ('add_bag_commands',),
    'bag_format': ('BagError', 'ENCODINGS', 'typestore'),
    'drives': ('evaluate_drives', 'replay_test'),
    'evaluation': ('camera_topic', 'evaluate', 'EvaluationSettings', 'image_subscriptions',
                   'pipeline_session', 'replay_plan', 'SUBSCRIBERS_TIMEOUT_S'),
    'figures': ('node_figures', 'NODES', 'replay_speed'),
    'make': ('make_bag',),
    'play': ('play_bag',),
    'reading': ('read_images',),
    'report_schema': ('DrivesReport', 'read_report', 'ReplayReport', 'SCHEMA_VERSION'),
})
