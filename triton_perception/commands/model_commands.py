"""
`triton-perception models install|list`: what the model repository serves.

The shipped models, or a detector or lane model of the user's own; the options are checked
here so that an incomplete install fails with one line and exit code 2 before any file
is written.
"""
from __future__ import annotations

import argparse
import os
from pathlib import Path
import sys
from typing import Callable

from triton_perception.commands.bag_commands import _threshold
from triton_perception.graphs import HEAD_LAYOUTS
from triton_perception.lanes import LAYOUTS as LANE_LAYOUTS
from triton_perception.models import (CALIBRATION_METHODS, DEFAULT_FRAMES,
                                      default_models_directory, ExportChecks, install_models,
                                      ModelInstallError)
from triton_perception.system import default_model_repository


def command_models(arguments: argparse.Namespace) -> int:
    """
    Run `models install|list`: the shipped models, or a detector or lane model of your own.

    Returns 0, or 2 when a detector's options are incomplete or it cannot be installed.
    """
    from triton_perception.models import DetectorInstallError  # noqa: PLC0415
    from triton_perception.models import install_detector, installed_detectors

    repository = arguments.model_repository or default_model_repository()
    log = lambda line: print(f'models: {line}', flush=True)  # noqa: E731
    if arguments.action == 'quantize':
        return command_quantize(arguments, Path(repository), log)
    if arguments.action == 'install-int8':
        return command_install_int8(arguments, Path(repository), log)
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
                  f"detector's is auto, {' or '.join(HEAD_LAYOUTS)}", file=sys.stderr)
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


def guard_folder() -> Path:
    """Return a new folder for a guard's report: in ROS's home, named by the time it started."""
    import time  # noqa: PLC0415

    home = Path(os.environ.get('ROS_HOME') or '~/.ros').expanduser()
    return home / 'triton_perception' / 'quantization_guard' / time.strftime('%Y%m%d-%H%M%S')


def command_install_int8(arguments: argparse.Namespace, repository: Path,
                         log: Callable[[str], None]) -> int:
    """
    Run `models install-int8 --from FOLDER`: install INT8 graphs quantized on another machine.

    Returns 0 when installed, 2 in one line (the repository untouched) otherwise.
    """
    from triton_perception.models import carried_candidates, install_quantized  # noqa: PLC0415

    if arguments.source is None:
        print('triton-perception: error: models install-int8 needs --from FOLDER (the --output '
              "folder of 'models quantize' on the PC, copied here)", file=sys.stderr)
        return 2
    try:
        candidates = carried_candidates(repository, arguments.source.resolve())
    except ModelInstallError as error:
        print(f'triton-perception: error: {error}', file=sys.stderr)
        return 2
    install_quantized(repository, candidates, log)
    log('installed; on an Orin build the engines next: triton-perception engines build --int8')
    return 0


def command_quantize(arguments: argparse.Namespace, repository: Path,
                     log: Callable[[str], None]) -> int:
    """
    Run `models quantize`: calibrate INT8 graphs, guard them on drives, install if nothing fell.

    Returns 0 when installed, 1 when the guard refused them (nothing installed), 2 for bad
    input (one line; the repository untouched).
    """
    import tempfile  # noqa: PLC0415

    from triton_perception.bag import BagError  # noqa: PLC0415
    from triton_perception.evaluation import check_guard_drives, guard_quantization
    from triton_perception.models import install_quantized, quantize_models, write_carried
    from triton_perception.models import Int8Options, parse_keep_float  # noqa: PLC0415

    def error(text: str) -> int:
        print(f'triton-perception: error: {text}', file=sys.stderr)
        return 2

    calibration = [Path(bag).resolve() for bag in arguments.calibrate]
    guard = [Path(bag).resolve() for bag in arguments.guard]
    if not calibration or not guard:
        return error('models quantize needs --calibrate BAG [BAG ...] and --guard DRIVE '
                     '[DRIVE ...] (drives not used for calibration)')
    reused = sorted(set(map(str, calibration)) & set(map(str, guard)))
    if reused:
        return error(f'{reused[0]} is both a calibration bag and a guard drive: guard on drives '
                     'not used for calibration')
    models = ('detection', 'lanes') if arguments.models == 'both' else (arguments.models,)
    output = (arguments.output or guard_folder()).resolve()
    try:
        options = Int8Options(arguments.calibration_method, parse_keep_float(arguments.keep_float))
        check_guard_drives(guard)
        with tempfile.TemporaryDirectory(prefix='triton_perception-int8-') as staging:
            candidates, used = quantize_models(repository, calibration, Path(staging), models,
                                               arguments.frames, arguments.topic, log,
                                               options)
            log(f'calibrated on {used.summary()}')
            verdict = guard_quantization(repository, candidates, guard, output,
                                         dict(arguments.change_threshold),
                                         tuple(arguments.guard_labels), 'cpu', log)
            if verdict.flagged and not arguments.force:
                print(f'models quantize: INT8 refused, nothing installed: '
                      f'{verdict.flagged[0]} (report: {verdict.report}); another '
                      '--calibration-method or --keep-float may pass (docs/models.md)',
                      file=sys.stderr)
                return 1
            install_quantized(repository, candidates, log)
            log(f'for the Orin: copy {write_carried(candidates, output)} and run '
                "'triton-perception models install-int8 --from FOLDER' there")
    except (BagError, ModelInstallError) as failure:
        return error(str(failure))
    if verdict.flagged:
        log(f'--force: installed although the guard flagged {"; ".join(verdict.flagged)} '
            f'(report: {verdict.report})')
    else:
        log(f'guard passed: nothing flagged (report: {verdict.report}); serve it with '
            'precision:=int8 (or --precision int8)')
    return 0


def print_lane_models(repository: Path) -> None:
    """Print the installed lane models as a Markdown table, the shipped one first if installed."""
    from triton_perception.lanes import installed_lane_models, shipped_lane_model
    from triton_perception.lanes import SHIPPED_LANES  # noqa: PLC0415
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
    from triton_perception.models import install_lane_model  # noqa: PLC0415
    from triton_perception.models import install_served_lane_model, remove_steps
    from triton_perception.lanes import LaneConfigError  # noqa: PLC0415
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


def add_models_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `models install|list` with the options of a model of your own."""
    models = commands.add_parser('models', help='install ONNX weights into the model repository')
    models.add_argument('action', choices=['install', 'list', 'quantize', 'install-int8'],
                        help="install: the package's models, or with --detector or --lanes "
                             'one of your own; list: the installed detectors and lane models; '
                             'quantize: INT8 graphs calibrated on --calibrate bags, installed '
                             'when --guard drives show nothing got worse (docs/models.md); '
                             'install-int8: those of a quantize run on another machine '
                             '(--from its output folder)')
    models.add_argument('--detector', type=Path, default=None,
                        help='your detector: a YOLOv5 or YOLOv8/YOLO11 ONNX export (static '
                             'input size, opset <= 12)')
    models.add_argument('--labels', type=Path, default=None,
                        help='its class names, one per line in class-id order')
    models.add_argument('--name', default=None,
                        help='the ensemble name detection_node or lane_node serves it under '
                             '(model_name)')
    models.add_argument('--layout', choices=['auto', *HEAD_LAYOUTS, *LANE_LAYOUTS],
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
                        help='install: directory holding yolov5n/yolov5n.onnx and twinlitenet/'
                             'twinlitenet.onnx (default ../shared/models or '
                             '$TRITON_PERCEPTION_MODELS_DIR). Files of your own export are '
                             'accepted when they are the same network (docs/models.md); '
                             "install-int8: the --output folder of 'models quantize' (or its "
                             'int8/), copied from the PC')
    models.add_argument('--check-images', type=Path, action='append', default=[],
                        metavar='DIR', help="where the behaviour check's images are: yolov5's "
                        "data/images/bus.jpg and TwinLiteNet's images/caeb782d-4a20b7c4.jpg "
                        '(default: --from DIR and its sibling data/)')
    models.add_argument('--no-behaviour-check', action='store_true',
                        help='accept an export of your own on its structure alone')
    models.add_argument('--model-repository', type=Path, default=None)
    add_quantize_options(models.add_argument_group('quantize'))
    models.set_defaults(run=command_models)


def add_quantize_options(quantize: argparse._ArgumentGroup) -> None:
    """Add the options of `models quantize`: its bags, the guard, and what is kept float."""
    quantize.add_argument('--calibrate', type=Path, nargs='+', default=[], metavar='BAG',
                          help='bags whose frames calibrate the INT8 graphs')
    quantize.add_argument('--guard', type=Path, nargs='+', default=[], metavar='DRIVE',
                          help='drives (not used for calibration) replayed through the float '
                               'and the INT8 graphs and paired as `bag compare` pairs them')
    quantize.add_argument('--models', choices=['detection', 'lanes', 'both'], default='both')
    quantize.add_argument('--frames', type=int, default=DEFAULT_FRAMES,
                          help='calibration frames, sampled evenly across the bags (default '
                               f'{DEFAULT_FRAMES})')
    quantize.add_argument('--calibration-method', default='minmax', metavar='METHOD',
                          help="onnxruntime's calibration: "
                               f"{', '.join(CALIBRATION_METHODS)} (default minmax)")
    quantize.add_argument('--keep-float', default='none', metavar='none|auto|NODE,...',
                          help='network nodes or blocks kept float: none (default) quantizes '
                               "every block; auto keeps the lane graph's most sensitive blocks "
                               'float until its lanes agree with the float graph (a pass of '
                               'minutes, docs/models.md); or names, comma-separated')
    quantize.add_argument('--topic', default=None,
                          help="the calibration bags' camera topic (default: their only one)")
    quantize.add_argument('--guard-labels', type=Path, action='append', default=[],
                          metavar='PATH', help="the guard drive's labels (as bag evaluate's "
                          "--labels): report.md gives both models' scores")
    quantize.add_argument('--change-threshold', type=_threshold, action='append', default=[],
                          metavar='FIGURE=SHARE', help="the guard's thresholds, as bag compare's")
    quantize.add_argument('--output', type=Path, default=None,
                          help="the guard's replays, comparison, changed frames and report.md "
                          '(default: a new folder under $ROS_HOME, else ~/.ros, '
                          'triton_perception/quantization_guard/; never the current folder)')
    quantize.add_argument('--force', action='store_true',
                          help='install even when the guard flags a figure (and say so)')
