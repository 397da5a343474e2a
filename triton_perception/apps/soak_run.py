"""
`make soak`: a long looped replay that watches memory and accounting (not run in CI).

Passes when, after warm-up, the resident memory of each node and of the tritonserver tree grew
by less than 10 %, and every frame each node received is accounted for.
"""
from __future__ import annotations

import json
from pathlib import Path
import tempfile
import threading
import time
from typing import Callable, TypedDict

from triton_perception.bag import play_bag
from triton_perception.evaluation import (camera_topic, image_subscriptions, node_figures, NODES,
                                          pipeline_session, replay_plan, SUBSCRIBERS_TIMEOUT_S)
from triton_perception.pipeline import PipelineRunner
from triton_perception.system import tree_rss_mb

SAMPLE_PERIOD_S = 10.0
MAX_GROWTH = 0.10


class SoakReport(TypedDict):
    """soak.json: memory per process, each node's accounting, and the two verdicts."""

    bag: str
    frames_per_loop: int
    minutes: float
    warm_up_s: float
    memory: dict[str, dict[str, float]]  # growth()
    nodes: dict[str, dict[str, object]]  # a node's counts, latency_ms and reasons
    accounted: bool
    memory_ok: bool
    samples: list[dict[str, float]]  # elapsed_s and RSS MiB by process


def memory_sample(runner: PipelineRunner) -> dict[str, float]:
    """Return the resident memory (MiB) of each node's process tree and of tritonserver's."""
    sample = {name: tree_rss_mb(process.pid) for name, process in runner.nodes.items()}
    if runner.server and runner.server.pid:
        sample['tritonserver'] = tree_rss_mb(runner.server.pid)
    return sample


def growth(samples: list[tuple[float, dict[str, float]]],
           warm_up_s: float) -> dict[str, dict[str, float]]:
    """Per process: RSS at the end of warm-up, at the end, and the relative growth."""
    warm = next((sample for elapsed, sample in samples if elapsed >= warm_up_s), samples[0][1])
    last = samples[-1][1]
    return {name: {'after_warm_up_mb': round(warm[name], 1), 'end_mb': round(last[name], 1),
                   'growth': round((last[name] - warm[name]) / warm[name], 4)}
            for name in last if warm.get(name)}


def soak(bag: Path, output: Path, minutes: float, profile: str, triton_url: str,
         log: Callable[[str], None]) -> SoakReport:
    """
    Replay `bag` in a loop through the pipeline for `minutes`, sampling memory every 10 s.

    Memory growth is measured from the end of the warm-up (a fifth of the run, at most 120 s)
    to the end; after the player stops, the nodes get up to 30 s to settle pending frames. The
    report is written to `output`/soak.json.

    Returns the report: memory per process, each node's accounting, and whether every frame was
    accounted for (`accounted`) and memory grew by less than 10 % (`memory_ok`).
    """
    topic, frames = camera_topic(bag, None)
    duration_s = minutes * 60.0
    warm_up_s = min(120.0, duration_s / 5)
    samples: list[tuple[float, dict[str, float]]] = []
    with tempfile.TemporaryDirectory(prefix='triton_perception-soak-') as scratch:
        plan = replay_plan(bag, topic, profile, triton_url, None, Path(scratch))
        with pipeline_session(plan, log, 'soak_player') as session:
            player_stop = threading.Event()
            player = threading.Thread(target=lambda: play_bag(
                bag, session.node, loop=True, topics=[topic],
                wait_for_subscribers=image_subscriptions('single'),
                wait_timeout_s=SUBSCRIBERS_TIMEOUT_S, stop_event=player_stop), daemon=True)
            player.start()
            while not session.watch.snapshot().keys() >= set(NODES):
                time.sleep(0.5)
            started = time.monotonic()
            while (elapsed := time.monotonic() - started) < duration_s:
                samples.append((elapsed, memory_sample(session.runner)))
                received = {node: status.count('received') for node, status in
                            session.watch.snapshot().items()}
                log(f'{elapsed / 60:.1f}/{minutes:g} min, RSS MB '
                    f'{ {name: round(mb) for name, mb in samples[-1][1].items()} }, '
                    f'received {received}')
                time.sleep(min(SAMPLE_PERIOD_S, max(0.0, duration_s - elapsed)))
            samples.append((time.monotonic() - started, memory_sample(session.runner)))
            player_stop.set()
            player.join(timeout=10.0)
            deadline = time.monotonic() + 30.0
            while time.monotonic() < deadline and any(
                    status.count('pending') for status in session.watch.snapshot().values()):
                time.sleep(0.5)
            accounting = session.watch.snapshot()
    nodes = node_figures(None, accounting)
    memory = growth(samples, warm_up_s)
    report: SoakReport = {
        'bag': str(bag), 'frames_per_loop': frames, 'minutes': minutes,
        'warm_up_s': warm_up_s, 'memory': memory,
        'nodes': {node: {key: figures[key] for key in
                         ('lost_before_node', 'received', 'published', 'dropped', 'rejected',
                          'failed', 'pending', 'latency_ms', 'reasons')}
                  for node, figures in nodes.items()},
        'accounted': all(figures['accounted'] for figures in nodes.values()),
        'memory_ok': all(entry['growth'] < MAX_GROWTH for entry in memory.values()),
        'samples': [{'elapsed_s': round(elapsed, 1), **sample} for elapsed, sample in samples],
    }
    output.mkdir(parents=True, exist_ok=True)
    (output / 'soak.json').write_text(json.dumps(report, indent=2), encoding='utf-8')
    return report
