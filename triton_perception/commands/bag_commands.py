"""`triton-perception bag make|play|record`: command-line front of the bag tools."""
from __future__ import annotations

import argparse
import os
from pathlib import Path
import sys
import time
from typing import TYPE_CHECKING

from triton_perception import bag, evaluation, nodes, system
from triton_perception.bag import BagError, ENCODINGS

if TYPE_CHECKING:
    from triton_perception.evaluation import ReplayReport

STORAGE_HELP = ("rosbag2 storage; by default the one ROS_DISTRO's `ros2 bag record` uses: "
                'sqlite3 on Humble, mcap on Jazzy and Kilted')


def _progress(line: str) -> None:
    print(f'bag: {line}', file=sys.stderr, flush=True)


def command_make(arguments: argparse.Namespace) -> int:
    """Run `bag make`: a video file or image directory -> a camera bag."""
    bag.make_bag(arguments.source, arguments.output, topic=arguments.topic,
                 frame_id=arguments.frame_id, storage=arguments.storage,
                 compressed=arguments.compressed, rate_hz=arguments.rate,
                 max_frames=arguments.max_frames, encoding=arguments.encoding, progress=_progress,
                 camera_info=arguments.camera_info, video=arguments.video)
    return 0


def command_play(arguments: argparse.Namespace) -> int:
    """Run `bag play`: publish a bag's messages at their recorded timing until done or stopped."""
    import rclpy  # noqa: PLC0415
    from rclpy.signals import SignalHandlerOptions  # noqa: PLC0415

    # The signals only end playback: the context must outlive them for the last acknowledgements.
    stop = system.StopRequest.on_signals()
    os.environ.update(system.dds_profile_environment())
    rclpy.init(signal_handler_options=SignalHandlerOptions.NO)
    node = rclpy.create_node('bag_player')
    try:
        with nodes.ends_cleanly(stop, node.get_logger().debug):
            summary = bag.play_bag(arguments.bag, node, rate=arguments.rate, loop=arguments.loop,
                                   start_offset_s=arguments.start_offset, topics=arguments.topics,
                                   qos_reliability=arguments.reliability,
                                   wait_for_subscribers=arguments.wait_for_subscribers,
                                   progress=_progress, stop_event=stop.event)
            _progress(f'published {summary.published} messages in {summary.wall_s:.1f} s '
                      f'(lateness mean {summary.lateness_mean_ms:.1f} ms, max '
                      f'{summary.lateness_max_ms:.1f} ms)')
    finally:
        node.destroy_node()
        rclpy.try_shutdown()
    return 0


def command_record(arguments: argparse.Namespace) -> int:
    """
    Run `bag record`: record TOPIC:TYPE pairs until Ctrl-C, SIGTERM or `--duration` (s).

    Raises BagError if a topic is not given as TOPIC:TYPE.
    """
    import rclpy  # noqa: PLC0415
    from rclpy.executors import SingleThreadedExecutor  # noqa: PLC0415
    from rclpy.signals import SignalHandlerOptions  # noqa: PLC0415

    topics = {}
    for item in arguments.topics:
        topic, separator, type_name = item.partition(':')
        if not separator:
            raise BagError(f"'{item}' is not TOPIC:TYPE, e.g. /detections:vision_msgs/msg/"
                           'Detection2DArray')
        topics[topic] = type_name
    # The signals only end recording: the context must outlive them while the bag is closed.
    stop = system.StopRequest.on_signals()
    os.environ.update(system.dds_profile_environment())
    rclpy.init(signal_handler_options=SignalHandlerOptions.NO)
    node = rclpy.create_node('bag_recorder')
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    deadline = time.monotonic() + arguments.duration if arguments.duration else None
    try:
        with bag.BagRecorder(node, arguments.output, topics, storage=arguments.storage,
                             reliability=arguments.reliability) as recorder:
            _progress(f'recording {", ".join(topics)} to {arguments.output}; Ctrl-C to stop')
            next_report = time.monotonic() + 5.0
            with nodes.ends_cleanly(stop, node.get_logger().debug):
                # Spin in short turns: without rclpy's handlers a signal does not wake the wait.
                while not stop.requested and (deadline is None or time.monotonic() < deadline):
                    executor.spin_once(timeout_sec=0.1)
                    if time.monotonic() >= next_report:
                        _progress(f'recorded {recorder.counts()}')
                        next_report = time.monotonic() + 5.0
        _progress(f'recorded {recorder.counts()} to {arguments.output}')
    finally:
        node.destroy_node()
        rclpy.try_shutdown()
    return 0


def command_export_frames(arguments: argparse.Namespace) -> int:
    """Run `bag export-frames`: the frames as images named by stamp, and frames.json."""
    topic = arguments.topic or evaluation.default_camera_topic(arguments.bag)
    summary = bag.export_frames(arguments.bag, arguments.output, topic=topic,
                                every=arguments.every, image_format=arguments.format,
                                progress=_progress)
    _progress(f'exported {summary.exported} of {summary.frames_in_topic} frames to '
              f'{summary.output} (frames.json lists index, stamp_ns and file of each)')
    return 0


def command_evaluate(arguments: argparse.Namespace) -> int:
    """
    Run `bag evaluate` and print the report.

    Returns 1 when a node did not account for every frame or a figure regressed against
    `--expected`, else 0.
    """
    settings = evaluation.EvaluationSettings(
        bag=arguments.bag, output=arguments.output, topic=arguments.topic, rate=arguments.rate,
        timing=arguments.timing, triton_url=arguments.triton_url, profile=arguments.profile,
        precision=arguments.precision,
        params_file=arguments.params_file, record_masks=arguments.record_masks,
        expected=arguments.expected, process_layout=arguments.process_layout,
        labels=tuple(arguments.labels), criteria=arguments.criteria,
        lanes_scored=arguments.lanes_scored,
        lane_rows_from_labels=arguments.lane_rows_from_labels,
        sparse_tracks=arguments.sparse_track_labels,
        change_thresholds=tuple(arguments.change_threshold),
        export_changed=_export_changed(arguments.export_changed))
    if arguments.latency_cost:
        try:
            rates = tuple(float(rate) for rate in arguments.rates.split(',') if rate.strip())
        except ValueError as error:
            raise BagError(f'--rates: {error}') from None
        cost = evaluation.evaluate_latency_cost(settings, rates, _progress)
        print(evaluation.cost_markdown(cost))
        _progress(f'report: {arguments.output / "report.md"} and latency_cost.json; each '
                  f'run in {arguments.output}/[<drive>/]<run>/')
        return 0
    bags = evaluation.drive_bags(arguments.bag)
    if bags is not None:
        drives = evaluation.evaluate_drives(settings, bags, _progress, arguments.workers,
                                            arguments.ray_address)
        print(evaluation.drives_markdown(drives))
        _progress(f'report: {arguments.output / "report.md"} and report.json; each drive\'s in '
                  f'{arguments.output}/<drive>/')
        changed = drives.get('comparison', {}).get('flagged')
        return 1 if changed or any(not part.get('criteria', {}).get('passed', True)
                                   or 'failed' in part
                                   for part in (drives, *drives['drives'].values())) else 0
    report = evaluation.evaluate(settings, log=_progress)
    print(evaluation.report_markdown(report))
    _progress(f'report: {arguments.output / "report.md"} and report.json')
    unaccounted = [node for node, figures in report['nodes'].items() if not figures['accounted']]
    if unaccounted:
        _progress(f'frames not accounted for by {", ".join(unaccounted)}: see the report')
    comparison = report.get('comparison', {})
    regressed = comparison.get('regressions') or comparison.get('runs', {}).get('flagged')
    return 1 if regressed or unaccounted or _criteria_failed(report) else 0


def _criteria_failed(report: ReplayReport) -> bool:
    criteria = report.get('criteria')
    if criteria is None:
        return False
    if criteria['passed']:
        _progress('criteria: passed')
        return False
    _progress('criteria: FAILED: ' + '; '.join(criteria['failing']))
    return True


def command_score(arguments: argparse.Namespace) -> int:
    """Run `bag score`: an earlier evaluation's outputs against labels, without Triton."""
    report = evaluation.score(arguments.evaluation, arguments.output, evaluation.Scoring(
        tuple(arguments.labels), arguments.criteria, arguments.params_file,
        arguments.lanes_scored, arguments.lane_rows_from_labels, arguments.sparse_track_labels),
        _progress)
    print(evaluation.report_markdown(report))
    _progress(f'report: {arguments.output / "report.md"} and report.json')
    return 1 if _criteria_failed(report) else 0


def command_compare(arguments: argparse.Namespace) -> int:
    """Run `bag compare`: two evaluations paired frame by frame; 1 when a change is flagged."""
    options = evaluation.CompareOptions(dict(arguments.change_threshold),
                                        _export_changed(arguments.export_changed),
                                        evaluation.detection_labels(arguments.params_file))
    flagged, text = evaluation.compare(arguments.old, arguments.new, arguments.output, options,
                                       arguments.workers, arguments.ray_address, _progress)
    print(text)
    if arguments.output:
        _progress(f'report: {arguments.output / "report.md"} and comparison.json')
    return 1 if flagged else 0


def _export_changed(values: list[str] | None) -> tuple[int, Path] | None:
    """Return --export-changed N DIR as (N, DIR), None when not given."""
    if not values:
        return None
    return _positive_int(values[0]), Path(values[1])


def _threshold(text: str) -> tuple[str, float]:
    """Parse FIGURE=SHARE of --change-threshold (argparse type)."""
    name, separator, value = text.partition('=')
    try:
        if not separator:
            raise ValueError(text)
        return name, float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f'{text} is not FIGURE=SHARE, e.g. lanes=0.1') from None


def _add_comparison_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument('--change-threshold', type=_threshold, action='append', default=[],
                        metavar='FIGURE=SHARE',
                        help='flag a figure (detection, identity, lanes, ego_lane, drivable_area) '
                        'only when its whole 95 %% interval of agreement lies below 1 - SHARE; '
                        'repeat for several (defaults in docs/bags.md)')
    parser.add_argument('--export-changed', nargs=2, default=None, metavar=('N', 'DIR'),
                        help='write the N frames where the runs disagree most to DIR as '
                        'export-frames does, with both runs drawn side by side')


def _add_params_file(parser: argparse.ArgumentParser, runs: str) -> None:
    parser.add_argument('--params-file', type=Path, default=None,
                        help=f'the parameters the {runs} ran with (for the class names)')


def _add_scoring_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument('--labels', type=Path, action='append', default=[], metavar='PATH',
                        help='labels to score against, recognised by their form: COCO JSON, '
                        'MOTChallenge gt.txt, a directory of CULane .lines.txt, TuSimple '
                        'JSON lines; repeat for several (docs/bags.md)')
    parser.add_argument('--criteria', type=Path, default=None,
                        help="YAML of floors ('floors': {lanes.F1: 0.8}) and per-frame "
                        "thresholds ('frames': {lane_F1, detection_recall, pass_rate}): "
                        'exit 1 when one fails')
    parser.add_argument('--lanes-scored', choices=['all', 'ego'], default='all',
                        help="score every published lane, or only the ego lane's two lines "
                        '(for labels that mark only those)')
    parser.add_argument('--lane-rows-from-labels', action='store_true',
                        help="crop published lanes to the rows their frame's labels span "
                        "(for labels read at a few rows); not CULane's protocol")
    parser.add_argument('--sparse-track-labels', action='store_true',
                        help='score tracks only on the frames gt.txt has rows for (labels made '
                        'every Nth frame); MOTChallenge scores every frame in between')


def _positive_int(text: str) -> int:
    """Parse a whole number of at least 1 (argparse type)."""
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f'{text} is not a whole number of at least 1')
    return value


def _add_make_command(actions: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `bag make`."""
    make = actions.add_parser('make', help='video file or image directory -> camera bag')
    make.add_argument('source', type=Path, help='video file, or directory of images')
    make.add_argument('output', type=Path, help='bag directory to create (must not exist)')
    make.add_argument('--topic', default='/camera/image_raw')
    make.add_argument('--frame-id', default='camera')
    make.add_argument('--storage', choices=['mcap', 'sqlite3'], default=None,
                      help=STORAGE_HELP)
    make.add_argument('--compressed', action='store_true',
                      help='write sensor_msgs/CompressedImage (jpeg) instead of Image')
    make.add_argument('--encoding', choices=ENCODINGS, default=ENCODINGS[0])
    make.add_argument('--rate', type=float, default=None,
                      help="frames per second (default: the video's; 10 for images)")
    make.add_argument('--max-frames', type=int, default=None)
    make.add_argument('--camera-info', type=Path, default=None, metavar='CALIBRATION_YAML',
                      help='also write CameraInfo from this calibration (camera_calibration_'
                      'parsers YAML) on the sibling camera_info topic, for the ground outputs')
    make.add_argument('--video', choices=['h264', 'h265'], default=None,
                      help='write foxglove_msgs/CompressedVideo on TOPIC/foxglove instead, a '
                      'keyframe every 10 frames')
    make.set_defaults(run=command_make)


def _add_play_command(actions: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `bag play`."""
    play = actions.add_parser('play', help='publish a bag at its recorded timing')
    play.add_argument('bag', type=Path)
    play.add_argument('--rate', type=float, default=1.0, help='speed factor')
    play.add_argument('--loop', action='store_true')
    play.add_argument('--start-offset', type=float, default=0.0, help='seconds into the bag')
    play.add_argument('--topics', nargs='+', default=None)
    play.add_argument('--reliability', choices=['reliable', 'best_effort'], default='reliable')
    play.add_argument('--wait-for-subscribers', type=int, default=0,
                      help='wait until each topic has this many subscribers')
    play.set_defaults(run=command_play)


def _add_record_command(actions: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `bag record`."""
    record = actions.add_parser('record', help='record topics into a bag')
    record.add_argument('output', type=Path)
    record.add_argument('--topics', nargs='+', required=True, metavar='TOPIC:TYPE',
                        help='e.g. /detections:vision_msgs/msg/Detection2DArray')
    record.add_argument('--storage', choices=['mcap', 'sqlite3'], default=None,
                        help=STORAGE_HELP)
    record.add_argument('--reliability', choices=['reliable', 'best_effort'],
                        default='reliable')
    record.add_argument('--duration', type=float, default=None, help='seconds, then stop')
    record.set_defaults(run=command_record)


def _add_export_command(actions: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `bag export-frames`."""
    export = actions.add_parser('export-frames', help='camera frames -> images named by '
                                'stamp, for labelling (CVAT, Label Studio)')
    export.add_argument('bag', type=Path)
    export.add_argument('--output', type=Path, required=True, help='directory for the images')
    export.add_argument('--topic', default=None)  # /camera/image_raw, else the only camera
    export.add_argument('--every', type=int, default=1, help='export every Nth frame')
    export.add_argument('--format', choices=['png', 'jpg'], default='png',
                        help='png is lossless; jpg (quality 95) is smaller')
    export.set_defaults(run=command_export_frames)


def _add_evaluate_command(actions: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `bag evaluate`."""
    evaluate = actions.add_parser(
        'evaluate', help='replay a bag through the pipeline and report (or compare) results')
    evaluate.add_argument('bag', type=Path, help='a bag, or a directory of bags (several drives, '
                          'scored each and together against one Triton)')
    evaluate.add_argument('--output', type=Path, required=True,
                          help='directory for report.json, report.md and the outputs bag')
    evaluate.add_argument('--topic', default=None, help='image topic (default: the only one)')
    evaluate.add_argument('--rate', type=float, default=1.0,
                          help='replay speed factor (with --timing recorded)')
    evaluate.add_argument('--timing', choices=['lockstep', 'recorded'], default=None,
                          help='lockstep: each frame once the nodes answered the one before '
                               '(every frame answered, the same results at any load); recorded: '
                               "the bag's timing times --rate (drops and latency as on a "
                               'robot). Default: lockstep with --labels or --criteria, else '
                               'recorded')
    evaluate.add_argument('--triton-url', default='',
                          help='use this Triton (HOST:PORT) instead of starting one')
    evaluate.add_argument('--profile', choices=['auto', 'tensorrt', 'cpu'], default='auto')
    evaluate.add_argument('--precision', choices=['fp', 'int8'], default='fp',
                          help='fp: the float graphs; int8: those of `models quantize` '
                          '(docs/models.md); report.md names the one served')
    evaluate.add_argument('--params-file', type=Path, default=None,
                          help='node parameters (default config/params.yaml)')
    evaluate.add_argument('--record-masks', action='store_true',
                          help='also record drivable_area masks (large)')
    evaluate.add_argument('--expected', type=Path, default=None,
                          help='report.json of an earlier run: fail on regressions beyond the '
                               'tolerances')
    evaluate.add_argument('--workers', type=_positive_int, default=1,
                          help='with a directory of drives: replay this many at once, as Ray '
                               'tasks on a local Ray instance (default 1: one after another, '
                               'without Ray)')
    evaluate.add_argument('--ray-address', default='',
                          help='with a directory of drives: run them as tasks on this Ray '
                               'cluster (default: RAY_ADDRESS, else a local Ray with --workers)')
    evaluate.add_argument('--process-layout', choices=['single', 'per_node'], default='single',
                          help='the nodes in one perception_process, or one process per node')
    evaluate.add_argument('--latency-cost', action='store_true',
                          help='replay in lockstep, at recorded timing and at each of --rates, '
                          'pair every run with the lockstep one frame by frame and report what '
                          'each figure loses, with intervals (exit 0: the losses are figures)')
    evaluate.add_argument('--rates', default='',
                          help='with --latency-cost: publisher rates (frames/s) to replay the '
                          "bag's frames at, e.g. 5,10,15,30")
    _add_scoring_arguments(evaluate)
    _add_comparison_arguments(evaluate)
    evaluate.set_defaults(run=command_evaluate)


def _add_score_command(actions: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `bag score`."""
    score = actions.add_parser('score', help="score an earlier evaluation's outputs against "
                               'labels again, without Triton')
    score.add_argument('evaluation', type=Path, help='the --output directory of bag evaluate')
    score.add_argument('--output', type=Path, required=True,
                       help='directory for the new report.json and report.md')
    _add_params_file(score, 'evaluation')
    _add_scoring_arguments(score)
    score.set_defaults(run=command_score)


def _add_compare_command(actions: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `bag compare`."""
    compare = actions.add_parser('compare', help='pair two evaluations frame by frame without '
                                 'labels or Triton; exit 1 when a change is flagged')
    compare.add_argument('old', type=Path, help='an earlier bag evaluate --output folder, or a '
                         'folder of drives')
    compare.add_argument('new', type=Path, help='the later one (the same drives)')
    compare.add_argument('--output', type=Path, default=None,
                         help='directory for comparison.json, report.md and the plots')
    _add_params_file(compare, 'evaluations')
    compare.add_argument('--workers', type=_positive_int, default=1,
                         help='with folders of drives: compare this many at once, as Ray tasks')
    compare.add_argument('--ray-address', default='',
                         help='with folders of drives: run them as tasks on this Ray cluster')
    _add_comparison_arguments(compare)
    compare.set_defaults(run=command_compare)


def add_bag_commands(
        commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the `bag` command and its make, play, record and evaluate subcommands to `commands`."""
    bag_parser = commands.add_parser(
        'bag', help='make, play and record rosbag2 files (no ROS install needed)')
    actions = bag_parser.add_subparsers(dest='bag_command', required=True)
    _add_make_command(actions)
    _add_play_command(actions)
    _add_record_command(actions)
    _add_export_command(actions)
    _add_evaluate_command(actions)
    _add_score_command(actions)
    _add_compare_command(actions)
