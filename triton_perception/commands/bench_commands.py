"""
`triton-perception bench`: the latency, throughput, memory, glue, rate, health and decoding benches.

The bench itself lives in bench/; this module turns its options into settings, prints its
tables on stdout and its progress on stderr, and maps a bad setting or an interruption to
the exit codes 2 and 130.
"""
from __future__ import annotations

import argparse
from pathlib import Path
import sys
from typing import Callable, TYPE_CHECKING, TypeVar

from triton_perception.serving import MAX_BATCH, PRECISIONS, PROFILES
from triton_perception.system import DEFAULT_CLIP, Interrupted, raise_on_signals

if TYPE_CHECKING:
    from triton_perception.bench import GlueReport, RateSearchReport

Report = TypeVar('Report')  # what a bench returns: its report

SCORED_FRAMES = 1000  # the bench's scoring figure: labelled frames scored in one call
BENCH_FRAMES = 60  # --frames of `bench`: frames timed one at a time per measurement
DECODED_FRAMES = 200  # --frames of `bench --video-decoding`: frames per codec and size


def bench_progress(line: str) -> None:
    """Print a benchmark's progress line on stderr, so that stdout holds only its tables."""
    print(f'bench: {line}', file=sys.stderr, flush=True)


def report_or_exit_code(run: Callable[[], Report]) -> Report | int:
    """
    Return what `run` (a bench) reports, or its exit code: 2 on BenchError, 130 when interrupted.

    Either is said in one line on stderr; the bench has stopped every process it started.
    """
    from triton_perception.bench import BenchError  # noqa: PLC0415 (rclpy)

    try:
        return run()
    except BenchError as error:
        print(f'triton-perception: error: {error}', file=sys.stderr)
        return 2
    except Interrupted:
        print('bench: interrupted; every process it started was stopped', file=sys.stderr)
        return 130


def command_glue_bench(arguments: argparse.Namespace) -> int:
    """
    Run `bench --glue` and print its table; the caller has set up the termination handling.

    Returns 0 (whether or not the targets are met: they are figures to read), 2 on a bad
    setting or a failed run (BenchError), 130 when interrupted.
    """
    from triton_perception.bench import (  # noqa: PLC0415 (rclpy)
        BenchError, glue_table, GlueSettings, run_glue)

    if arguments.publish_cost:
        return command_publish_cost(arguments)

    def run() -> GlueReport:
        if arguments.triton_url:
            raise BenchError('--glue serves constant graphs from a server of its own; '
                             '--triton-url does not apply')
        try:
            camera_counts = tuple(int(count) for count in (arguments.cameras or '1,4').split(',')
                                  if count)
        except ValueError as error:  # a camera count that is not a number
            raise BenchError(f'--cameras: {error}') from error
        width, _, height = arguments.frame_size.strip().lower().partition('x')
        if not (width.isdigit() and height.isdigit()):
            raise BenchError(f"--frame-size: '{arguments.frame_size}' is not WIDTHxHEIGHT, "
                             'e.g. 1280x720')
        return run_glue(GlueSettings(
            camera_counts=camera_counts,
            layouts=tuple(name.strip() for name in arguments.layouts.split(',') if name.strip()),
            window_s=GlueSettings.window_s if arguments.duration is None else arguments.duration,
            warmup_s=arguments.warmup, json_path=arguments.json,
            video=arguments.video or DEFAULT_CLIP, frame_size=(int(width), int(height)),
            camera_priorities=arguments.camera_priorities, max_batch=arguments.max_batch),
            bench_progress)

    report = report_or_exit_code(run)
    if isinstance(report, int):
        return report
    print(glue_table(report))
    return 0


def command_publish_cost(arguments: argparse.Namespace) -> int:
    """Run `bench --glue --publish-cost` and print its table; 2 on a bad --frame-size."""
    from triton_perception.bench import (  # noqa: PLC0415 (rclpy)
        measure_publish_cost, publish_cost_table)

    width, _, height = arguments.frame_size.strip().lower().partition('x')
    if not (width.isdigit() and height.isdigit()):
        print(f"triton-perception: error: --frame-size: '{arguments.frame_size}' is not "
              'WIDTHxHEIGHT, e.g. 1280x720', file=sys.stderr)
        return 2
    print(publish_cost_table(measure_publish_cost((int(width), int(height)))))
    return 0


def numbers(text: str, option: str) -> tuple[float, ...]:
    """Return '10,30' as (10.0, 30.0); BenchError naming `option` for anything else."""
    from triton_perception.bench import BenchError  # noqa: PLC0415 (rclpy)

    try:
        return tuple(float(value) for value in text.split(',') if value.strip())
    except ValueError as error:
        raise BenchError(f'{option}: {error}') from error


def command_rate_search(arguments: argparse.Namespace) -> int:
    """
    Run `bench --rate-search` and print its table; the caller has set up the termination handling.

    Returns 0, 2 on a bad setting or when the pipeline answers nothing (one line), 130 when
    interrupted.
    """
    from triton_perception.bench import (  # noqa: PLC0415 (rclpy)
        BenchError, rate_table, RateSearchSettings, run_rate_search)

    def run() -> RateSearchReport:
        bounds = numbers(arguments.search_range, '--search-range')
        if len(bounds) != 2:
            raise BenchError(f'--search-range: give LOWER,UPPER in Hz, got '
                             f"'{arguments.search_range}'")
        cameras = numbers(arguments.cameras or '1', '--cameras')
        if len(cameras) != 1 or not cameras[0].is_integer():
            raise BenchError('--cameras: give one camera count with --rate-search, got '
                             f"'{arguments.cameras}'")
        return run_rate_search(RateSearchSettings(
            cameras=int(cameras[0]), models=arguments.models, layout=arguments.layout,
            bag=arguments.bag, topic=arguments.topic, video=arguments.video or DEFAULT_CLIP,
            lower_hz=bounds[0], upper_hz=bounds[1], step_hz=arguments.search_step,
            bisection_width_hz=max(4 * arguments.search_step, arguments.search_step),
            window_s=10.0 if arguments.duration is None else arguments.duration,
            fixed_rates=numbers(arguments.rates, '--rates'), repeats=arguments.repeats,
            json_path=arguments.json, profile=arguments.profile or 'cpu',
            precision=arguments.precision, triton_url=arguments.triton_url,
            model_repository=arguments.model_repository, stand_in_hz=arguments.stand_in,
            command=' '.join(['triton-perception', *sys.argv[1:]])), bench_progress)

    report = report_or_exit_code(run)
    if isinstance(report, int):
        return report
    print(rate_table(report))
    return 0


def command_offline_bench(arguments: argparse.Namespace) -> int:
    """
    Run `bench --camera-health` or `bench --video-decoding`, printing each line as it comes.

    Returns 0, 2 on a failed run (BenchError), 130 when interrupted.
    """
    from triton_perception.bench import camera_health_report, decoding_report  # noqa: PLC0415

    def run() -> int:
        lines = (camera_health_report(arguments.shared, arguments.graph)
                 if arguments.camera_health else
                 decoding_report(arguments.frames or DECODED_FRAMES, arguments.decoder))
        for line in lines:
            print(line, flush=True)
        return 0

    return report_or_exit_code(run)


def command_bench(arguments: argparse.Namespace) -> int:
    """
    Run `bench` and print its tables.

    Returns 0, 2 on a bad setting (BenchError), 130 when interrupted.
    """
    from triton_perception.bench import (  # noqa: PLC0415 (rclpy)
        BenchSettings, budget_table, markdown_table, parse_cases, run_bench, steps_table)
    from triton_perception.tracking import tracking_line  # noqa: PLC0415

    raise_on_signals()
    if arguments.rate_search:
        return command_rate_search(arguments)
    if arguments.glue:
        return command_glue_bench(arguments)
    if arguments.camera_health or arguments.video_decoding:
        return command_offline_bench(arguments)
    if arguments.memory:
        from triton_perception.bench import measure_all, memory_table  # noqa
        print(memory_table(measure_all(arguments.triton_url, bench_progress)))
        return 0
    report = report_or_exit_code(lambda: run_bench(BenchSettings(
        frames=arguments.frames or BENCH_FRAMES,
        duration_s=BenchSettings.duration_s if arguments.duration is None
        else arguments.duration,
        cases=parse_cases(arguments.cases), json_path=arguments.json,
        profile=arguments.profile, precision=arguments.precision,
        triton_url=arguments.triton_url,
        model_repository=arguments.model_repository,
        video=arguments.video or DEFAULT_CLIP, max_in_flight=arguments.max_in_flight),
        bench_progress))
    if isinstance(report, int):
        return report
    print(markdown_table(report.cases))
    print()
    print(steps_table(report.cases))
    print()
    print(budget_table(report.cases))
    print()
    print(tracking_line(report.head['tracking']))
    from triton_perception.scoring import scoring_benchmark  # noqa: PLC0415
    seconds = scoring_benchmark(SCORED_FRAMES)
    print(f'scoring {SCORED_FRAMES} labelled frames (COCO AP, CLEAR MOT and IDF1, CULane F1, '
          f'bag score): {seconds:.1f} s (target under 10 s on 2 cores)')
    return 0


def add_bench_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `bench` with the options of its variants, each variant's in its own group."""
    bench = commands.add_parser('bench', help='latency, throughput, CPU and memory: in-process '
                                'reference vs Triton vs ROS end to end, per node and both')
    _add_run_options(bench)
    _add_server_options(bench)
    _add_rate_search_options(bench)
    _add_offline_options(bench)
    bench.set_defaults(run=command_bench)


def _add_run_options(bench: argparse.ArgumentParser) -> None:
    """Add what a run measures: frames, window, cases, output, and the --memory, --glue cases."""
    bench.add_argument('--frames', type=int, default=None,
                       help='frames timed one at a time per measurement (after 5 warm-up; '
                       f'default {BENCH_FRAMES}); with --video-decoding: frames per codec and '
                       f'size (default {DECODED_FRAMES})')
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
                       'and latency beyond Triton of the floor node (also taking frames '
                       'serialized), one process per node and one perception_process, at 30 Hz '
                       'per camera')
    bench.add_argument('--publish-cost', action='store_true',
                       help='with --glue: only the CPU per message of building and publishing '
                       'each output message kind as a message and as serialized bytes, in '
                       'this process (the minimum over repeats)')
    bench.add_argument('--cameras', default=None,
                       help='with --glue: comma-separated camera counts (default 1,4); with '
                       '--rate-search: the cameras, each fed at the rate (default 1)')
    bench.add_argument('--layouts',
                       default='floor,floor_serialized,per_node,single,single_events,'
                       'groups_of_2,per_camera',
                       help='with --glue: comma-separated, from floor, floor_serialized, '
                       "per_node, single, single_events (single with rclpy's EventsExecutor on "
                       'the hot path), groups_of_2, per_camera (the last two with several '
                       'cameras: a perception_process per 2 cameras, per camera)')
    bench.add_argument('--frame-size', default='960x540',
                       help='with --glue: WIDTHxHEIGHT of the bgr8 frames published (default '
                       '960x540)')
    bench.add_argument('--warmup', type=float, default=3.0,
                       help='with --glue: seconds at camera rate before the window (default 3)')


def _add_server_options(bench: argparse.ArgumentParser) -> None:
    """Add the server's options, the clip's, and the nodes' parameters a bench sets."""
    bench.add_argument('--profile', choices=PROFILES, default=None,
                       help='profile of the server the bench starts (default cpu)')
    bench.add_argument('--precision', choices=PRECISIONS, default='fp',
                       help='fp: the float graphs; int8: those of `models quantize` '
                       '(docs/models.md), served and run as the references')
    bench.add_argument('--triton-url', default=None,
                       help='gRPC HOST:PORT of a running Triton instead of starting one')
    bench.add_argument('--model-repository', type=Path, default=None)
    bench.add_argument('--video', type=Path, default=None,
                       help='road clip (default ../shared/data/videos/solidWhiteRight.mp4)')
    bench.add_argument('--camera-priorities', default='',
                       help='with --glue: camera_priorities for the perception_processes, the '
                       "cameras named cam0, cam1, ..., e.g. 'cam0=always,cam1=10'")
    bench.add_argument('--max-batch', type=int, default=MAX_BATCH,
                       help='with --glue: cameras of a perception_process served by one request '
                       '(the max_batch launch argument; 1: one request per camera; default '
                       '%(default)s)')
    bench.add_argument('--max-in-flight', type=int, default=None,
                       help="the nodes' max_in_flight (default: the parameter's default)")


def _add_rate_search_options(bench: argparse.ArgumentParser) -> None:
    """Add `bench --rate-search` and its options, in a group of their own."""
    rates = bench.add_argument_group(
        'rate search', 'bench --rate-search: the highest publisher rate with at most 5 % of '
        'frames missed through the pipeline as launched (a bisection, then steps up, as '
        "ros2_benchmark's auto finder), then runs at fixed rates (docs/performance.md)")
    rates.add_argument('--rate-search', action='store_true',
                       help='find the highest rate the pipeline sustains, then run fixed rates')
    rates.add_argument('--models', choices=('detection', 'lanes', 'both'), default='both',
                       help='the nodes launched (default both)')
    rates.add_argument('--layout', choices=('single', 'per_node', 'groups_of_2', 'per_camera'),
                       default='single', help='the process layout (default single)')
    rates.add_argument('--bag', type=Path, default=None,
                       help='play the frames of this bag (held in memory) instead of --video')
    rates.add_argument('--topic', default=None,
                       help="the bag's camera topic (default /camera/image_raw)")
    rates.add_argument('--search-range', default='1,40',
                       help='LOWER,UPPER publisher rates searched, Hz per camera (default 1,40)')
    rates.add_argument('--search-step', type=float, default=0.5,
                       help='the finer steps after the bisection, Hz (default 0.5; the bisection '
                       'stops at 4 steps wide)')
    rates.add_argument('--rates', default='10,30',
                       help='fixed rates run after the search, besides the rate found '
                       '(default 10,30)')
    rates.add_argument('--repeats', type=int, default=3,
                       help="runs at each fixed rate (default 3); --duration sets each run's "
                       'seconds (default 10)')
    rates.add_argument('--stand-in', type=float, default=None, metavar='HZ',
                       help='replace the pipeline by stand-in nodes that serve at most HZ frames '
                       'per second (0: none), to check the search on this machine')


def _add_offline_options(bench: argparse.ArgumentParser) -> None:
    """Add the benches that need no ROS and no Triton, in a group of their own."""
    offline = bench.add_argument_group(
        'without ROS and Triton', 'bench --camera-health, bench --video-decoding: Markdown '
        'tables of one part of a node, measured in this process (docs/performance.md)')
    offline.add_argument('--camera-health', action='store_true',
                         help='the camera health check on its labelled set (every fault on 10 '
                         'cameras, the clean cameras) and its CPU per frame')
    offline.add_argument('--shared', type=Path, default=None,
                         help='with --camera-health: the shared folder holding data/ (default '
                         '$TRITON_PERCEPTION_SHARED, else ../shared beside the checkout)')
    offline.add_argument('--graph', action='store_true',
                         help='with --camera-health: judge the labelled set from the health '
                         "graph's statistics")
    offline.add_argument('--video-decoding', action='store_true',
                         help='what decoding a video camera costs the node: CPU and wall ms per '
                         'frame, H.264 and H.265, at 1280x720 and 1920x1080')
    offline.add_argument('--decoder', default='',
                         help="with --video-decoding: as video_decoder: '' (h264/hevc), an "
                         'FFmpeg decoder, or gst:ELEMENT')
