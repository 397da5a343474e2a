"""
How long a replayed camera spent in each health state, from its statuses on /diagnostics.

The nodes publish one health status per camera (nodes/camera_health.py) every diagnostics
period; `bag evaluate` keeps each one with the time it arrived, and a state is taken to hold
from its status until the next. So a drive's report says, for example, that its camera was
blocked for 12 s of a 300 s replay, and why.
"""
from __future__ import annotations

from dataclasses import dataclass, field
import threading
import time
from typing import Callable, TypedDict

LEVELS = ('OK', 'WARN', 'ERROR', 'STALE')  # diagnostic_msgs/DiagnosticStatus levels 0..3


class CameraHealthFigures(TypedDict, total=False):
    """Time in each health state (s and share), the worst state, seconds per reason; or {}."""

    seconds: dict[str, float]
    share: dict[str, float]
    worst: str
    reasons: dict[str, float]


@dataclass
class CameraHealthLog:
    """The camera's health statuses of one replay, each with the time it arrived."""

    clock: Callable[[], float] = time.monotonic
    samples: list[tuple[float, int, tuple[str, ...]]] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add(self, level: int, message: str, values: dict[str, str]) -> None:
        """
        Keep one status: its level (0 OK .. 3 STALE), message and key/values.

        Its reasons are the conditions the values give a state other than OK (blocked, dark,
        ...), else, for a status not OK without one, its message. Statuses from before the
        camera's first frame are left out: the replay has not started.
        """
        if values.get('frames') == '0':
            return
        reasons = tuple(sorted(key for key, value in values.items()
                               if value in LEVELS and value != 'OK'))
        with self._lock:
            self.samples.append((self.clock(), level, reasons or (message,)))

    def summary(self) -> CameraHealthFigures:
        """Return the replay's time in each state up to now (health_summary)."""
        with self._lock:
            return health_summary(list(self.samples), self.clock())


def health_summary(samples: list[tuple[float, int, tuple[str, ...]]],
                   end: float) -> CameraHealthFigures:
    """
    Return the time in each state and the reasons, from (time, level, reasons) samples.

    Each state holds from its sample until the next one, the last until `end`. The result:
    `seconds` and `share` per state, the `worst` state reached, and `reasons`, the seconds each
    reason was given with a state other than OK. Without samples: {} (no camera status).
    """
    if not samples:
        return {}
    samples = sorted(samples)
    seconds = dict.fromkeys(LEVELS, 0.0)
    reasons: dict[str, float] = {}
    for (start, level, given), (until, _level, _given) in zip(
            samples, [*samples[1:], (end, 0, ())]):
        held = max(0.0, until - start)
        name = LEVELS[min(max(level, 0), len(LEVELS) - 1)]
        seconds[name] += held
        if name != 'OK':
            for reason in given:
                reasons[reason] = reasons.get(reason, 0.0) + held
    total = sum(seconds.values())
    worst = max(min(max(level, 0), len(LEVELS) - 1) for _time, level, _given in samples)
    return {'seconds': {name: round(value, 2) for name, value in seconds.items()},
            'share': {name: round(value / total, 4) if total else 0.0
                      for name, value in seconds.items()},
            'worst': LEVELS[worst],
            'reasons': {message: round(value, 2) for message, value in sorted(reasons.items())}}


def health_markdown(summary: CameraHealthFigures) -> list[str]:
    """Return the report.md lines of a camera health summary ([] without one)."""
    if not summary:
        return []
    shares = ', '.join(f'{name} {summary["share"][name]:.0%}' for name in LEVELS
                       if summary['seconds'][name] > 0)
    lines = ['', f'Camera health (time in each state): {shares}; worst {summary["worst"]}.']
    lines += [f'- {reason or "(no message)"}: {held:.1f} s'
              for reason, held in summary['reasons'].items()]
    return lines
