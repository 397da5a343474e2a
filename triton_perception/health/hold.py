"""
Levels that change only after a hold time, so a status does not flicker frame by frame.

The levels are diagnostic_msgs/DiagnosticStatus's (OK 0, WARN 1, ERROR 2), as plain integers:
this folder does not import ROS.
"""
from __future__ import annotations

OK, WARN, ERROR = 0, 1, 2
LEVEL_NAMES = ('OK', 'WARN', 'ERROR')


class HeldLevel:
    """
    A level that follows a target level only once the target has held for a while.

    It rises once the target has stayed above it for `raise_hold_s`, to the lowest level the
    target took meanwhile, and falls once the target has stayed below it for `clear_hold_s`, to
    the highest level the target took meanwhile. Times are seconds of one monotonic clock.
    """

    def __init__(self, raise_hold_s: float, clear_hold_s: float) -> None:
        """Rise after `raise_hold_s` (0: at once), fall after `clear_hold_s`."""
        self.raise_hold_s = raise_hold_s
        self.clear_hold_s = clear_hold_s
        self.level = OK
        self.changed_at: float | None = None  # when `level` last changed
        self._since: float | None = None  # when the target left `level`, this time
        self._reached = OK  # the level the target kept since then

    def update(self, target: int, now: float) -> int:
        """Take the target level at time `now`; return the held level."""
        if target == self.level or (self._since is not None and (
                (target > self.level) != (self._reached > self.level))):
            self._since = None  # back at the level, or crossed it: the wait starts again
        if target == self.level:
            return self.level
        if self._since is None:
            self._since, self._reached = now, target
        rising = target > self.level
        self._reached = min(self._reached, target) if rising else max(self._reached, target)
        if now - self._since >= (self.raise_hold_s if rising else self.clear_hold_s):
            self.level, self.changed_at, self._since = self._reached, now, None
        return self.level
