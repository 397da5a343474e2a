"""
The guard of `models quantize`: the float and the INT8 graphs replayed on drives and paired.

Each guard drive (not used for calibration) is replayed in lockstep twice, through the float
graphs and through the candidate INT8 graphs (served from a view of the repository that holds
them, serving nothing else differently), and the two runs are paired frame by frame by `bag
compare`'s own code (folder_comparison.compare): bootstrap intervals of each figure's agreement
over frames, and over drives when there are several. The INT8 graphs pass when no figure is
flagged, i.e. no interval lies wholly below 1 - its threshold. With labels, both runs are also
scored against them and report.md gives both models' scores. Each precision is served by one
tritonserver of the guard's own on free ports, for all the drives: not on tritonserver's
default ports, which a server already running on the machine (the robot's, another guard's)
may hold.
"""
from __future__ import annotations

from dataclasses import dataclass
import json
from pathlib import Path
import tempfile
from typing import Callable, Sequence

from triton_perception.bag import BagError
from triton_perception.evaluation.comparison import CompareOptions
from triton_perception.evaluation.evaluation import camera_topic, evaluate, EvaluationSettings
from triton_perception.evaluation.folder_comparison import compare
from triton_perception.evaluation.metrics import (AccuracySection, ChangeFigure, DrivesReport,
                                                  ReplayReport)
from triton_perception.models import Candidate, candidate_repository
from triton_perception.serving import ServerConfig, TritonServer
from triton_perception.system import free_ports

COMPARISON_DIRECTORY = 'comparison'
CHANGED_FRAMES = 10


@dataclass(frozen=True)
class GuardVerdict:
    """What the guard found: the flagged figures (one line each) and report.md's path."""

    flagged: list[str]
    report: Path


def check_guard_drives(drives: Sequence[Path]) -> None:
    """Raise BagError, one line, for a guard drive without a camera topic or without frames."""
    for drive in drives:
        topic, frames = camera_topic(drive, None)
        if frames == 0:
            raise BagError(f'guard drive {drive} has no frames on {topic}')


def _flagged_lines(document: DrivesReport) -> list[str]:
    """Return one line per flagged figure of comparison.json: its interval and threshold."""
    lines = []
    fleet = document.get('comparison')
    if fleet:
        for scope, figures in (('over_drives', fleet.get('over_drives', {})),
                               ('over_frames', fleet.get('over_frames', {}))):
            for name, figure in figures.items():
                if figure.get('flagged'):
                    lines.append(_line(f"{name} {scope.replace('_', ' ')}", figure))
    for drive, part in document.get('drives', {}).items():
        comparison = part['comparison']
        for name in comparison['flagged']:
            lines.append(_line(f'{drive}: {name}', comparison['figures'][name]))
    return lines


def _line(label: str, figure: ChangeFigure) -> str:
    low, high = figure['interval']
    return (f"{label}: agreement {figure['agreement']:.3f}, interval [{low:.3f}, {high:.3f}] "
            f"below 1 - {figure['threshold']:g}")


def _scores(report_path: Path) -> dict[str, AccuracySection]:
    try:
        report: ReplayReport = json.loads(report_path.read_text(encoding='utf-8'))
    except (OSError, ValueError):
        return {}
    return report.get('accuracy', {})


def _scores_table(output: Path, names: list[str]) -> list[str]:
    """Return report.md's lines with both models' headline scores against the labels."""
    rows = []
    for name in names:
        for precision in ('fp', 'int8'):
            for section, figures in _scores(output / precision / name / 'report.json').items():
                values = ', '.join(f'{key} {value:.3f}' for key, value in figures.items()
                                   if isinstance(value, float))
                rows.append(f'| {name} | {precision} | {section} | {values} |')
    if not rows:
        return []
    return ['', '## Both models against the labels', '',
            '| drive | precision | section | figures |', '| --- | --- | --- | --- |', *rows]


def guard_quantization(repository: Path, candidates: Sequence[Candidate], drives: Sequence[Path],
                       output: Path, thresholds: dict[str, float] | None = None,
                       labels: Sequence[Path] = (), profile: str = 'cpu',
                       log: Callable[[str], None] = print) -> GuardVerdict:
    """
    Replay `drives` through the float and the candidate INT8 graphs and pair them.

    Writes into `output`: fp/<drive>/ and int8/<drive>/ (each a `bag evaluate` output),
    comparison/ (`bag compare`'s comparison.json, the most changed frames drawn side by side)
    and report.md. Raises BagError for a guard drive without frames.
    """
    check_guard_drives(drives)
    names = [Path(drive).name for drive in drives]
    if len(set(names)) != len(names):
        raise BagError(f"the guard drives' names repeat ({', '.join(names)}): give drives of "
                       'different names')
    output.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix='triton_perception-guard-') as scratch:
        view = candidate_repository(repository, candidates, Path(scratch) / 'repository')
        for precision in ('fp', 'int8'):
            http_port, grpc_port, metrics_port = free_ports(3)
            config = ServerConfig(model_repository=view, profile=profile, precision=precision,
                                  http_port=http_port, grpc_port=grpc_port,
                                  metrics_port=metrics_port)
            with TritonServer(config, log=log, show_server_log=False) as server:
                for drive, name in zip(drives, names):
                    log(f'guard: {name}: replaying through the {precision} graphs in lockstep')
                    evaluate(EvaluationSettings(
                        bag=Path(drive), output=output / precision / name, timing='lockstep',
                        triton_url=server.grpc_url, profile=profile, precision=precision,
                        model_repository=view, labels=tuple(labels)), log=log)
    options = CompareOptions(dict(thresholds or {}),
                             (CHANGED_FRAMES, output / COMPARISON_DIRECTORY / 'changed_frames'),
                             [])
    single = len(drives) == 1
    flagged, text = compare(output / 'fp' / names[0] if single else output / 'fp',
                            output / 'int8' / names[0] if single else output / 'int8',
                            output / COMPARISON_DIRECTORY, options, 1, '', log)
    document = json.loads((output / COMPARISON_DIRECTORY / 'comparison.json').read_text(
        encoding='utf-8'))
    lines = _flagged_lines(document) if flagged else []
    if flagged and not lines:
        lines = ['the comparison flagged a change (see report.md)']
    verdict = ('**Refused**: ' + '; '.join(lines) if lines
               else '**Passed**: no figure of the INT8 graphs lies below its threshold.')
    report = output / 'report.md'
    report.write_text('\n'.join([
        '# INT8 guard: float and INT8 graphs paired on the guard drives', '',
        f"Guard drives: {', '.join(str(drive) for drive in drives)}. " + verdict, '',
        '## Float (old) against INT8 (new), as `bag compare`', '', text.rstrip('\n'),
        *_scores_table(output, names), '',
        f'The frames that changed most, both runs drawn side by side: '
        f'{output / COMPARISON_DIRECTORY}/changed_frames.', '']), encoding='utf-8')
    return GuardVerdict(lines, report)
