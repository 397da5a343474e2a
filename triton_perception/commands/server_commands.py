"""
`triton-perception server` and `engines build`: tritonserver and the engines it serves.

The server's options are defined once here (`add_server_arguments`) and turned into a
ServerConfig by `server_config_from`; `engines build` makes the TensorRT profile's engines
that the server then loads.
"""
from __future__ import annotations

import argparse
from pathlib import Path
import sys
import time

from triton_perception.frames import DEFAULT_MAX, DEFAULT_MIN, FrameRange, parse_size
from triton_perception.serving import (build_engines, check_findings, PRECISIONS, PROFILES,
                                       ServerConfig, TritonServer)
from triton_perception.system import default_model_repository, Interrupted, raise_on_signals


def add_server_arguments(parser: argparse.ArgumentParser) -> None:
    """Add tritonserver's options (repository, profile, binary, address, ports) to `parser`."""
    parser.add_argument('--model-repository', type=Path, default=None,
                        help="Triton model repository (default: the package's)")
    parser.add_argument('--profile', choices=PROFILES, default='auto',
                        help='tensorrt (Orin engines), cpu (ONNX via the Python backend), or auto: '
                             'tensorrt when engines exist (default)')
    parser.add_argument('--precision', choices=PRECISIONS, default='fp',
                        help='fp: the float graphs (default); int8: those of `models quantize` '
                             '(docs/models.md)')
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
        profile=arguments.profile, precision=arguments.precision,
        tritonserver=arguments.tritonserver,
        address=arguments.address, http_port=arguments.http_port,
        grpc_port=arguments.grpc_port, metrics_port=arguments.metrics_port,
        ready_timeout_s=arguments.ready_timeout)


def command_server(arguments: argparse.Namespace) -> int:
    """Run `server`: start tritonserver and serve until Ctrl-C or SIGTERM (0) or it exits (1)."""
    if arguments.check:
        return check_server(arguments)
    server = TritonServer(server_config_from(arguments))
    raise_on_signals()
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


def check_server(arguments: argparse.Namespace) -> int:
    """
    Run `server --check`: one line per thing found or missing, the last the profile served here.

    The installed tritonserver is started with no models (its release version comes from its
    metadata: Triton has no --version), its command line checked against its usage on the way,
    as at every start; then its backends, an NVIDIA GPU and the container release for its
    driver, TensorRT, the repository's graphs and engines, and the CPU profile's packages.
    Exit 0 when the profile `--profile` chooses can be served here, else 1.
    """
    findings = check_findings(server_config_from(arguments))
    for finding in findings:
        print(finding.line(), flush=True)
    return 0 if findings[-1].found else 1


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
                  frame_range=frame_range, log=lambda line: print(f'engines: {line}', flush=True),
                  int8=arguments.int8)
    return 0


def add_server_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `server`: tritonserver until Ctrl-C."""
    server = commands.add_parser('server', help='run tritonserver for the model repository')
    add_server_arguments(server)
    server.add_argument('--check', action='store_true',
                        help='report, one line each, the tritonserver found (started without '
                             'models: its release and path), its backends, the GPU and the '
                             'container release for its driver, TensorRT, the graphs and engines, '
                             'and the profile served here; exit 1 when that profile lacks '
                             'something')
    server.set_defaults(run=command_server)


def add_engines_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `engines build`: the TensorRT profile's engines, with trtexec."""
    engines = commands.add_parser('engines', help='build the TensorRT engines of the Orin '
                                  'profile from the installed ONNX files (on the device)')
    engines.add_argument('action', choices=['build'])
    engines.add_argument('--model-repository', type=Path, default=None)
    engines.add_argument('--trtexec', default=None, help='path of trtexec (default: PATH, then '
                         '/usr/src/tensorrt/bin/trtexec)')
    engines.add_argument('--fp32', action='store_true', help='build FP32 instead of FP16')
    engines.add_argument('--int8', action='store_true',
                         help='build model_int8.plan from the INT8 graphs of `models quantize` '
                              '(trtexec --int8, and --fp16 for what stays float); served with '
                              'precision:=int8')
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
