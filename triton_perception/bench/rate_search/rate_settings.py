"""
What `bench --rate-search` runs, and the search itself: ros2_benchmark's auto finder.

The search, as ros2_benchmark's: a trial run at the middle of the range (warm-up, not judged),
a bisection of [lower, upper] until the interval is narrower than `bisection_width_hz`, then
steps of `step_hz` up from its lower end until a rate is not sustained, and the rate found held
by a second window. A rate is sustained when at most ceil(drop_limit x frames sent) are missed.
"""
from __future__ import annotations

from dataclasses import dataclass
import math
from pathlib import Path
from typing import Callable

from vision_msgs.msg import Detection2DArray

from triton_perception.bench.rate_search.rate_search_schema import (Probe, RateFigures,
                                                                    SearchResult)
from triton_perception.bench.rate_search.stand_in_node import NODE_NAME as STAND_IN_NODE
from triton_perception.bench.session import (BenchError, BOTH, DEFAULT_VIDEO, DETECTIONS, LANES,
                                             NodeKind)

MODELS = {'detection': DETECTIONS, 'lanes': LANES, 'both': BOTH}
LAYOUTS = ('single', 'per_node', 'groups_of_2', 'per_camera')
STAND_IN_KIND = NodeKind(STAND_IN_NODE, '', (), (('detections', Detection2DArray),), dict)
Prober = Callable[[float, float, str], RateFigures]


@dataclass(frozen=True)
class RateSearchSettings:
    """
    What `bench --rate-search` runs and how.

    `bag` (its camera `topic`) or else `video` gives the frames, at most `max_frames` of them
    held in memory. `stand_in_hz`: replace the pipeline by stand-in nodes of that capacity
    (0: they answer nothing). Rates are per camera, in Hz.
    """

    cameras: int = 1
    models: str = 'both'
    layout: str = 'single'
    bag: Path | None = None
    topic: str | None = None
    video: Path = DEFAULT_VIDEO
    max_frames: int = 120
    lower_hz: float = 1.0
    upper_hz: float = 40.0
    step_hz: float = 0.5
    bisection_width_hz: float = 2.0
    drop_limit: float = 0.05
    window_s: float = 10.0
    fixed_rates: tuple[float, ...] = (10.0, 30.0)
    repeats: int = 3
    json_path: Path | None = None
    profile: str = 'cpu'
    precision: str = 'fp'
    triton_url: str | None = None
    model_repository: Path | None = None
    stand_in_hz: float | None = None
    command: str = ''

    def __post_init__(self) -> None:
        """Raise BenchError for settings the search cannot run with."""
        if self.models not in MODELS:
            raise BenchError(f'--models {self.models}: choose from {", ".join(MODELS)}')
        if self.layout not in LAYOUTS:
            raise BenchError(f'--layout {self.layout}: choose from {", ".join(LAYOUTS)}')
        if not 1 <= self.cameras <= 16:
            raise BenchError(f'--cameras: need 1-16 cameras for --rate-search, got {self.cameras}')
        if not 0 < self.lower_hz < self.upper_hz:
            raise BenchError(f'--search-range: need 0 < lower < upper, got {self.lower_hz:g},'
                             f'{self.upper_hz:g}')
        if self.step_hz <= 0 or self.bisection_width_hz < self.step_hz:
            raise BenchError(f'--search-step {self.step_hz:g}: need a step > 0 and no wider than '
                             f'the bisection width ({self.bisection_width_hz:g} Hz)')
        if self.window_s <= 0 or self.repeats < 1 or not 0 < self.drop_limit < 1:
            raise BenchError('need --duration > 0, --repeats >= 1 and a drop limit in (0, 1)')
        if any(rate <= 0 for rate in self.fixed_rates):
            raise BenchError(f'--rates: every rate must be above 0, got {self.fixed_rates}')


def sustained(sent: int, missed: int, drop_limit: float) -> bool:
    """Say whether a run missed at most ceil(drop_limit x sent) frames (ros2_benchmark's test)."""
    return missed <= math.ceil(sent * drop_limit)


def bisection_probes(settings: RateSearchSettings) -> int:
    """Return how many bisection probes the search runs (for the progress bar)."""
    width = settings.upper_hz - settings.lower_hz
    return max(0, math.ceil(math.log2(width / settings.bisection_width_hz)))


def search(probe: Prober, settings: RateSearchSettings) -> SearchResult:
    """
    Find the highest sustained rate: a trial run, bisection, then steps up (ros2_benchmark's order).

    `probe(rate_hz, window_s, phase)` runs the pipeline at a rate and returns its figures.
    """
    probes: list[Probe] = []

    def run(rate: float, phase: str) -> bool:
        figures = probe(rate, settings.window_s, phase)
        probes.append({'phase': phase, 'figures': figures})
        return figures['sustained']

    lower, upper = settings.lower_hz, settings.upper_hz
    run(round((lower + upper) / 2, 3), 'trial')
    while upper - lower > settings.bisection_width_hz:
        middle = round((lower + upper) / 2, 3)
        if run(middle, 'bisection'):
            lower = middle
        else:
            upper = middle
    found = lower
    while (rate := round(found + settings.step_hz, 3)) <= settings.upper_hz:
        if not run(rate, 'linear'):
            break
        found = rate
    # One window that held may have been a lucky one: the rate found holds a second window, or
    # the search steps down until one does.
    while found > settings.lower_hz and not run(found, 'confirmation'):
        found = max(settings.lower_hz, round(found - settings.step_hz, 3))
    at_bound = ('upper' if found + settings.step_hz > settings.upper_hz else
                'lower' if found == settings.lower_hz else None)
    return {'drop_limit': settings.drop_limit, 'lower_hz': settings.lower_hz,
            'upper_hz': settings.upper_hz, 'bisection_width_hz': settings.bisection_width_hz,
            'step_hz': settings.step_hz, 'window_s': settings.window_s, 'probes': probes,
            'max_sustained_hz': found, 'at_bound': at_bound}
