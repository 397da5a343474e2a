"""
Which camera's request goes to Triton next when a process has more frames than it can serve.

Without a gate, an overloaded process drops frames by chance: whichever request thread gets
the CPU sends. The gate holds at most `slots` requests in flight for the whole process and
hands a free slot out by policy (`camera_priorities`, e.g. '/front=always,/left=10'): first
the `always` cameras (the robot cannot drive without them); then the cameras that fall short
of their minimum rate, most behind first; then everyone else round-robin, least recently
served first, so that with no policy every camera gets an equal share. A minimum that the
capacity left by the `always` cameras cannot hold shows in `unheld` (a /diagnostics WARN).
It is plain threading (one Condition, no thread of its own), so it is tested without ROS or
Triton.
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
import math
import re
import threading
import time
from typing import Callable, Collection, Iterable, Mapping

from triton_perception.parameters import ParameterError

ALWAYS = 'always'
MAX_MIN_HZ = 1000.0
# The served rate is counted over this window: long enough to smooth single late replies,
# short enough that a camera falling behind is noticed within a diagnostics period.
WINDOW_S = 1.0
EXAMPLE = "e.g. '/front=always,/left=10,/right=10'"
NAMESPACE = re.compile(r'^(/[A-Za-z_][A-Za-z0-9_]*)+$')


@dataclass(frozen=True)
class CameraPolicy:
    """
    The cameras with a priority: `always` ones and those with a minimum served rate in Hz.

    Cameras named in neither are served round-robin; the empty policy serves all that way.
    """

    always: frozenset[str] = frozenset()
    min_hz: Mapping[str, float] = field(default_factory=dict)

    @property
    def cameras(self) -> frozenset[str]:
        """Every camera the policy names, to check against the process's cameras."""
        return self.always | frozenset(self.min_hz)

    def describe(self, camera: str) -> str:
        """Say a camera's priority the way /diagnostics shows it."""
        if camera in self.always:
            return ALWAYS
        if camera in self.min_hz:
            return f'min {self.min_hz[camera]:g} Hz'
        return 'round-robin'


def _parse_value(camera: str, value: str) -> float | None:
    """Return a camera's minimum rate, or None for `always`; a bad value says the right forms."""
    if value == ALWAYS:
        return None
    try:
        rate = float(value)
    except ValueError:
        rate = math.nan
    if not (math.isfinite(rate) and 0.0 < rate <= MAX_MIN_HZ):
        raise ParameterError(
            f"camera_priorities: {camera}={value!r} is not 'always' or a minimum rate in Hz "
            f'above 0 and at most {MAX_MIN_HZ:g}; {EXAMPLE}')
    return rate


def _parse_entry(entry: str) -> tuple[str, float | None]:
    """Split one `CAMERA=VALUE` entry; each malformed form raises with the form it should have."""
    if '=' not in entry:
        raise ParameterError(
            f"camera_priorities: {entry!r} has no '='; each entry is CAMERA=VALUE, {EXAMPLE}")
    camera, value = (part.strip() for part in entry.split('=', 1))
    if not camera.startswith('/'):
        raise ParameterError(
            f'camera_priorities: camera {camera!r} is not an absolute namespace (it must start '
            f"with '/', as the process's cameras do); {EXAMPLE}")
    if not NAMESPACE.match(camera):
        raise ParameterError(
            f'camera_priorities: camera {camera!r} is not a valid namespace (names of letters, '
            f"digits and '_', each after a '/'); {EXAMPLE}")
    return camera, _parse_value(camera, value)


def parse_camera_priorities(text: str) -> CameraPolicy:
    """
    Read the `camera_priorities` parameter; empty text is no policy (all round-robin).

    Every mistake is an error rather than a silently ignored entry: a camera thought to be
    protected but not would only show itself as dropped frames under overload.
    """
    if not text.strip():
        return CameraPolicy()
    always: set[str] = set()
    min_hz: dict[str, float] = {}
    for entry in text.split(','):
        if not entry.strip():
            raise ParameterError(
                f'camera_priorities: {text!r} has an empty entry (a stray comma); {EXAMPLE}')
        camera, rate = _parse_entry(entry.strip())
        if camera in always or camera in min_hz:
            raise ParameterError(
                f'camera_priorities: camera {camera} is named twice; give each camera one '
                f'value, {EXAMPLE}')
        if rate is None:
            always.add(camera)
        else:
            min_hz[camera] = rate
    return CameraPolicy(frozenset(always), min_hz)


def check_policy_cameras(policy: CameraPolicy, cameras: Collection[str]) -> None:
    """Refuse a policy naming a camera the process does not serve: likely a typo, never meant."""
    unknown = sorted(policy.cameras - set(cameras))
    if unknown:
        raise ParameterError(
            f"camera_priorities names {', '.join(unknown)}, which this process does not serve; "
            f"its cameras are {', '.join(sorted(cameras)) or '(none)'}")


@dataclass
class _Waiter:
    """One request thread waiting for a slot; `seq` keeps arrival order among equals."""

    camera: str
    has_frame: Callable[[], bool] | None
    seq: int

    def ready(self) -> bool:
        """Whether a slot given now would carry a frame (no check given: assume it would)."""
        return self.has_frame is None or self.has_frame()


class RequestGate:
    """
    At most `slots` requests in flight across the process, granted by a `CameraPolicy`.

    Every method takes the one lock; `has_frame` callbacks are called under it, so they must
    be quick, must not raise and must not call back into the gate.
    """

    def __init__(self, slots: int, policy: CameraPolicy,
                 clock: Callable[[], float] = time.monotonic) -> None:
        """Hold `slots` requests at most; `clock` is injectable so tests need no sleeps."""
        if slots < 1:
            raise ValueError(f'RequestGate needs at least one slot, not {slots}')
        self._slots = slots
        self._policy = policy
        self._clock = clock
        self._started = clock()
        self._condition = threading.Condition()
        self._closed = False
        self._seq = 0
        self._grants = 0
        self._waiters: list[_Waiter] = []
        self._in_flight: dict[str, int] = {}
        self._served: dict[str, deque[float]] = {}
        self._served_total: dict[str, int] = {}
        self._last_grant: dict[str, int] = {}
        self._waited: dict[str, int] = {}

    def wait_turn(self, camera: str, has_frame: Callable[[], bool] | None = None) -> bool:
        """
        Block until `camera` may send one request; False once the gate is closed.

        `has_frame` (the camera's slot holds a frame) keeps a slot from going to a camera with
        nothing to send; whoever fills that slot calls `frame_arrived` so waiters look again.
        """
        with self._condition:
            self._seq += 1
            me = _Waiter(camera, has_frame, self._seq)
            self._waiters.append(me)
            try:
                while not self._closed:
                    if sum(self._in_flight.values()) < self._slots and self._next() is me:
                        self._grant(me)
                        return True
                    self._condition.wait()
                return False
            finally:
                self._waiters.remove(me)
                self._condition.notify_all()

    def wait_batch(self, ready: Callable[[], list[str] | None],
                   most: int) -> list[str] | None:
        """
        Block until a slot is free and a camera has a frame; return the cameras granted.

        The way of a process's batched requests, where one request carries several cameras,
        each holding a slot: the free slots go to the cameras `ready` names, in the policy's
        order, at most `most`; each ready camera passed over waited once more. None once the
        gate is closed or `ready` says None (its caller stops); call `frame_arrived` to make
        it look. Call `done` for each granted camera once its request is answered.
        """
        with self._condition:
            while not self._closed:
                free = self._slots - sum(self._in_flight.values())
                cameras = ready()
                if cameras is None:
                    return None
                if cameras and free > 0:
                    now = self._clock()
                    ranked = sorted(cameras, key=lambda camera: self._rank(camera, now))
                    chosen = ranked[:min(free, most)]
                    for camera in ranked[len(chosen):]:
                        self._waited[camera] = self._waited.get(camera, 0) + 1
                    for camera in chosen:
                        self._take_slot(camera)
                    return chosen
                self._condition.wait()
            return None

    def done(self, camera: str) -> None:
        """Free a finished request's slot and count it towards the camera's served rate."""
        with self._condition:
            if not self._in_flight.get(camera):
                raise RuntimeError(f'RequestGate.done({camera!r}) without a granted turn')
            self._in_flight[camera] -= 1
            self._served.setdefault(camera, deque()).append(self._clock())
            self._served_total[camera] = self._served_total.get(camera, 0) + 1
            self._condition.notify_all()

    def frame_arrived(self) -> None:
        """Wake waiters whose `has_frame` said no: a slot got a frame (call without its lock)."""
        with self._condition:
            self._condition.notify_all()

    def close(self) -> None:
        """Release every waiter with False, now and later: the process is stopping."""
        with self._condition:
            self._closed = True
            self._condition.notify_all()

    def order(self, cameras: Iterable[str]) -> list[str]:
        """Return `cameras` in the order a free slot would go to them now, first first."""
        with self._condition:
            now = self._clock()
            return sorted(cameras, key=lambda camera: self._rank(camera, now))

    def waiting(self) -> list[str]:
        """Return the cameras with a request thread waiting for a slot now, sorted."""
        with self._condition:
            return sorted({waiter.camera for waiter in self._waiters})

    def figures(self, camera: str) -> dict[str, str]:
        """Return a camera's priority, requests served (all, last window's rate), waits, minimum."""
        with self._condition:
            now = self._clock()
            held = self._held(camera, now)
            return {
                'priority': self._policy.describe(camera),
                'served': str(self._served_total.get(camera, 0)),
                'served_hz': f'{self._served_hz(camera, now):.1f}',
                'waited': str(self._waited.get(camera, 0)),
                'min_rate_held': 'n/a' if held is None else ('yes' if held else 'no'),
            }

    def unheld(self) -> list[str]:
        """Return the cameras whose minimum rate is not held now, for a /diagnostics warning."""
        with self._condition:
            now = self._clock()
            return sorted(camera for camera in self._policy.min_hz
                          if self._held(camera, now) is False)

    def _next(self) -> _Waiter | None:
        """Return the ready waiter a free slot goes to: best-ranked camera, then earliest."""
        now = self._clock()
        ranks: dict[str, tuple[int, float, int]] = {}
        best: tuple[tuple[int, float, int], int] | None = None
        chosen = None
        for waiter in self._waiters:
            if not waiter.ready():
                continue
            rank = ranks.setdefault(waiter.camera, self._rank(waiter.camera, now))
            if best is None or (rank, waiter.seq) < best:
                best, chosen = (rank, waiter.seq), waiter
        return chosen

    def _grant(self, winner: _Waiter) -> None:
        """Take a slot for `winner`; each other camera with a ready waiter waited once more."""
        passed_over = {waiter.camera for waiter in self._waiters
                       if waiter.camera != winner.camera and waiter.ready()}
        for camera in passed_over:
            self._waited[camera] = self._waited.get(camera, 0) + 1
        self._take_slot(winner.camera)

    def _take_slot(self, camera: str) -> None:
        self._in_flight[camera] = self._in_flight.get(camera, 0) + 1
        self._grants += 1
        self._last_grant[camera] = self._grants

    def _rank(self, camera: str, now: float) -> tuple[int, float, int]:
        """
        Return a camera's sort key: (tier, how far behind, last grant); lower goes first.

        Requests in flight count towards the minimum rate here, so a camera that is behind
        does not take every free slot before its first reply is back.
        """
        last = self._last_grant.get(camera, -1)
        if camera in self._policy.always:
            return (0, 0.0, last)
        minimum = self._policy.min_hz.get(camera)
        if minimum is not None:
            rate = self._served_hz(camera, now, self._in_flight.get(camera, 0))
            if rate < minimum:
                return (1, rate / minimum, last)
        return (2, 0.0, last)

    def _served_hz(self, camera: str, now: float, extra: int = 0) -> float:
        """
        Return the camera's served rate over the last window, plus `extra` requests.

        In the gate's first window the count is over the time since it started, so a camera
        served at its rate from the start is not reported behind for that first second.
        """
        served = self._served.get(camera)
        while served and served[0] <= now - WINDOW_S:
            served.popleft()
        count = (len(served) if served else 0) + extra
        span = min(WINDOW_S, max(now - self._started, 1e-3))
        return count / span

    def _held(self, camera: str, now: float) -> bool | None:
        """Whether a camera's minimum rate is held now; None for a camera without one."""
        minimum = self._policy.min_hz.get(camera)
        return None if minimum is None else self._served_hz(camera, now) >= minimum
