"""
One camera's health: its frames' figures against thresholds and its own running baselines.

Stamps and arrival times come with every frame (`frame`), image figures with the frames the
caller checks (`image`, every `health_every_n`th); `report` says the level, the reason and every
figure. Each condition's level is held (hold.HeldLevel), so the status changes only once a
condition has persisted for `health_raise_hold_s` or been gone for `health_clear_hold_s`. Not
thread-safe: the caller serialises the calls. Times are seconds: `stamp_s` of the frames'
header stamps, `now` of one monotonic clock.
"""
from __future__ import annotations

import collections
from dataclasses import dataclass
import math

from triton_perception.health.hold import ERROR, HeldLevel, LEVEL_NAMES, OK, WARN
from triton_perception.health.image_figures import FrameFigures
from triton_perception.parameters import HealthSettings

CONDITIONS = ('blocked', 'blurred', 'dark', 'glare', 'frozen', 'stamps', 'rate')
RATE_INTERVALS = 8  # the recent rate is the median of this many frame intervals
# No frame for this many of the camera's usual intervals (and at least STALE_MIN_S) is ERROR.
STALE_INTERVALS = 5
STALE_MIN_S = 0.5


@dataclass(frozen=True)
class HealthReport:
    """A camera's status: its level (0 OK, 1 WARN, 2 ERROR), why in words, and its figures."""

    level: int
    message: str
    values: dict[str, str]


class RunningBaseline:
    """
    A slow running mean in log space that rises ten times faster than it falls.

    A camera that starts blurred soon learns its sharp baseline; a slow drift down (dusk, fog)
    is followed, a sudden fall is not.
    """

    def __init__(self, time_constant_s: float) -> None:
        """Fall with `time_constant_s`, rise with a tenth of it."""
        self.time_constant_s = time_constant_s
        self._log: float | None = None
        self._at = 0.0

    @property
    def value(self) -> float | None:
        """Return the baseline, None before the first sample."""
        return None if self._log is None else math.exp(self._log)

    def learn(self, sample: float, now: float) -> None:
        """Move towards `sample` (> 0) by the time since the last sample."""
        logged = math.log(max(sample, 1e-9))
        if self._log is None:
            self._log, self._at = logged, now
            return
        time_constant = self.time_constant_s / (10.0 if logged > self._log else 1.0)
        weight = 1.0 - math.exp(-max(now - self._at, 0.0) / time_constant)
        self._log += weight * (logged - self._log)
        self._at = now


class CameraHealth:
    """The health check of one camera's frames (see the module docstring)."""

    def __init__(self, settings: HealthSettings) -> None:
        """Judge with the thresholds and hold times of `settings`."""
        self.settings = settings
        holds = (settings.health_raise_hold_s, settings.health_clear_hold_s)
        self._held = {name: HeldLevel(*holds) for name in CONDITIONS}
        self._held['stamps'].raise_hold_s = 0.0  # a stamp running backwards is never noise
        self._sharpness = RunningBaseline(settings.health_baseline_s)
        self._interval = RunningBaseline(settings.health_baseline_s)
        self._last_arrival: float | None = None
        # The camera's rate is read from its stamps: a backlog that DDS delivers at once, a
        # loaded machine, or a replay paced by the nodes (lockstep) changes when frames arrive,
        # not how often the camera took them; a camera that loses half its frames doubles its
        # stamps' spacing. Arrivals still tell a camera gone silent.
        self._intervals: collections.deque[float] = collections.deque(maxlen=RATE_INTERVALS)
        self._figures: FrameFigures | None = None
        self._details: dict[str, str] = dict.fromkeys(CONDITIONS, '')
        self._last_stamp: float | None = None
        self._same_stamp = 0
        self._backwards = 0
        self._checked_stamp: float | None = None
        self._identical = 0
        self.frames = 0
        self.checked = 0
        self._offered = 0

    def image_due(self) -> bool:
        """Count a frame offered for the image check; return whether it is due (every Nth)."""
        self._offered += 1
        return (self._offered - 1) % self.settings.health_every_n == 0

    def frame(self, stamp_s: float, now: float) -> None:
        """Take a frame's header stamp, as it arrives: stamps and rate."""
        self.frames += 1
        stamps = OK
        if self._last_stamp is not None and stamp_s < self._last_stamp:
            self._backwards += 1
            stamps = ERROR
            self._details['stamps'] = (f'stamp ran {self._last_stamp - stamp_s:.3f} s '
                                       'backwards')
        self._same_stamp = self._same_stamp + 1 if stamp_s == self._last_stamp else 0
        if self._last_stamp is not None and stamp_s > self._last_stamp:
            self._intervals.append(stamp_s - self._last_stamp)
        self._last_stamp = stamp_s
        self._held['stamps'].update(stamps, now)
        self._last_arrival = now
        self._update_rate(now, arrived=True)

    def image(self, figures: FrameFigures, stamp_s: float, now: float) -> None:
        """Take the figures of a checked frame (image_figures.frame_figures) and its stamp."""
        self.checked += 1
        previous, self._figures = self._figures, figures
        settings = self.settings
        if previous is not None and figures.digest == previous.digest and (
                self._checked_stamp is not None and stamp_s > self._checked_stamp):
            self._identical += 1
        elif previous is None or figures.digest != previous.digest:
            self._identical = 0
        self._checked_stamp = stamp_s
        targets = {
            'blocked': _above(figures.blocked_fraction, settings.health_blocked_warn,
                              settings.health_blocked_error),
            'dark': ERROR if figures.dark_fraction >= settings.health_dark_fraction else OK,
            'glare': ERROR if figures.glare_fraction >= settings.health_glare_fraction else OK,
            'frozen': ERROR if max(self._identical, self._same_stamp) + 1 >= (
                settings.health_frozen_frames) else OK,
        }
        self._details.update(
            blocked=f'{figures.blocked_fraction:.0%} of the image without texture',
            dark=f'{figures.dark_fraction:.0%} of the pixels near black',
            glare=f'{figures.glare_fraction:.0%} of the pixels saturated',
            frozen=(f'{self._identical + 1} identical frames in a row'
                    if self._identical >= self._same_stamp
                    else f'{self._same_stamp + 1} frames in a row with one stamp'))
        baseline = self._sharpness.value
        ratio = 1.0 if baseline is None else figures.sharpness / max(baseline, 1e-9)
        targets['blurred'] = _above(-ratio, -settings.health_blur_warn,
                                    -settings.health_blur_error)
        self._details['blurred'] = f'sharpness {ratio:.0%} of its baseline'
        for name, target in targets.items():
            self._held[name].update(target, now)
        # The baseline learns from clean frames only: a covered, dark or glaring frame's
        # sharpness says nothing of the lens.
        if all(target == OK for target in targets.values()) and (
                self._held['blurred'].level == OK):
            self._sharpness.learn(figures.sharpness, now)

    def report(self, now: float) -> HealthReport:
        """Return the camera's status at `now` (a camera that went silent turns ERROR rate)."""
        self._update_rate(now, arrived=False)
        levels = {name: held.level for name, held in self._held.items()}
        level = max(levels.values())
        raised = [f'{LEVEL_NAMES[value]} {name}: {self._details[name]}'
                  for name, value in levels.items() if value != OK]
        message = '; '.join(raised) if raised else 'ok'
        if not self.frames:
            level, message = WARN, 'no frame received yet'
        return HealthReport(level, message, self._values(levels))

    def _update_rate(self, now: float, arrived: bool) -> None:
        """
        Judge the silence since the last frame, and (`arrived`) the recent rate of frames.

        The rate is judged when a frame arrives, so it is the rate of the latest intervals.
        """
        baseline = self._interval.value
        if self._last_arrival is None:
            return
        silence = now - self._last_arrival
        stale_after = max(STALE_MIN_S, STALE_INTERVALS * (baseline or STALE_MIN_S))
        if silence > stale_after:
            self._details['rate'] = f'no frame for {silence:.1f} s'
            self._held['rate'].update(ERROR, now)
            return
        if not arrived or len(self._intervals) < RATE_INTERVALS:
            return
        recent = _median_interval(self._intervals)
        target = OK
        if baseline is not None and recent * self.settings.health_rate_fraction > baseline:
            target = WARN
            self._details['rate'] = (f'{1.0 / recent:.1f} Hz, usually {1.0 / baseline:.1f} Hz')
        if self._held['rate'].update(target, now) == OK and target == OK:
            self._interval.learn(recent, now)

    def _values(self, levels: dict[str, int]) -> dict[str, str]:
        figures = self._figures
        baseline = self._sharpness.value
        interval = self._interval.value
        values = {name: LEVEL_NAMES[value] for name, value in levels.items()}
        values.update(frames=str(self.frames), frames_checked=str(self.checked),
                      stamps_backwards=str(self._backwards),
                      identical_frames=str(self._identical + 1 if figures else 0))
        if figures is not None:
            values.update(blocked_fraction=f'{figures.blocked_fraction:.3f}',
                          sharpness=f'{figures.sharpness:.4f}',
                          dark_fraction=f'{figures.dark_fraction:.3f}',
                          glare_fraction=f'{figures.glare_fraction:.3f}')
        if baseline is not None:
            values['sharpness_baseline'] = f'{baseline:.4f}'
        if len(self._intervals) >= RATE_INTERVALS:
            values['rate_hz'] = f'{1.0 / _median_interval(self._intervals):.1f}'
        if interval is not None:
            values['rate_baseline_hz'] = f'{1.0 / interval:.1f}'
        return values


def _above(value: float, warn: float, error: float) -> int:
    """Return ERROR at or above `error`, WARN at or above `warn`, else OK."""
    return ERROR if value >= error else WARN if value >= warn else OK


def _median_interval(intervals: collections.deque[float]) -> float:
    ordered = sorted(intervals)
    return max(ordered[len(ordered) // 2], 1e-6)
