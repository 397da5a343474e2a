"""
The request gate hands a process's slots out by camera priority; pure Python, no ROS or Triton.

Under overload the gate, not chance, decides whose frame is served: these tests pin the policy
text's forms and errors, the grant order (with an injected clock, so no sleeps) and that the
waiting threads get exactly the grants the order says, and are released on close.
"""
from __future__ import annotations

from collections import Counter
import threading
import time
from typing import Callable

import pytest

from triton_perception.parameters import ParameterError
from triton_perception.serving import (check_policy_cameras, parse_camera_priorities,
                                       RequestGate)
from triton_perception.serving.requests.request_gate import CameraPolicy, EXAMPLE

CAMERAS = ['/front', '/left', '/right', '/rear']
THREAD_WAIT_S = 5.0


class Clock:
    """A clock the test moves by hand, so rate windows are exact."""

    def __init__(self) -> None:
        """Start at 100 s, as a monotonic clock never starts at 0."""
        self.now = 100.0

    def __call__(self) -> float:
        """Return the current time."""
        return self.now


def serve(gate: RequestGate, camera: str, times: int = 1) -> None:
    """Take and finish `times` requests for `camera` while nobody else waits."""
    for _ in range(times):
        assert gate.wait_turn(camera)
        gate.done(camera)


def wait_until(condition: Callable[[], bool]) -> None:
    """Wait (briefly polling) for another thread to reach a state the test can see."""
    deadline = time.monotonic() + THREAD_WAIT_S
    while not condition():
        assert time.monotonic() < deadline, 'threads did not get there in time'
        time.sleep(0.001)


def test_a_policy_reads_always_and_minimum_rates() -> None:
    """Each entry's camera gets its priority; spaces around the parts do not matter."""
    policy = parse_camera_priorities(' /front = always, /left=10,/right=12.5 ')
    assert policy.always == {'/front'}
    assert dict(policy.min_hz) == {'/left': 10.0, '/right': 12.5}
    assert [policy.describe(camera) for camera in CAMERAS] == [
        'always', 'min 10 Hz', 'min 12.5 Hz', 'round-robin']


@pytest.mark.parametrize('text', ['', '  '])
def test_empty_text_is_no_policy(text: str) -> None:
    """An empty parameter serves every camera round-robin."""
    assert parse_camera_priorities(text) == CameraPolicy()
    assert not parse_camera_priorities(text).cameras


@pytest.mark.parametrize('text, says', [
    ('/front=always,/front=5', 'camera /front is named twice'),
    ('/front=5,/front=always', 'camera /front is named twice'),
    ('/front=fast', "/front='fast' is not 'always' or a minimum rate in Hz"),
    ('/front=0', "/front='0' is not 'always'"),
    ('/front=-2', "/front='-2' is not 'always'"),
    ('/front=1001', 'at most 1000'),
    ('/front=nan', "/front='nan' is not 'always'"),
    ('/front=', "/front='' is not 'always'"),
    ('/front', "'/front' has no '='; each entry is CAMERA=VALUE"),
    ('front=always', "camera 'front' is not an absolute namespace"),
    ('=always', "camera '' is not an absolute namespace"),
    ('/fr ont=always', "camera '/fr ont' is not a valid namespace"),
    ('/front/=always', "camera '/front/' is not a valid namespace"),
    ('/front=always,', 'has an empty entry'),
])
def test_each_malformed_policy_says_what_and_the_right_form(text: str, says: str) -> None:
    """A mistake raises ParameterError (a ValueError) naming it and showing a good example."""
    with pytest.raises(ParameterError) as raised:
        parse_camera_priorities(text)
    assert isinstance(raised.value, ValueError)
    assert says in str(raised.value)
    assert EXAMPLE in str(raised.value)


def test_a_policy_camera_the_process_lacks_is_refused() -> None:
    """The error names the unknown cameras and the ones the process has."""
    policy = parse_camera_priorities('/front=always,/lef=10,/back=5')
    check_policy_cameras(parse_camera_priorities('/front=always'), CAMERAS)
    with pytest.raises(ParameterError, match=r'names /back, /lef, which this process does not '
                                             r'serve; its cameras are /front, /left, /rear, '
                                             r'/right'):
        check_policy_cameras(policy, CAMERAS)


def test_an_always_camera_goes_before_round_robin_ones() -> None:
    """However often it was served, an `always` camera is first among cameras without a rate."""
    gate = RequestGate(1, parse_camera_priorities('/front=always'), Clock())
    assert gate.order(['/left', '/front', '/right'])[0] == '/front'
    serve(gate, '/front', 50)
    assert gate.order(['/left', '/front', '/right'])[0] == '/front'


def test_a_camera_behind_its_minimum_rate_jumps_ahead() -> None:
    """
    While its last second's rate is below its minimum, a camera goes before round-robin ones.

    `always` cameras still go first: the minimum is held with what they leave.
    """
    clock = Clock()
    gate = RequestGate(1, parse_camera_priorities('/front=always,/left=10'), clock)
    assert gate.order(['/right', '/left', '/front']) == ['/front', '/left', '/right']
    for _ in range(10):
        clock.now += 0.05
        serve(gate, '/left')
    # Held: back to round-robin, where /right (never served) is ahead of /left.
    assert gate.order(['/front', '/left', '/right']) == ['/front', '/right', '/left']
    clock.now += 0.6
    assert gate.order(['/right', '/left', '/front']) == ['/front', '/left', '/right']


def test_the_camera_most_behind_its_minimum_goes_first() -> None:
    """Of two cameras behind, the one with the lower share of its minimum is served first."""
    clock = Clock()
    gate = RequestGate(1, parse_camera_priorities('/left=10,/right=20'), clock)
    clock.now += 1.0
    serve(gate, '/left', 5)
    serve(gate, '/right', 8)
    assert gate.order(['/left', '/right']) == ['/right', '/left']
    serve(gate, '/right', 3)
    assert gate.order(['/left', '/right']) == ['/left', '/right']


@pytest.mark.parametrize('text', ['', '/front=always,/rear=5'])
def test_round_robin_gives_equal_shares(text: str) -> None:
    """Cameras without a priority share the grants equally, least recently served first."""
    clock = Clock()
    gate = RequestGate(1, parse_camera_priorities(text), clock)
    equals = ['/left', '/right', '/top']
    grants: Counter[str] = Counter()
    for _ in range(301):
        clock.now += 0.01
        camera = gate.order(equals)[0]
        serve(gate, camera)
        grants[camera] += 1
    assert max(grants.values()) - min(grants.values()) <= 1, grants
    assert sum(grants.values()) == 301


def test_waiting_threads_are_granted_in_policy_order() -> None:
    """When the slot frees, the waiting `always` camera goes first though it came last."""
    gate = RequestGate(1, parse_camera_priorities('/front=always'), Clock())
    granted: list[str] = []

    def request(camera: str) -> None:
        assert gate.wait_turn(camera)
        granted.append(camera)
        gate.done(camera)

    assert gate.wait_turn('/rear')
    threads = []
    for camera in ['/left', '/right', '/front']:
        threads.append(threading.Thread(target=request, args=(camera,)))
        threads[-1].start()
        wait_until(lambda: camera in gate.waiting())
    gate.done('/rear')
    for thread in threads:
        thread.join(THREAD_WAIT_S)
    assert granted == ['/front', '/left', '/right']
    assert [gate.figures(camera)['waited'] for camera in granted] == ['0', '1', '2']


def test_a_camera_without_a_frame_does_not_take_the_slot() -> None:
    """A waiter whose slot is empty lets others go; `frame_arrived` lets it take its turn."""
    gate = RequestGate(1, parse_camera_priorities('/front=always'), Clock())
    has_frame = threading.Event()
    front_granted = threading.Event()

    def front() -> None:
        assert gate.wait_turn('/front', has_frame.is_set)
        front_granted.set()

    thread = threading.Thread(target=front)
    thread.start()
    wait_until(lambda: gate.waiting() == ['/front'])
    serve(gate, '/left', 3)
    assert not front_granted.is_set()
    has_frame.set()
    gate.frame_arrived()
    thread.join(THREAD_WAIT_S)
    assert front_granted.is_set()
    gate.done('/front')


def test_slots_bound_the_requests_in_flight() -> None:
    """With two slots two requests go at once; a third waits until one is done."""
    gate = RequestGate(2, CameraPolicy(), Clock())
    assert gate.wait_turn('/left') and gate.wait_turn('/right')
    third = threading.Thread(target=gate.wait_turn, args=('/rear',))
    third.start()
    wait_until(lambda: gate.waiting() == ['/rear'])
    gate.done('/left')
    third.join(THREAD_WAIT_S)
    assert not third.is_alive()
    with pytest.raises(RuntimeError, match='without a granted turn'):
        gate.done('/left')
    with pytest.raises(ValueError, match='at least one slot'):
        RequestGate(0, CameraPolicy())


def test_figures_and_unheld_say_the_served_rate_against_the_minimum() -> None:
    """/diagnostics reads the priority, the last second's rate and whether the minimum holds."""
    clock = Clock()
    gate = RequestGate(1, parse_camera_priorities('/front=always,/left=10'), clock)
    for _ in range(6):
        clock.now += 0.1
        serve(gate, '/left')
    clock.now += 0.4
    assert gate.figures('/left') == {'priority': 'min 10 Hz', 'served': '6', 'served_hz': '6.0',
                                     'waited': '0', 'min_rate_held': 'no'}
    assert gate.unheld() == ['/left']
    serve(gate, '/left', 4)
    assert gate.figures('/left')['min_rate_held'] == 'yes'
    assert gate.unheld() == []
    assert gate.figures('/front')['priority'] == 'always'
    assert gate.figures('/front')['min_rate_held'] == 'n/a'
    assert gate.figures('/rear')['priority'] == 'round-robin'


def test_four_threads_share_one_slot_by_policy() -> None:
    """Real threads for ~0.3 s: one request at a time, `always` gets most, the counts add up."""
    gate = RequestGate(1, parse_camera_priorities('/front=always'))
    grants: Counter[str] = Counter()
    in_flight = [0, 0]
    count_lock = threading.Lock()
    deadline = time.monotonic() + 0.3

    def loop(camera: str) -> None:
        while time.monotonic() < deadline and gate.wait_turn(camera):
            with count_lock:
                in_flight[0] += 1
                in_flight[1] = max(in_flight)
                grants[camera] += 1
            with count_lock:
                in_flight[0] -= 1
            gate.done(camera)

    threads = [threading.Thread(target=loop, args=(camera,)) for camera in CAMERAS]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(THREAD_WAIT_S)
    assert not any(thread.is_alive() for thread in threads)
    assert in_flight == [0, 1]
    assert grants.most_common(1)[0][0] == '/front'
    assert sum(int(gate.figures(camera)['served']) for camera in CAMERAS) == \
        sum(grants.values())
    assert all(int(gate.figures(camera)['served']) == grants[camera] for camera in CAMERAS)


def test_close_releases_every_waiter_with_false() -> None:
    """Stopping the process does not hang on request threads waiting for a slot."""
    gate = RequestGate(1, CameraPolicy(), Clock())
    assert gate.wait_turn('/front')
    results: list[bool] = []
    threads = [threading.Thread(target=lambda camera=camera: results.append(
        gate.wait_turn(camera))) for camera in CAMERAS[1:]]
    for thread in threads:
        thread.start()
    wait_until(lambda: len(gate.waiting()) == 3)
    started = time.monotonic()
    gate.close()
    for thread in threads:
        thread.join(1.0)
    assert time.monotonic() - started < 1.0
    assert results == [False, False, False]
    assert gate.wait_turn('/front') is False


def test_a_batch_takes_the_free_slots_in_policy_order() -> None:
    """
    A batched request holds one slot per camera: the free slots go to ready cameras by policy.

    With two slots and four ready cameras the `always` one is in every batch and the others
    take turns; a camera passed over waited once more, and `done` frees each camera's slot.
    """
    gate = RequestGate(2, parse_camera_priorities('/front=always'), Clock())
    batches = []
    for _ in range(3):
        granted = gate.wait_batch(lambda: list(CAMERAS), 4)
        assert granted is not None
        batches.append(granted)
        for camera in granted:
            gate.done(camera)
    assert all(batch[0] == '/front' and len(batch) == 2 for batch in batches)
    assert [batch[1] for batch in batches] == ['/left', '/right', '/rear']
    assert gate.figures('/front')['served'] == '3'
    assert gate.figures('/left')['waited'] == '2'


def test_a_batch_waits_for_a_ready_camera_and_ends_when_told() -> None:
    """No camera ready: the batch waits, takes at most `most`, and returns None when stopped."""
    gate = RequestGate(4, CameraPolicy(), Clock())
    ready: list[str] | None = []
    result: list[list[str] | None] = []
    thread = threading.Thread(target=lambda: result.append(gate.wait_batch(lambda: ready, 2)))
    thread.start()
    time.sleep(0.05)
    assert not result, 'granted with no camera ready'
    ready = ['/left', '/right', '/rear']
    gate.frame_arrived()
    thread.join(THREAD_WAIT_S)
    assert result == [['/left', '/right']]
    ready = None
    assert gate.wait_batch(lambda: ready, 2) is None
