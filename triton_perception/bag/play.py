"""
Publish a rosbag2's messages with rclpy at their recorded timing (`ros2 bag play`) or in lockstep.

Records are published as their raw CDR bytes (rclpy's ``Publisher.publish`` accepts
``bytes``), so nothing is deserialised and the subscribers get exactly what was recorded.
Each message's send time is computed from its bag time and the start of the pass, never
from the previous message, so scheduling errors do not accumulate. In lockstep the timing is
set aside: each frame of one topic goes out only once every node under test has answered the
one before, so that no frame is dropped for the machine's speed and a replay's results do not
depend on its load.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
import threading
import time
from typing import Callable

from rclpy.duration import Duration
from rclpy.node import Node
from rclpy.publisher import Publisher
from rosbags.interfaces import Connection
from rosbags.rosbag2 import Reader, ReaderError

from triton_perception.bag.bag_format import BagError, header_stamp_ns, Progress
from triton_perception.bag.ros_endpoints import message_class, qos_profile

PROGRESS_INTERVAL_S = 2.0
ANSWER_POLL_S = 0.002
# (frame number from 1, the frame's header stamp in ns) -> the nodes that have not answered it.
Unanswered = Callable[[int, int], list[str]]


@dataclass(frozen=True)
class Lockstep:
    """Publish each message of `topic` only once `unanswered` says every node answered it."""

    topic: str
    unanswered: Unanswered
    timeout_s: float = 120.0


# rclpy has no waitable for "a subscription matched"; this is the polling period of that check.
MATCH_POLL_S = 0.01


@dataclass(frozen=True)
class PlaySummary:
    """Counts, and how late messages went out against their scheduled time."""

    published: int
    per_topic: dict[str, int]
    passes: int  # complete passes through the bag; more than one only with loop
    stopped: bool  # stop_event ended playback early
    wall_s: float
    lateness_mean_ms: float
    lateness_max_ms: float


def _check_timing(rate: float, start_offset_s: float) -> None:
    """Refuse a rate or a start offset no playback can have."""
    if not rate > 0:
        raise BagError(f'rate must be positive, got {rate}')
    if start_offset_s < 0:
        raise BagError(f'start_offset_s must not be negative, got {start_offset_s}')


def play_bag(
    bag: Path,
    node: Node,
    *,
    rate: float = 1.0,
    loop: bool = False,
    start_offset_s: float = 0.0,
    topics: list[str] | None = None,
    qos_reliability: str = 'reliable',
    qos_depth: int = 10,
    wait_for_subscribers: int = 0,
    subscribers_matched: Callable[[], bool] | None = None,
    wait_timeout_s: float = 10.0,
    progress: Progress | None = None,
    stop_event: threading.Event | None = None,
    lockstep: Lockstep | None = None,
) -> PlaySummary:
    """
    Play ``bag`` (all topics, or ``topics``) through publishers created on ``node``.

    ``rate`` scales the recorded timing (2.0 plays twice as fast). With
    ``wait_for_subscribers`` > 0, playback starts only once every publisher has matched that
    many subscriptions (BagError after ``wait_timeout_s``), so no early frame is lost to
    discovery; ``subscribers_matched``, when given, must also say that the subscribers have
    matched the publishers from their side (a volatile reader misses what a writer sends before
    the reader matched it, even once the writer has matched the reader). Reliable publishers
    are given up to ``wait_timeout_s`` at the end for every message to be acknowledged. The
    node needs no spinning. Setting ``stop_event`` ends playback early (a looping playback ends
    only that way). With ``lockstep``, ``rate`` is ignored: each message of its topic is
    published once every node answered the previous one (BagError naming the node and the
    frame's stamp when one does not within its timeout).
    """
    _check_timing(rate, start_offset_s)
    qos = qos_profile(qos_reliability, qos_depth)
    stop = stop_event or threading.Event()
    with _open_bag(bag) as reader:
        selected = _select_connections(reader, topics)
        start_ns = _start_ns(reader, start_offset_s, bag)
        types = {c.topic: c.msgtype for c in selected}
        # Messages of the classes the bag names (rclpy's message protocol asks nothing of them).
        publishers: dict[str, Publisher[object]] = {
            topic: node.create_publisher(message_class(msgtype), topic, qos)
            for topic, msgtype in types.items()}
        try:
            if wait_for_subscribers > 0:
                _wait_for_subscribers(publishers, wait_for_subscribers, subscribers_matched,
                                      wait_timeout_s, stop, progress)
            summary = _publish(reader, selected, publishers, start_ns, rate, loop, stop, progress,
                               lockstep)
            if qos_reliability == 'reliable':
                _wait_for_acknowledgements(publishers, wait_timeout_s, progress)
        finally:
            for publisher in publishers.values():
                node.destroy_publisher(publisher)
    if progress:
        progress(f'published {summary.published} messages in {summary.wall_s:.1f} s; lateness '
                 f'mean {summary.lateness_mean_ms:.2f} ms, max {summary.lateness_max_ms:.2f} ms')
    return summary


def _open_bag(bag: Path) -> Reader:
    """Return a Reader of `bag` (not yet open); BagError if it is no bag."""
    try:
        return Reader(Path(bag))
    except (FileNotFoundError, ReaderError) as error:
        raise BagError(f'cannot open bag {bag}: {error}') from None


def _start_ns(reader: Reader, start_offset_s: float, bag: Path) -> int:
    """Return the bag time playback starts at; BagError if the offset is past the bag's end."""
    start_ns: int = reader.start_time + round(start_offset_s * 1e9)
    if start_ns > reader.end_time:
        raise BagError(f'start offset {start_offset_s} s is past the end of {bag} '
                       f'({(reader.end_time - reader.start_time) / 1e9:.3f} s long)')
    return start_ns


def _select_connections(reader: Reader, topics: list[str] | None) -> list[Connection]:
    """
    Return the connections to play.

    Every connection must be CDR and each topic must have one type.
    """
    connections = reader.connections
    if topics is not None:
        missing = sorted(set(topics) - {c.topic for c in connections})
        if missing:
            available = ', '.join(sorted({c.topic for c in connections})) or 'none'
            raise BagError(f"topics not in the bag: {', '.join(missing)} (bag has: {available})")
        connections = [c for c in connections if c.topic in topics]
    if not connections:
        raise BagError('the bag has no topics to play')
    types: dict[str, str] = {}
    for connection in connections:
        serialization = getattr(connection.ext, 'serialization_format', 'cdr')
        if serialization != 'cdr':
            raise BagError(f'{connection.topic} is serialised as {serialization!r}; '
                           'rclpy can only publish cdr')
        if types.setdefault(connection.topic, connection.msgtype) != connection.msgtype:
            raise BagError(f'{connection.topic} carries both {types[connection.topic]} and '
                           f'{connection.msgtype}; play one type with the topics argument')
    return connections


def _wait_for_subscribers(publishers: dict[str, Publisher[object]], count: int,
                          subscribers_matched: Callable[[], bool] | None, timeout_s: float,
                          stop: threading.Event, progress: Progress | None) -> None:
    if progress:
        progress(f"waiting for {count} subscriber(s) on {', '.join(publishers)}")
    deadline = time.monotonic() + timeout_s
    while not stop.is_set():
        matched = {topic: p.get_subscription_count() for topic, p in publishers.items()}
        if all(n >= count for n in matched.values()) and (
                subscribers_matched is None or subscribers_matched()):
            return
        if time.monotonic() >= deadline:
            short = ', '.join(f'{t} ({n})' for t, n in matched.items() if n < count)
            raise BagError(
                f'fewer than {count} subscriber(s) after {timeout_s} s on: {short}' if short else
                f'the subscribers of {", ".join(publishers)} have not reported seeing the '
                f'publisher after {timeout_s} s')
        stop.wait(MATCH_POLL_S)


def _publish(reader: Reader, connections: list[Connection],
             publishers: dict[str, Publisher[object]], start_ns: int, rate: float, loop: bool,
             stop: threading.Event, progress: Progress | None,
             lockstep: Lockstep | None) -> PlaySummary:
    total = sum(c.msgcount for c in connections)
    span_s = (reader.end_time - start_ns) / 1e9
    per_topic: Counter[str] = Counter()
    lateness_sum_s = lateness_max_s = 0.0
    passes = 0
    stopped = stop.is_set()
    began = time.monotonic()
    next_progress = began + PROGRESS_INTERVAL_S
    while not stopped:
        pass_start = time.monotonic()
        in_pass = 0
        for connection, stamp_ns, raw in reader.messages(connections=connections, start=start_ns):
            target = time.monotonic() if lockstep else (
                pass_start + (stamp_ns - start_ns) / 1e9 / rate)
            delay = target - time.monotonic()
            stopped = stop.wait(delay) if delay > 0 else stop.is_set()
            if stopped:
                break
            lateness_s = max(0.0, time.monotonic() - target)
            message = raw if isinstance(raw, bytes) else bytes(raw)
            publishers[connection.topic].publish(message)
            per_topic[connection.topic] += 1
            if lockstep and connection.topic == lockstep.topic:
                stopped = _wait_for_answers(lockstep, per_topic[connection.topic], message, stop)
                if stopped:
                    break
            in_pass += 1
            lateness_sum_s += lateness_s
            lateness_max_s = max(lateness_max_s, lateness_s)
            now = time.monotonic()
            if progress and now >= next_progress:
                progress(f'{in_pass}/{total} messages' + (f' (pass {passes + 1})' if loop else '')
                         + f', bag time {(stamp_ns - start_ns) / 1e9:.1f}/{span_s:.1f} s')
                next_progress = now + PROGRESS_INTERVAL_S
        else:
            passes += 1
        if not loop or in_pass == 0:
            break
    published = sum(per_topic.values())
    return PlaySummary(
        published=published, per_topic=dict(per_topic), passes=passes, stopped=stopped,
        wall_s=time.monotonic() - began,
        lateness_mean_ms=1e3 * lateness_sum_s / published if published else 0.0,
        lateness_max_ms=1e3 * lateness_max_s)


def _wait_for_answers(lockstep: Lockstep, frame: int, message: bytes,
                      stop: threading.Event) -> bool:
    """Wait until every node answered frame `frame`; return whether playback was stopped."""
    stamp_ns = header_stamp_ns(message)
    if stamp_ns is None:
        raise BagError(f'frame {frame} of {lockstep.topic} is not little-endian CDR with a header')
    deadline = time.monotonic() + lockstep.timeout_s
    while unanswered := lockstep.unanswered(frame, stamp_ns):
        if time.monotonic() >= deadline:
            raise BagError(
                f'{", ".join(unanswered)} did not answer frame {frame} of {lockstep.topic} '
                f'(stamp {stamp_ns // 1_000_000_000}.{stamp_ns % 1_000_000_000:09d}) within '
                f'{lockstep.timeout_s:g} s: no result published and none counted failed or '
                'rejected; see its log')
        if stop.wait(ANSWER_POLL_S):
            return True
    return False


def _wait_for_acknowledgements(publishers: dict[str, Publisher[object]], timeout_s: float,
                               progress: Progress | None) -> None:
    """Destroying a reliable publisher drops samples a subscriber has not acknowledged yet."""
    for topic, publisher in publishers.items():
        if not publisher.wait_for_all_acked(Duration(seconds=timeout_s)) and progress:
            progress(f'{topic}: not every message was acknowledged within {timeout_s} s')
