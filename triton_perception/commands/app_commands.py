"""
`triton-perception soak`, `demo` and `docs`: the commands built on the whole pipeline.

Each runs an app of apps/ (the looped soak replay, the highway-clip demo, the generated
docs tables) and turns its outcome into an exit code.
"""
from __future__ import annotations

import argparse
from pathlib import Path
import sys

from triton_perception.serving import PROFILES
from triton_perception.system import DEFAULT_CLIP


def command_soak(arguments: argparse.Namespace) -> int:
    """Run `soak`: the looped replay; 0 if every frame was accounted for and memory grew < 10 %."""
    from triton_perception.bag import make_bag  # noqa: PLC0415 (rclpy imports)
    from triton_perception.apps import soak  # noqa: PLC0415

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
    from triton_perception.apps import run_demo  # noqa: PLC0415 (rclpy)

    return run_demo(arguments.video or DEFAULT_CLIP, arguments.output, arguments.profile,
                    lambda line: print(f'demo: {line}', file=sys.stderr, flush=True))


def command_docs(arguments: argparse.Namespace) -> int:
    """Run `docs`: write the generated tables of docs/, or with `--check` only compare them."""
    from triton_perception.apps import main as write_tables  # noqa: PLC0415
    return write_tables(check=arguments.check)


def add_soak_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `soak`: a long looped replay watching memory and accounting."""
    soak = commands.add_parser('soak', help='long looped replay watching memory and accounting')
    soak.add_argument('--minutes', type=float, default=30.0)
    soak.add_argument('--bag', type=Path, default=None, help='camera bag (default: made from '
                      'the highway clip in --output)')
    soak.add_argument('--video', type=Path, default=None)
    soak.add_argument('--output', type=Path, default=Path('out/soak'))
    soak.add_argument('--profile', choices=PROFILES, default='auto')
    soak.add_argument('--triton-url', default='')
    soak.set_defaults(run=command_soak)


def add_demo_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `demo`: the highway clip through the whole pipeline."""
    demo = commands.add_parser('demo', help='the highway clip through the whole pipeline: '
                               'annotated video, contact sheet and report in out/demo')
    demo.add_argument('--video', type=Path, default=None,
                      help='road video (default ../shared/data/videos/solidWhiteRight.mp4)')
    demo.add_argument('--output', type=Path, default=Path('out/demo'))
    demo.add_argument('--profile', choices=PROFILES, default='auto')
    demo.set_defaults(run=command_demo)


def add_docs_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `docs`: write or check the generated tables of docs/."""
    docs = commands.add_parser('docs', help='write the parameter and launch-argument tables of '
                               'docs/ from the code')
    docs.add_argument('--check', action='store_true',
                      help='only say whether a page is out of date (exit 1 if one is)')
    docs.set_defaults(run=command_docs)
