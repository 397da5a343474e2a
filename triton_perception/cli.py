"""
`triton-perception`: the command line of the package.

One entry point for the server, models, the pipeline, bags and benchmarks.
"""
from __future__ import annotations

import argparse
from pathlib import Path
import signal
import sys
import threading
import time
from typing import Callable, Sequence

from triton_perception.bag.bag_cli import add_bag_commands
from triton_perception.bag.bag_format import BagError
from triton_perception.frames.frame_range import (DEFAULT_MAX, DEFAULT_MIN, FrameRange,
                                                  FrameRangeError, parse_size)
from triton_perception.lanes.lane_models.spec import LAYOUTS as LANE_LAYOUTS
from triton_perception.models.shipped_models import (default_models_directory, ExportChecks,
                                                     install_models, ModelInstallError)
from triton_perception.pipeline.plan import (ARGUMENTS, parse_launch_arguments, pipeline_plan,
                                             PlanError)
from triton_perception.scoring.labels import LabelError
from triton_perception.serving.engines import build_engines, EngineBuildError
from triton_perception.serving.triton_server import (PROFILES, ServerConfig, ServerError,
                                                     TritonServer)
from triton_perception.system.paths import DEFAULT_CLIP, default_model_repository
from triton_perception.system.processes import die_with_parent


SCORED_FRAMES = 1000  # the bench's scoring figure: labelled frames scored in one call


class Interrupted(Exception):
    """SIGINT or SIGTERM arrived; unwind and stop child processes."""


def raise_on_termination() -> None:
    """Turn SIGTERM (and SIGINT) into an exception so cleanup code runs on both."""
    def handler(signum: int, _frame: object) -> None:
        raise Interrupted(signal.Signals(signum).name)
    signal.signal(signal.SIGTERM, handler)
    signal.signal(signal.SIGINT, handler)


def add_server_arguments(parser: argparse.ArgumentParser) -> None:
    """Add tritonserver's options (repository, profile, binary, address, ports) to `parser`."""
    parser.add_argument('--model-repository', type=Path, default=None,
                        help="Triton model repository (default: the package's)")
    parser.add_argument('--profile', choices=PROFILES, default='auto',
                        help='tensorrt (Orin engines), cpu (ONNX via the Python backend), or auto: '
                             'tensorrt when engines exist (default)')
    parser.add_argument('--tritonserver', default=None, help='path of the tritonserver binary')
    parser.add_argument('--address', default='127.0.0.1',
                        help='address to bind HTTP, gRPC and metrics to (default loopback only)')
    parser.add_argument('--http-port', type=int, default=8000)
    parser.add_argument('--grpc-port', type=int, default=8001)
    parser.add_argument('--metrics-port', type=int, default=8002)
    parser.add_argument('--ready-timeout', type=float, default=600.0,
                        help='seconds to wait for the models to load (engine loads can be slow)')


def server_config_from(arguments: argparse.Namespace) -> ServerConfig:
    """Return the ServerConfig the parsed server options describe."""
    return ServerConfig(
        model_repository=arguments.model_repository or default_model_repository(),
        profile=arguments.profile, tritonserver=arguments.tritonserver,
        address=arguments.address, http_port=arguments.http_port,
        grpc_port=arguments.grpc_port, metrics_port=arguments.metrics_port,
        ready_timeout_s=arguments.ready_timeout)


def command_server(arguments: argparse.Namespace) -> int:
    """Run `server`: start tritonserver and serve until Ctrl-C or SIGTERM (0) or it exits (1)."""
    server = TritonServer(server_config_from(arguments))
    raise_on_termination()
    try:
        server.start()
        server.wait_until_ready()
        print(f'serving; stop with Ctrl-C (gRPC {server.grpc_url})', file=sys.stderr, flush=True)
        while server.poll() is None:
            time.sleep(0.5)
        print(f'tritonserver exited with code {server.poll()}', file=sys.stderr)
        return 1
    except Interrupted:
        return 0
    finally:
        server.stop()


def command_models(arguments: argparse.Namespace) -> int:
    """
    Run `models install|list`: the shipped models, or a detector or lane model of your own.

    Returns 0, or 2 when a detector's options are incomplete or it cannot be installed.
    """
    from triton_perception.models.detectors import DetectorInstallError  # noqa: PLC0415
    from triton_perception.models.detectors import install_detector, installed_detectors

    repository = arguments.model_repository or default_model_repository()
    log = lambda line: print(f'models: {line}', flush=True)  # noqa: E731
    if arguments.action == 'list':
        detectors = installed_detectors(repository)
        print('| detector | layout | input (w x h) | classes | sha256 of the ONNX file |')
        print('| --- | --- | --- | --- | --- |')
        for detector in detectors:
            print(f'| {detector.name} | {detector.layout} | {detector.input_width} x '
                  f'{detector.input_height} | {detector.classes} | {detector.sha256} |')
        if not detectors:
            print(f"no detectors in {repository}: run 'triton-perception models install'")
        print_lane_models(repository)
        return 0
    if arguments.lanes or arguments.lanes_served:
        return install_lanes(arguments, repository, log)
    if arguments.detector or arguments.labels or arguments.name:
        missing = [flag for flag, value in (('--detector', arguments.detector),
                                            ('--labels', arguments.labels),
                                            ('--name', arguments.name)) if not value]
        if missing:
            print(f"triton-perception: error: installing a detector needs {', '.join(missing)} "
                  'too', file=sys.stderr)
            return 2
        if arguments.layout in LANE_LAYOUTS:
            print(f'triton-perception: error: --layout {arguments.layout} is a lane layout; a '
                  "detector's is auto, yolov5 or yolov8", file=sys.stderr)
            return 2
        try:
            install_detector(repository, arguments.detector, arguments.labels, arguments.name,
                             arguments.layout, log=log)
        except DetectorInstallError as error:
            print(f'triton-perception: error: {error}', file=sys.stderr)
            return 2
        return 0
    checks = ExportChecks(tuple(arguments.check_images), not arguments.no_behaviour_check)
    install_models(repository, arguments.source or default_models_directory(), log=log,
                   checks=checks)
    return 0


def print_lane_models(repository: Path) -> None:
    """Print the installed lane models as a Markdown table, the shipped one first if installed."""
    from triton_perception.lanes.lane_models.spec import installed_lane_models, shipped_lane_model
    from triton_perception.lanes.lane_models.spec import SHIPPED_LANES  # noqa: PLC0415
    lane_models = installed_lane_models(repository)
    if SHIPPED_LANES not in [model.name for model in lane_models] and (
            repository / SHIPPED_LANES).is_dir():
        lane_models.insert(0, shipped_lane_model())
    print('\n| lane model | layout | input (w x h, type) | outputs | source |')
    print('| --- | --- | --- | --- | --- |')
    for model in lane_models:
        print(f'| {model.name} | {model.layout} | {model.input_width} x {model.input_height}, '
              f"{model.input_type} | {', '.join(model.outputs)} | {model.source} |")


def install_lanes(arguments: argparse.Namespace, repository: Path,
                  log: Callable[[str], None]) -> int:
    """`models install --lanes FILE.onnx | --lanes-served MODEL --name NAME --layout L`."""
    from triton_perception.models.lane_model_install import install_lane_model  # noqa: PLC0415
    from triton_perception.models.lane_model_install import install_served_lane_model, remove_steps
    from triton_perception.lanes.lane_models.spec import LaneConfigError  # noqa: PLC0415
    problems = [text for text, bad in (
        ('give one of --lanes and --lanes-served', bool(arguments.lanes) == bool(
            arguments.lanes_served)),
        ('--name is needed', not arguments.name),
        (f"--layout must be one of {', '.join(LANE_LAYOUTS)}", arguments.layout not in
         LANE_LAYOUTS)) if bad]
    if problems:
        print(f"triton-perception: error: installing a lane model: {'; '.join(problems)}",
              file=sys.stderr)
        return 2
    fresh = not (repository / arguments.name).exists()
    try:
        if arguments.lanes:
            install_lane_model(repository, arguments.lanes, arguments.name, arguments.layout,
                               arguments.lane_config, log=log)
        else:
            install_served_lane_model(repository, arguments.lanes_served, arguments.name,
                                      arguments.layout, arguments.lane_config, log=log)
    except (LaneConfigError, ValueError) as error:
        if fresh:  # nothing of a previous install is removed
            remove_steps(repository, arguments.name)
        print(f'triton-perception: error: {error}', file=sys.stderr)
        return 2
    return 0


def command_run(arguments: argparse.Namespace) -> int:
    """Run `run`: the pipeline of the name:=value launch arguments until SIGINT or SIGTERM."""
    # Deferred: the runner imports tritonclient, node_process rclpy.
    from triton_perception.nodes.node_process import StopRequest  # noqa: PLC0415
    from triton_perception.pipeline.runner import PipelineRunner  # noqa: PLC0415

    plan = pipeline_plan(parse_launch_arguments(arguments.launch_arguments))
    stop = StopRequest.on_signals(
        lambda name: print(f'[run] {name}: stopping', file=sys.stderr, flush=True))
    return PipelineRunner(plan).run(stop.event)


def command_wait_ready(arguments: argparse.Namespace) -> int:
    """Run `wait-ready`: 0 once Triton at `--url` has the models ready, 1 on timeout or signal."""
    from triton_perception.pipeline.runner import wait_for_remote_models  # noqa: PLC0415

    die_with_parent()  # the readiness gate ends with the launch that started it
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    ready = wait_for_remote_models(arguments.url, tuple(arguments.models), stop,
                                   lambda line: print(line, file=sys.stderr, flush=True),
                                   arguments.timeout)
    return 0 if ready else 1


def command_engines(arguments: argparse.Namespace) -> int:
    """
    Run `engines build`: TensorRT engines for the repository's steps, with trtexec.

    `--frame-size` fixes one frame size; `--min-frame` and `--max-frame` set a range (the
    defaults fill in the other bound).
    """
    frame_range = None
    if arguments.frame_size:
        frame_range = FrameRange(parse_size(arguments.frame_size), parse_size(arguments.frame_size))
    elif arguments.max_frame or arguments.min_frame:
        frame_range = FrameRange(parse_size(arguments.min_frame or DEFAULT_MIN),
                                 parse_size(arguments.max_frame or DEFAULT_MAX))
    build_engines(arguments.model_repository or default_model_repository(), arguments.trtexec,
                  fp16=not arguments.fp32, workspace_mib=arguments.workspace_mib,
                  frame_range=frame_range, log=lambda line: print(f'engines: {line}', flush=True))
    return 0


def command_soak(arguments: argparse.Namespace) -> int:
    """Run `soak`: the looped replay; 0 if every frame was accounted for and memory grew < 10 %."""
    from triton_perception.bag.make import make_bag  # noqa: PLC0415 (rclpy imports)
    from triton_perception.apps.soak import soak  # noqa: PLC0415

    def log(line: str) -> None:
        print(f'soak: {line}', file=sys.stderr, flush=True)
    bag = arguments.bag or arguments.output / 'input_bag'
    if not bag.exists():
        make_bag(arguments.video or DEFAULT_CLIP, bag, progress=log)
    report = soak(bag, arguments.output, arguments.minutes, arguments.profile,
                  arguments.triton_url, log)
    for name, entry in report['memory'].items():
        print(f"{name}: RSS {entry['after_warm_up_mb']} MB after warm-up -> "
              f"{entry['end_mb']} MB ({entry['growth']:+.1%})")
    for node, figures in report['nodes'].items():
        print(f"{node}: received {figures['received']}, lost before the node "
              f"{figures['lost_before_node']}, published {figures['published']}, dropped "
              f"{figures['dropped']}, failed {figures['failed']}")
    print(f"accounting identity holds: {report['accounted']}; memory growth < 10 %: "
          f"{report['memory_ok']}; report {arguments.output / 'soak.json'}")
    return 0 if report['accounted'] and report['memory_ok'] else 1


def command_demo(arguments: argparse.Namespace) -> int:
    """Run `demo` on `--video` (default: the highway clip); 1 if the demo found a problem."""
    from triton_perception.apps.demo import run_demo  # noqa: PLC0415 (rclpy)

    return run_demo(arguments.video or DEFAULT_CLIP, arguments.output, arguments.profile,
                    lambda line: print(f'demo: {line}', file=sys.stderr, flush=True))


def bench_progress(line: str) -> None:
    """Print a benchmark's progress line on stderr, so that stdout holds only its tables."""
    print(f'bench: {line}', file=sys.stderr, flush=True)


def command_glue_bench(arguments: argparse.Namespace) -> int:
    """
    Run `bench --glue` and print its table; the caller has set up the termination handling.

    Returns 0 (whether or not the targets are met: they are figures to read), 2 on a bad
    setting or a failed run (BenchError), 130 when interrupted.
    """
    from triton_perception.bench.glue import GlueSettings, run_glue  # noqa: PLC0415 (rclpy)
    from triton_perception.bench.glue_report import glue_table  # noqa: PLC0415
    from triton_perception.bench.settings import BenchError  # noqa: PLC0415

    try:
        if arguments.triton_url:
            raise BenchError('--glue serves constant graphs from a server of its own; '
                             '--triton-url does not apply')
        settings = GlueSettings(
            camera_counts=tuple(int(count) for count in arguments.cameras.split(',') if count),
            layouts=tuple(name.strip() for name in arguments.layouts.split(',') if name.strip()),
            window_s=GlueSettings.window_s if arguments.duration is None else arguments.duration,
            warmup_s=arguments.warmup, json_path=arguments.json,
            video=arguments.video or DEFAULT_CLIP)
        report = run_glue(settings, bench_progress)
    except ValueError as error:  # a camera count that is not a number
        print(f'triton-perception: error: --cameras: {error}', file=sys.stderr)
        return 2
    except BenchError as error:
        print(f'triton-perception: error: {error}', file=sys.stderr)
        return 2
    except Interrupted:
        print('bench: interrupted; every process it started was stopped', file=sys.stderr)
        return 130
    print(glue_table(report))
    return 0


def command_bench(arguments: argparse.Namespace) -> int:
    """
    Run `bench` and print its tables.

    Returns 0, 2 on a bad setting (BenchError), 130 when interrupted.
    """
    from triton_perception.bench.report import (  # noqa: PLC0415 (rclpy)
        budget_table, markdown_table, steps_table)
    from triton_perception.bench.run import run_bench  # noqa: PLC0415
    from triton_perception.bench.settings import (  # noqa: PLC0415
        BenchError, BenchSettings, parse_cases)
    from triton_perception.tracking.tracking_benchmark import tracking_line  # noqa: PLC0415

    raise_on_termination()
    if arguments.glue:
        return command_glue_bench(arguments)
    if arguments.memory:
        from triton_perception.bench.process_memory import measure_all, memory_table  # noqa
        print(memory_table(measure_all(arguments.triton_url, bench_progress)))
        return 0
    try:
        report = run_bench(BenchSettings(
            frames=arguments.frames,
            duration_s=BenchSettings.duration_s if arguments.duration is None
            else arguments.duration,
            cases=parse_cases(arguments.cases), json_path=arguments.json,
            profile=arguments.profile, triton_url=arguments.triton_url,
            model_repository=arguments.model_repository,
            video=arguments.video or DEFAULT_CLIP, max_in_flight=arguments.max_in_flight),
            bench_progress)
    except BenchError as error:
        print(f'triton-perception: error: {error}', file=sys.stderr)
        return 2
    except Interrupted:
        print('bench: interrupted; every process it started was stopped', file=sys.stderr)
        return 130
    print(markdown_table(report))
    print()
    print(steps_table(report))
    print()
    print(budget_table(report))
    print()
    print(tracking_line(report['tracking']))
    from triton_perception.scoring.benchmark import scoring_benchmark  # noqa: PLC0415
    seconds = scoring_benchmark(SCORED_FRAMES)
    print(f'scoring {SCORED_FRAMES} labelled frames (COCO AP, CLEAR MOT and IDF1, CULane F1, '
          f'bag score): {seconds:.1f} s (target under 10 s on 2 cores)')
    return 0


def command_docs(arguments: argparse.Namespace) -> int:
    """Run `docs`: write the generated tables of docs/, or with `--check` only compare them."""
    from triton_perception.apps.docs_tables import main as write_tables  # noqa: PLC0415
    return write_tables(check=arguments.check)


def build_parser() -> argparse.ArgumentParser:
    """Return the argument parser of every command; each sets `run` to its command function."""
    parser = argparse.ArgumentParser(prog='triton-perception', description=__doc__)
    commands = parser.add_subparsers(dest='command', required=True)

    server = commands.add_parser('server', help='run tritonserver for the model repository')
    add_server_arguments(server)
    server.set_defaults(run=command_server)

    models = commands.add_parser('models', help='install ONNX weights into the model repository')
    models.add_argument('action', choices=['install', 'list'],
                        help="install: the package's models, or with --detector or --lanes "
                             'one of your own; list: the installed detectors and lane models')
    models.add_argument('--detector', type=Path, default=None,
                        help='your detector: a YOLOv5 or YOLOv8/YOLO11 ONNX export (static '
                             'input size, opset <= 12)')
    models.add_argument('--labels', type=Path, default=None,
                        help='its class names, one per line in class-id order')
    models.add_argument('--name', default=None,
                        help='the ensemble name detection_node or lane_node serves it under '
                             '(model_name)')
    models.add_argument('--layout', choices=['auto', 'yolov5', 'yolov8', *LANE_LAYOUTS],
                        default='auto',
                        help='detector head: yolov5 [1, N, 5+classes], yolov8/yolo11 '
                             '[1, 4+classes, N], auto reads it from the file; lane model: '
                             'proposals (LaneATT), row-anchor (UFLD v1/v2), segmentation '
                             '(docs/lane_models.md)')
    models.add_argument('--lanes', type=Path, default=None,
                        help='your lane model: an ONNX export (static input size, opset <= 12)')
    models.add_argument('--lanes-served', default=None, metavar='MODEL',
                        help='a lane model the repository already serves (e.g. a TensorRT '
                             'plan with a float input): put preprocessing and an ensemble '
                             'around it')
    models.add_argument('--lane-config', type=Path, default=None,
                        help='YAML with preprocessing and decode settings the file cannot say '
                             '(docs/lane_models.md)')
    models.add_argument('--from', dest='source', type=Path, default=None,
                        help='directory holding yolov5n/yolov5n.onnx and twinlitenet/'
                             'twinlitenet.onnx (default ../shared/models or '
                             '$TRITON_PERCEPTION_MODELS_DIR). Files of your own export are '
                             'accepted when they are the same network (docs/models.md)')
    models.add_argument('--check-images', type=Path, action='append', default=[],
                        metavar='DIR', help="where the behaviour check's images are: yolov5's "
                        "data/images/bus.jpg and TwinLiteNet's images/caeb782d-4a20b7c4.jpg "
                        '(default: --from DIR and its sibling data/)')
    models.add_argument('--no-behaviour-check', action='store_true',
                        help='accept an export of your own on its structure alone')
    models.add_argument('--model-repository', type=Path, default=None)
    models.set_defaults(run=command_models)

    run = commands.add_parser(
        'run', help='run the pipeline (server + nodes) without ROS launch',
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description='Takes the arguments of pipeline.launch.py as name:=value:\n' + '\n'.join(
            f'  {argument.name}:={argument.default or "<empty>"}  {argument.description}'
            for argument in ARGUMENTS))
    run.add_argument('launch_arguments', nargs='*', metavar='name:=value')
    run.set_defaults(run=command_run)

    wait_ready = commands.add_parser('wait-ready', help='wait until a Triton serves the models '
                                     "(the launch files' readiness gate)")
    wait_ready.add_argument('--url', default='127.0.0.1:8001', help='gRPC HOST:PORT')
    wait_ready.add_argument('--models', nargs='+', default=['yolov5', 'lane_detection'])
    wait_ready.add_argument('--timeout', type=float, default=None,
                            help='give up after this many seconds (default: wait forever)')
    wait_ready.set_defaults(run=command_wait_ready)

    add_bag_commands(commands)

    engines = commands.add_parser('engines', help='build the TensorRT engines of the Orin '
                                  'profile from the installed ONNX files (on the device)')
    engines.add_argument('action', choices=['build'])
    engines.add_argument('--model-repository', type=Path, default=None)
    engines.add_argument('--trtexec', default=None, help='path of trtexec (default: PATH, then '
                         '/usr/src/tensorrt/bin/trtexec)')
    engines.add_argument('--fp32', action='store_true', help='build FP32 instead of FP16')
    engines.add_argument('--workspace-mib', type=int, default=2048,
                         help='TensorRT builder workspace (MiB)')
    engines.add_argument('--frame-size', metavar='WxH', default='',
                         help='build for frames of this one size only (smallest engines)')
    engines.add_argument('--max-frame', metavar='WxH', default='',
                         help=f"largest frame the engines take (default: the configs' "
                              f'max_frame, shipped as {DEFAULT_MAX})')
    engines.add_argument('--min-frame', metavar='WxH', default='',
                         help=f'smallest frame the engines take (default {DEFAULT_MIN})')
    engines.set_defaults(run=command_engines)

    soak = commands.add_parser('soak', help='long looped replay watching memory and accounting')
    soak.add_argument('--minutes', type=float, default=30.0)
    soak.add_argument('--bag', type=Path, default=None, help='camera bag (default: made from '
                      'the highway clip in --output)')
    soak.add_argument('--video', type=Path, default=None)
    soak.add_argument('--output', type=Path, default=Path('out/soak'))
    soak.add_argument('--profile', choices=PROFILES, default='auto')
    soak.add_argument('--triton-url', default='')
    soak.set_defaults(run=command_soak)

    demo = commands.add_parser('demo', help='the highway clip through the whole pipeline: '
                               'annotated video, contact sheet and report in out/demo')
    demo.add_argument('--video', type=Path, default=None,
                      help='road video (default ../shared/data/videos/solidWhiteRight.mp4)')
    demo.add_argument('--output', type=Path, default=Path('out/demo'))
    demo.add_argument('--profile', choices=PROFILES, default='auto')
    demo.set_defaults(run=command_demo)

    bench = commands.add_parser('bench', help='latency, throughput, CPU and memory: in-process '
                                'reference vs Triton vs ROS end to end, per node and both')
    bench.add_argument('--frames', type=int, default=60,
                       help='frames timed one at a time per measurement (after 5 warm-up)')
    bench.add_argument('--duration', type=float, default=None,
                       help='seconds of the 30 Hz throughput phase per case (default 60; with '
                       '--glue, of the measured window, default 20)')
    bench.add_argument('--cases', default='detection,lanes,both',
                       help='comma-separated, from detection, lanes, both')
    bench.add_argument('--json', type=Path, default=None, help='write the figures here')
    bench.add_argument('--memory', action='store_true',
                       help='only the memory of the perception processes: one perception_process '
                       'against one process per node, for 1 and 4 idle cameras')
    bench.add_argument('--glue', action='store_true',
                       help="only the nodes' own cost on constant graphs: CPU per frame, RSS "
                       'and latency beyond Triton of the floor node, one process per node and '
                       'one perception_process, at 30 Hz per camera')
    bench.add_argument('--cameras', default='1,4',
                       help='with --glue: comma-separated camera counts (default 1,4)')
    bench.add_argument('--layouts', default='floor,per_node,single',
                       help='with --glue: comma-separated, from floor, per_node, single')
    bench.add_argument('--warmup', type=float, default=3.0,
                       help='with --glue: seconds at camera rate before the window (default 3)')
    bench.add_argument('--profile', choices=PROFILES, default=None,
                       help='profile of the server the bench starts (default cpu)')
    bench.add_argument('--triton-url', default=None,
                       help='gRPC HOST:PORT of a running Triton instead of starting one')
    bench.add_argument('--model-repository', type=Path, default=None)
    bench.add_argument('--video', type=Path, default=None,
                       help='road clip (default ../shared/data/videos/solidWhiteRight.mp4)')
    bench.add_argument('--max-in-flight', type=int, default=None,
                       help="the nodes' max_in_flight (default: the parameter's default)")
    bench.set_defaults(run=command_bench)

    docs = commands.add_parser('docs', help='write the parameter and launch-argument tables of '
                               'docs/ from the code')
    docs.add_argument('--check', action='store_true',
                      help='only say whether a page is out of date (exit 1 if one is)')
    docs.set_defaults(run=command_docs)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """
    Run the command of `argv` (default: the process's arguments) and return its exit code.

    Known errors (server, models, plan, bag, engines, frame range, labels, a missing file) are
    printed as one line and return 2.
    """
    arguments = build_parser().parse_args(argv)
    run: Callable[[argparse.Namespace], int] = arguments.run
    try:
        return run(arguments)
    except (ServerError, ModelInstallError, PlanError, BagError, EngineBuildError, FrameRangeError,
            LabelError, FileNotFoundError) as error:
        print(f'triton-perception: error: {error}', file=sys.stderr)
        return 2


if __name__ == '__main__':
    sys.exit(main())
