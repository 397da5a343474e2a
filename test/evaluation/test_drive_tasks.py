"""
Drives replayed as Ray tasks on a local Ray: the same figures as one after another.

Real Ray (a local instance started by the evaluation), real nodes, the session's tritonserver;
each drive replays in lockstep, so its figures do not depend on how many replay at once. A
worker killed in the middle of a drive is started again by Ray and the report says so; a drive
whose bag is corrupt is reported failed while the others complete.
"""
from __future__ import annotations

import json
import os
from pathlib import Path
import shutil
import signal
import threading
import time
from typing import Any

import pytest

from support.coco_labels import coco_from_mot
from support.highway_clip import CLIP, LABELS
from triton_perception.bag.make import DEFAULT_EPOCH_S, make_bag
from triton_perception.evaluation.drive_tasks import WORKER_PID_FILE
from triton_perception.evaluation.drives import drive_bags, evaluate_drives
from triton_perception.evaluation.evaluation import EvaluationSettings

pytestmark = [pytest.mark.ros, pytest.mark.server, pytest.mark.slow]
FRAMES = 24


def labelled_drives(directory: Path, names: list[str]) -> tuple[Path, tuple[Path, ...]]:
    """Return a directory of drives (the clip's first FRAMES frames, stamps apart) and labels."""
    drives = directory / 'drives'
    labels = tuple(directory / 'labels' / kind for kind in ('lanes', 'tracks', 'boxes'))
    for path in labels:
        path.mkdir(parents=True)
    for number, name in enumerate(names):
        shift_ns = number * 1000 * 1_000_000_000
        make_bag(CLIP, drives / name, max_frames=FRAMES,
                 start_time_s=DEFAULT_EPOCH_S + shift_ns // 1_000_000_000)
        (labels[0] / name).mkdir()
        for label in (LABELS / 'culane').glob('*.lines.txt'):
            stamp = int(label.name.split('.')[0])
            if stamp < DEFAULT_EPOCH_S * 1_000_000_000 + FRAMES * 40_000_000:
                shutil.copy(label, labels[0] / name / f'{stamp + shift_ns}.lines.txt')
        tracks = labels[1] / f'{name}.txt'  # the cars of the drive's frames
        tracks.write_text(''.join(line + '\n' for line in (LABELS / 'gt.txt').read_text()
                                  .splitlines() if int(line.split(',')[0]) <= FRAMES))
        stamps = [DEFAULT_EPOCH_S * 1_000_000_000 + shift_ns + index * 40_000_000
                  for index in range(FRAMES)]
        (labels[2] / f'{name}.json').write_text(json.dumps(coco_from_mot(tracks, stamps)))
    return drives, labels


def settings(drives: Path, labels: tuple[Path, ...], output: Path,
             triton_url: str) -> EvaluationSettings:
    """Return the evaluation of a directory of drives in lockstep, scored against `labels`."""
    return EvaluationSettings(bag=drives, output=output, triton_url=triton_url, labels=labels,
                              timing='lockstep', lanes_scored='ego', lane_rows_from_labels=True,
                              sparse_tracks=True)


# Four lockstep replays of both models and Ray's start: beside a busy core they may take longer
# than the suite's 300 s hang guard, which is for hangs, not for slow machines.
@pytest.mark.timeout(600)
def test_two_workers_give_the_figures_of_one_after_another(triton_server: Any,
                                                           tmp_path: Path) -> None:
    """Two drives, one after the other and at once with --workers 2 on a local Ray: same figures."""
    drives, labels = labelled_drives(tmp_path, ['a', 'b'])
    bags = drive_bags(drives) or []
    one = evaluate_drives(settings(drives, labels, tmp_path / 'one', triton_server.grpc_url),
                          bags, print)
    two = evaluate_drives(settings(drives, labels, tmp_path / 'two', triton_server.grpc_url),
                          bags, print, workers=2)
    assert list(two['drives']) == ['a', 'b']
    assert two['accuracy'] == one['accuracy']
    for name in 'ab':
        assert two['drives'][name]['accuracy'] == one['drives'][name]['accuracy'], name
        assert 'attempts' not in two['drives'][name]
        assert (tmp_path / 'two' / name / 'report.json').is_file()


def test_a_killed_worker_is_retried_and_a_corrupt_drive_fails_alone(triton_server: Any,
                                                                    tmp_path: Path) -> None:
    """Ray starts a killed worker's drive again; a corrupt bag fails; the rest complete."""
    drives, labels = labelled_drives(tmp_path, ['corrupt', 'killed', 'plain'])
    for storage in (drives / 'corrupt').iterdir():
        if storage.name != 'metadata.yaml':
            storage.write_bytes(b'not a bag' * 100)
    output = tmp_path / 'evaluation'
    killed: list[int] = []

    def kill_once_started() -> None:
        pid_file = output / 'killed' / WORKER_PID_FILE
        deadline = time.monotonic() + 300
        while not pid_file.is_file() and time.monotonic() < deadline:
            time.sleep(0.1)
        time.sleep(3.0)  # the pipeline is starting or replaying
        pid = int(pid_file.read_text())
        killed.append(pid)
        os.kill(pid, signal.SIGKILL)
    killer = threading.Thread(target=kill_once_started, daemon=True)
    killer.start()
    report = evaluate_drives(settings(drives, labels, output, triton_server.grpc_url),
                             drive_bags(drives) or [], print, workers=2)
    killer.join(timeout=10)
    assert killed, 'the worker of the drive was never seen'
    assert report['drives']['killed']['attempts'] == 2, report['drives']['killed']
    assert 'accuracy' in report['drives']['killed'] and 'accuracy' in report['drives']['plain']
    assert set(report['drives']['corrupt']) == {'failed'}
    assert report['drives']['corrupt']['failed']
    assert 'FAILED' in (output / 'report.md').read_text()
