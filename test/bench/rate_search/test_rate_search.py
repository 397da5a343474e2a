"""
`triton-perception bench --rate-search` against a stand-in pipeline of known capacity.

The stand-in (bench/rate_search/stand_in_node.py) holds each frame 1 / capacity seconds behind a
latest-frame slot, so at a publisher rate R above its capacity C it drops about 1 - C / R of
the frames: the highest rate with at most 5 % missed is C / 0.95. The command runs as users run
it, its own process, fed from a small bag held in memory; its results file is validated
against the schema the package keeps (jsonschema comes with ray, the evaluation extra). The
search itself is also run against a pure function, where its answer is exact.
"""
from __future__ import annotations

import json
from pathlib import Path
import subprocess
import sys

import cv2
import jsonschema
import numpy as np
import pytest

from triton_perception.bag.make import make_bag
from triton_perception.bench.rate_search.rate_search_schema import (MACHINE_KEYS,
                                                                    METADATA_KEYS,
                                                                    RESULTS_SCHEMA)
from triton_perception.bench.rate_search.rate_settings import RateSearchSettings, search

CLI = str(Path(sys.executable).parent / 'triton-perception')
CAPACITY_HZ = 12.0
STEP_HZ = 1.0


@pytest.fixture(scope='module')
def small_bag(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Return a camera bag of 20 small frames."""
    directory = tmp_path_factory.mktemp('frames')
    for index in range(20):
        cv2.imwrite(str(directory / f'{index:03d}.png'),
                    np.full((90, 160, 3), 10 * index, np.uint8))
    make_bag(directory, directory / 'bag')
    return directory / 'bag'


def rate_search(bag: Path, stand_in: float, *options: str) -> subprocess.CompletedProcess[str]:
    """Run the command against stand-in nodes of capacity `stand_in`, return the process."""
    return subprocess.run(
        [CLI, 'bench', '--rate-search', '--stand-in', f'{stand_in:g}', '--bag', str(bag),
         '--search-range', '2,30', '--search-step', f'{STEP_HZ:g}', '--duration', '2',
         *options], capture_output=True, text=True, timeout=300, check=False)


def test_the_search_finds_the_stand_ins_capacity_and_writes_a_valid_results_file(
        small_bag: Path, tmp_path: Path) -> None:
    """
    Capacity 12 Hz: the rate found is within one step of 12 / 0.95 Hz.

    The results file has every field, validates against the schema, names the bag's hash, and
    holds the fixed-rate runs (5 Hz and the rate found, each once).
    """
    results = tmp_path / 'rates.json'
    completed = rate_search(small_bag, CAPACITY_HZ, '--rates', '5', '--repeats', '1',
                            '--json', str(results))
    assert completed.returncode == 0, completed.stderr[-3000:]
    report = json.loads(results.read_text())
    jsonschema.validate(report, RESULTS_SCHEMA)
    found = report['search']['max_sustained_hz']
    assert abs(found - CAPACITY_HZ / 0.95) <= STEP_HZ, completed.stderr[-3000:]
    assert report['metadata']['BenchmarkMetadata.PEAK_THROUGHPUT_PREDICTION'] == found
    assert set(METADATA_KEYS) <= set(report['metadata'])
    assert set(MACHINE_KEYS) <= set(report['machine'])
    assert report['input']['frames'] == 20 and len(report['input']['sha256']) == 64
    assert report['command'].startswith('triton-perception bench --rate-search --stand-in 12')
    phases = [probe['phase'] for probe in report['search']['probes']]
    assert phases[0] == 'trial' and 'bisection' in phases
    assert set(report['fixed_rates']) == {'5fps', f'{found:g}fps'}
    slow = report['fixed_rates']['5fps']['runs'][0]
    assert slow['BasicPerformanceMetrics.NUM_MISSED_FRAMES'] == 0 and slow['sustained']
    assert slow['BasicPerformanceMetrics.NUM_FRAMES_SENT'] == 10
    # The stand-in answers 1 / capacity after each frame: its latency is at least that.
    assert slow['BasicPerformanceMetrics.MIN_LATENCY'] >= 1000 / CAPACITY_HZ - 1
    too_fast = [probe['figures'] for probe in report['search']['probes']
                if probe['figures']['rate_hz'] > CAPACITY_HZ / 0.95 + STEP_HZ]
    assert too_fast and not any(figures['sustained'] for figures in too_fast)
    assert f'**{found:g} Hz**' in completed.stdout
    assert '[' in completed.stderr and 'runs, about' in completed.stderr  # the progress bar


def test_a_pipeline_that_answers_nothing_stops_the_search_with_one_line(
        small_bag: Path) -> None:
    """Capacity 0: the stand-in takes frames and answers none; exit 2 and one error line."""
    completed = rate_search(small_bag, 0)
    assert completed.returncode == 2
    errors = [line for line in completed.stderr.splitlines()
              if line.startswith('triton-perception: error:')]
    assert len(errors) == 1 and 'answered none of the' in errors[0], completed.stderr[-2000:]


def test_the_search_order_is_ros2_benchmarks() -> None:
    """Against a pure capacity: trial, bisection to 4 steps, steps up; the answer exact."""
    settings = RateSearchSettings(lower_hz=1, upper_hz=61, step_hz=0.5, bisection_width_hz=2)
    probed = []

    def probe(rate: float, window_s: float, phase: str) -> dict[str, object]:
        probed.append((phase, rate))
        return {'rate_hz': rate, 'sustained': rate <= 17.3}

    result = search(probe, settings)  # type: ignore[arg-type]
    assert result['max_sustained_hz'] == 17.0 and result['at_bound'] is None
    assert probed[0] == ('trial', 31.0)
    assert [phase for phase, _rate in probed[1:]] == ['bisection'] * 5 + ['linear'] * 3 + [
        'confirmation']
    assert probed[-2:] == [('linear', 17.5), ('confirmation', 17.0)]


def test_the_rate_found_is_confirmed_by_a_second_window() -> None:
    """A window that held by luck: the second window at that rate fails, the search steps down."""
    settings = RateSearchSettings(lower_hz=1, upper_hz=21, step_hz=0.5, bisection_width_hz=2)
    seen: dict[float, int] = {}

    def probe(rate: float, window_s: float, phase: str) -> dict[str, object]:
        seen[rate] = seen.get(rate, 0) + 1
        lucky = rate == 10.0 and seen[rate] == 1  # holds once at 10 Hz, never again
        return {'rate_hz': rate, 'sustained': rate <= 9.5 or lucky}

    result = search(probe, settings)  # type: ignore[arg-type]
    assert result['max_sustained_hz'] == 9.5
    assert [probe['phase'] for probe in result['probes']][-2:] == ['confirmation'] * 2
