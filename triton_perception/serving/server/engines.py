"""
Build the TensorRT engines of the Orin profile from the installed ONNX files, with trtexec.

Engines only run on the device and TensorRT version that built them, so they are built on
the Orin itself, and each engine gets a `model.plan.json` recording what it was built from
and on; the server warns when an engine no longer matches its ONNX file or its device.

Every served graph takes the frame itself, so each engine is built with an optimization profile
over the frame sizes its config declares (triton_perception.frames.frame_range; trtexec's
--minShapes/--optShapes/--maxShapes). TensorRT runs no shape outside it, so a frame outside the
range fails with an error naming the range in both profiles.
"""
from __future__ import annotations

from dataclasses import dataclass
import json
import os
from pathlib import Path
import platform
import re
import shutil
import subprocess
import threading
import time
from typing import Callable

from triton_perception.errors import TritonPerceptionError
from triton_perception.frames import (declares_frame_range, frame_range_of, FrameRange,
                                      set_frame_range)
from triton_perception.graphs import FRAME_INPUT
from triton_perception.system import missing_library_cause, sha256_of

ENGINE_STEPS = ('yolov5_model', 'lane_model')  # the package's own; installed detectors add more


def engine_steps(repository: Path) -> list[str]:
    """
    Return the TensorRT model steps of the repository.

    The package's and every installed detector's (a config with platform tensorrt_plan and a served
    graph to build from).
    """
    steps = list(ENGINE_STEPS)
    for config in sorted(Path(repository).glob('*/config.pbtxt')):
        step = config.parent.name
        if step not in steps and 'platform: "tensorrt_plan"' in config.read_text(
                encoding='utf-8') and (config.parent / '1' / 'model.onnx').is_file():
            steps.append(step)
    return steps


def frame_steps(repository: Path) -> list[str]:
    """
    Return every model step that bounds the frame.

    The engine steps, then any other step one of whose configs declares min_frame and max_frame
    (camera_health's CPU profile). A frame range given to `engines build` is declared in all of
    them, so that no step of the `perception` ensemble refuses a frame the others take.
    """
    steps = engine_steps(repository)
    for config in sorted(Path(repository).glob('*/config.pbtxt')):
        step = config.parent
        if step.name not in steps and any(
                path.is_file() and declares_frame_range(path.read_text(encoding='utf-8'))
                for path in (config, step / 'configs' / 'cpu.pbtxt')):
            steps.append(step.name)
    return steps


JETPACK_TRTEXEC = Path('/usr/src/tensorrt/bin/trtexec')
TENSORRT_QDQ_GRAPH = 'model_int8_tensorrt.onnx'  # models/quantization.py writes it
# Every engine a step may have, with the graph it is built from and the command that builds it.
ENGINE_PLANS = (('model.plan', 'model.onnx', 'triton-perception engines build'),
                ('model_int8.plan', TENSORRT_QDQ_GRAPH, 'triton-perception engines build --int8'))
DEVICE_MODEL = Path('/proc/device-tree/model')
PROGRESS_PERIOD_S = 15.0
# Where JetPack (aarch64) and NVIDIA's x86 packages put libnvinfer.
TENSORRT_LIBRARIES = (Path('/usr/lib/aarch64-linux-gnu'), Path('/usr/lib/x86_64-linux-gnu'),
                      Path('/usr/local/tensorrt/lib'))


class EngineBuildError(TritonPerceptionError, RuntimeError):
    """trtexec is missing or a build failed; the message says what to do."""


@dataclass(frozen=True)
class EngineRecord:
    """
    What an engine was built from, kept beside it as model.plan.json.

    The ONNX file's SHA-256, the TensorRT version, the device name (`device_name`), the
    precision and the frame range of its optimization profile.
    """

    onnx_sha256: str
    tensorrt: str
    device: str
    precision: str
    frame_range: str = ''

    def problems_with(self, onnx_sha256: str, device: str) -> list[str]:
        """Return why the engine is stale (its ONNX file or device differs); [] if it is current."""
        problems = []
        if onnx_sha256 != self.onnx_sha256:
            problems.append('its ONNX file changed since the engine was built')
        if device != self.device:
            problems.append(f"it was built on '{self.device}', this is '{device}'")
        return problems

    def mismatches(self, configured: FrameRange, tensorrt: str | None) -> list[str]:
        """
        Return why the server cannot load the engine as configured; [] if it can.

        TensorRT runs an engine only with the TensorRT release that built it and only inside its
        optimization profile, and Triton's warm-up frame is the configured range's optimum: a
        config whose range differs from the engine's fails the model's load.
        """
        problems = []
        if self.frame_range and self.frame_range != str(configured):
            problems.append(f'its engine takes frames {self.frame_range}, its config declares '
                            f'{configured} (an update or rebuild of the package restores the '
                            'shipped configs)')
        built_with = tensorrt_version(self.tensorrt)
        if tensorrt and built_with and built_with != tensorrt:
            problems.append(f'its engine was built with TensorRT {built_with}, this machine has '
                            f'TensorRT {tensorrt}')
        return problems


def tensorrt_version(text: str) -> str | None:
    """
    Return 'major.minor.patch' of a TensorRT version as trtexec or a library file names it.

    '8.6.2' and trtexec's banner numbers: 8602 (TensorRT 8, major*1000 + minor*100 + patch) and
    100300 (TensorRT 10, major*10000 + minor*100 + patch), as NvInferVersion.h defines them.
    """
    if re.fullmatch(r'\d+\.\d+\.\d+', text):
        return text
    if re.fullmatch(r'\d{4}', text):
        number = int(text)
        return f'{number // 1000}.{number % 1000 // 100}.{number % 100}'
    if re.fullmatch(r'\d{6}', text):
        number = int(text)
        return f'{number // 10000}.{number % 10000 // 100}.{number % 100}'
    return None


def installed_tensorrt(library_directories: tuple[Path, ...] = TENSORRT_LIBRARIES) -> str | None:
    """Return the TensorRT version of this machine's libnvinfer, or None where there is none."""
    for directory in library_directories:
        for library in sorted(directory.glob('libnvinfer.so.*.*.*')):
            version = tensorrt_version(library.name.removeprefix('libnvinfer.so.'))
            if version:
                return version
    return None


def device_name() -> str:
    """Jetson boards name themselves in the device tree; elsewhere the machine type."""
    try:
        return DEVICE_MODEL.read_text(encoding='utf-8').strip('\x00\n ')
    except OSError:
        return f'{platform.machine()} {platform.node()}'


def find_trtexec(explicit: str | None = None) -> Path:
    """
    Return the trtexec to run: `explicit`, else the one on PATH, else JetPack's.

    Raises EngineBuildError if none of them is an executable file; the message says how to get one.
    """
    candidates = [Path(explicit)] if explicit else []
    on_path = shutil.which('trtexec')
    candidates += [Path(on_path)] if on_path else []
    candidates.append(JETPACK_TRTEXEC)
    for candidate in candidates:
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate
    raise EngineBuildError(
        'trtexec not found: it ships with TensorRT (JetPack installs it as '
        f"{JETPACK_TRTEXEC}; a board flashed without JetPack's components lacks it, as "
        '`dpkg -l nvidia-jetpack` shows: `sudo apt-get install nvidia-jetpack`). Pass --trtexec '
        'PATH. '
        'Without TensorRT, serve the CPU profile instead (profile:=cpu).')


def trtexec_command(trtexec: Path, onnx: Path, engine: Path, fp16: bool, workspace_mib: int,
                    frame_range: FrameRange, int8: bool = False) -> list[str]:
    """
    Return the trtexec command that builds `engine` from `onnx` without running inference.

    `workspace_mib` is TensorRT's workspace memory pool in MiB, `fp16` allows half precision,
    and the frame range gives the optimization profile's min, optimum and max input shapes.
    `int8` allows INT8 (trtexec's `--int8`, "Enable int8 precision, in addition to fp32",
    samples/common/sampleOptions.cpp): `onnx` is then a QDQ graph of `models quantize`, whose
    Quantize/Dequantize pairs set the scales (explicit quantization: no calibrator runs), and
    `--fp16` keeps what is left in float at half precision.
    """
    command = [str(trtexec), f'--onnx={onnx}', f'--saveEngine={engine}',
               f'--memPoolSize=workspace:{workspace_mib}M', '--skipInference',
               *frame_range.trtexec_shapes(FRAME_INPUT)]
    if int8:
        command.append('--int8')
    if fp16:
        command.append('--fp16')
    return command


def build_engine(trtexec: Path, onnx: Path, fp16: bool, workspace_mib: int,
                 log: Callable[[str], None], int8: bool = False) -> Path:
    """
    Build one engine next to its ONNX file, for the frame range its step config declares.

    The old engine stays until the new one is complete. With `int8`, `onnx` is the step's
    TensorRT QDQ graph and the engine is `model_int8.plan`, beside the float one.
    """
    if not onnx.is_file():
        raise EngineBuildError(f"{onnx} is missing: run 'triton-perception models "
                               f"{'quantize' if int8 else 'install'}' first")
    engine = onnx.with_name('model_int8.plan' if int8 else 'model.plan')
    partial = engine.with_name(engine.name + '.partial')
    build_log = onnx.with_name('trtexec_int8.log' if int8 else 'trtexec.log')
    frame_range = frame_range_of((onnx.parent.parent / 'config.pbtxt').read_text(
        encoding='utf-8'))
    precision = ('int8+' if int8 else '') + ('fp16' if fp16 else 'fp32')
    if _is_current(engine, onnx, precision, frame_range):
        log(f'{engine} is current (frames {frame_range}, same ONNX file, device and TensorRT): '
            'kept; delete it to build it again')
        return engine
    command = trtexec_command(trtexec, onnx, partial, fp16, workspace_mib, frame_range, int8)
    log(f'building {engine} ({precision.upper()}, frames {frame_range}; several '
        f'minutes on an Orin; trtexec output in {build_log})')
    started = time.monotonic()
    returncode, tensorrt = _run_trtexec(command, build_log, engine, log)
    if returncode != 0 or not partial.is_file():
        partial.unlink(missing_ok=True)
        tail = build_log.read_text(encoding='utf-8', errors='replace').splitlines()[-15:]
        cause = missing_library_cause(str(trtexec), '\n'.join(tail))
        if cause:
            raise EngineBuildError(cause)
        raise EngineBuildError(f'trtexec failed for {onnx} (exit {returncode}); last '
                               f'lines of {build_log}:\n' + '\n'.join(tail))
    partial.replace(engine)
    record = EngineRecord(onnx_sha256=sha256_of(onnx), tensorrt=tensorrt, device=device_name(),
                          precision=precision, frame_range=str(frame_range))
    engine.with_suffix('.plan.json').write_text(json.dumps(record.__dict__, indent=2),
                                                encoding='utf-8')
    log(f'built {engine} in {time.monotonic() - started:.0f} s (TensorRT {tensorrt})')
    return engine


def _is_current(engine: Path, onnx: Path, precision: str, frame_range: FrameRange) -> bool:
    """Return whether `engine` was built from `onnx` here, as asked, by this TensorRT."""
    sidecar = engine.with_suffix('.plan.json')
    if not (engine.is_file() and sidecar.is_file()):
        return False
    record = EngineRecord(**json.loads(sidecar.read_text(encoding='utf-8')))
    return (not record.problems_with(sha256_of(onnx), device_name())
            and not record.mismatches(frame_range, installed_tensorrt())
            and record.frame_range == str(frame_range)
            and record.precision == precision)


def _run_trtexec(command: list[str], build_log: Path, engine: Path,
                 log: Callable[[str], None]) -> tuple[int, str]:
    """
    Run trtexec into `build_log`, saying every so often that it still builds.

    Returns its exit code and the TensorRT version it printed ('unknown' when it printed none).
    """
    started = time.monotonic()
    tensorrt = 'unknown'
    with open(build_log, 'w', encoding='utf-8') as log_file:
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                   text=True, stdin=subprocess.DEVNULL)
        done = threading.Event()

        def report_progress() -> None:
            while not done.wait(PROGRESS_PERIOD_S):
                log(f'  still building {engine.parent.parent.name} '
                    f'({time.monotonic() - started:.0f} s)')
        reporter = threading.Thread(target=report_progress, daemon=True)
        reporter.start()
        assert process.stdout is not None
        for line in process.stdout:
            log_file.write(line)
            version = re.search(r'TensorRT version: ([\d.]+)', line) or re.search(
                r'\[TensorRT v(\d+)\]', line)
            if version:
                tensorrt = version.group(1)
        process.wait()
        done.set()
        reporter.join()
    return process.returncode, tensorrt


def build_engines(repository: Path, trtexec: str | None = None, fp16: bool = True,
                  workspace_mib: int = 2048, frame_range: FrameRange | None = None,
                  log: Callable[[str], None] = print, int8: bool = False) -> list[Path]:
    """
    Build every engine step's engine (with `int8`, of the steps `models quantize` quantized).

    With `frame_range`, the configs of every step that bounds the frame (`frame_steps`: the
    engine steps and camera_health, both profiles) declare it first, so the engines, the configs
    and the CPU profile agree on the frames they take (the INT8 engines' too).
    """
    if frame_range is not None:
        for step in frame_steps(repository):
            set_frame_range(repository / step, frame_range)
            log(f'{step}: frames {frame_range}')
    if int8:
        steps = [step for step in engine_steps(repository)
                 if (repository / step / '1' / TENSORRT_QDQ_GRAPH).is_file()]
        if not steps:
            raise EngineBuildError(f'no model step of {repository} has an INT8 graph '
                                   f"({TENSORRT_QDQ_GRAPH}): run 'triton-perception models "
                                   "quantize' first")
        tool = find_trtexec(trtexec)
        return [build_engine(tool, repository / step / '1' / TENSORRT_QDQ_GRAPH, fp16,
                             workspace_mib, log, int8=True) for step in steps]
    tool = find_trtexec(trtexec)
    return [build_engine(tool, repository / step / '1' / 'model.onnx', fp16, workspace_mib, log)
            for step in engine_steps(repository)]


def stale_engines(repository: Path) -> list[str]:
    """
    Why engines in the repository may not fit this machine (empty when they do).

    Every plan a step may have (ENGINE_PLANS): the INT8 engine is stale too once its TensorRT
    graph changed, as a new calibration changes it.
    """
    warnings = []
    device = device_name()
    for step in engine_steps(repository):
        for plan, graph, command in ENGINE_PLANS:
            engine = repository / step / '1' / plan
            if not engine.is_file():
                continue
            sidecar = engine.with_suffix('.plan.json')
            onnx = engine.with_name(graph)
            if not sidecar.is_file() or not onnx.is_file():
                warnings.append(f"{engine}: no build record; rebuild with '{command}' if it "
                                'was made elsewhere')
                continue
            record = EngineRecord(**json.loads(sidecar.read_text(encoding='utf-8')))
            for problem in record.problems_with(sha256_of(onnx), device):
                warnings.append(f"{engine}: {problem}; rebuild with '{command}'")
    return warnings


def engine_mismatches(repository: Path, tensorrt: str | None = None) -> list[str]:
    """
    Return why the server would fail to load the engines, then the command that mends it.

    `tensorrt` is this machine's TensorRT version (installed_tensorrt() when None); where it is
    unknown only the frame ranges are compared. The command declares the engines' recorded
    frame range again and rebuilds only the engines that do not match it.
    """
    tensorrt = tensorrt or installed_tensorrt()
    problems, recorded_ranges = [], set()
    for step in engine_steps(repository):
        for plan, _graph, _command in ENGINE_PLANS:
            sidecar = repository / step / '1' / f'{plan}.json'
            if not (sidecar.with_suffix('').is_file() and sidecar.is_file()):
                continue
            record = EngineRecord(**json.loads(sidecar.read_text(encoding='utf-8')))
            recorded_ranges.add(record.frame_range)
            configured = frame_range_of((repository / step / 'config.pbtxt').read_text(
                encoding='utf-8'))
            problems += [f'{step} ({plan}): {problem}'
                         for problem in record.mismatches(configured, tensorrt)]
    if not problems:
        return []
    command = f'triton-perception engines build --model-repository {repository}'
    if len(recorded_ranges) == 1 and (recorded := recorded_ranges.pop()):
        smallest, largest = recorded.split(' to ')
        command += f' --min-frame {smallest} --max-frame {largest}'
    if any('(model_int8.plan)' in problem for problem in problems):
        command += f'; then {command} --int8'
    return [*problems, f'run: {command}']
